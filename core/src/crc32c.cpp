// CRC-32C with a 16-entry table: small enough for firmware (64 bytes of
// flash), and an SSE4.2 path for hosted x86-64 builds where the drainer
// checksums hundreds of MB/s (tests/core/crc32c_test.cpp holds both to a
// bitwise reference).
#include "spoor/crc32c.h"

#if defined(__x86_64__) && !defined(SPOOR_NO_SSE42)
#include <cpuid.h>
#endif

namespace spoor {
namespace {

// Reflected polynomial 0x82F63B78, one entry per 4-bit nibble.
constexpr uint32_t kNibbleTable[16] = {
    0x00000000, 0x105EC76F, 0x20BD8EDE, 0x30E349B1, 0x417B1DBC, 0x5125DAD3,
    0x61C69362, 0x7198540D, 0x82F63B78, 0x92A8FC17, 0xA24BB5A6, 0xB21572C9,
    0xC38D26C4, 0xD3D3E1AB, 0xE330A81A, 0xF36E6F75};

uint32_t crc32c_portable(uint32_t crc, const unsigned char* p, size_t n) {
  for (size_t i = 0; i < n; ++i) {
    crc ^= p[i];
    crc = (crc >> 4) ^ kNibbleTable[crc & 15];
    crc = (crc >> 4) ^ kNibbleTable[crc & 15];
  }
  return crc;
}

#if defined(__x86_64__) && !defined(SPOOR_NO_SSE42)
// The crc32 instruction takes 3 cycles and starts one per cycle: one chain
// of them moves 8 bytes per 3 cycles (~10 GB/s on the benchmark VM), three
// independent chains over three lanes of a buffer move 24. The lanes'
// CRCs are joined by shifting the first two over the bytes that follow
// them, a multiplication by x^(8n) modulo the polynomial: ~20 GB/s.

// a * b modulo the polynomial, both reflected (x^0 in bit 31). a is one of
// the constants below, never 0. ~32 shifts and xors (~50 ns): once per lane
// joined, against ~600 ns for a lane of 1 KiB.
constexpr uint32_t multiply_mod_poly(uint32_t a, uint32_t b) {
  uint32_t product = 0;
  for (uint32_t m = 1u << 31;; m >>= 1) {
    if (a & m) {
      product ^= b;
      if ((a & (m - 1)) == 0) break;
    }
    b = (b & 1) ? (b >> 1) ^ 0x82F63B78u : b >> 1;
  }
  return product;
}

// x^(8 * bytes) modulo the polynomial: what a CRC state is multiplied by
// when `bytes` zero bytes follow it.
constexpr uint32_t shift_for(size_t bytes) {
  uint32_t result = 1u << 31;  // x^0
  uint32_t power = 1u << 23;   // x^8
  for (; bytes != 0; bytes >>= 1) {
    if (bytes & 1) result = multiply_mod_poly(power, result);
    power = multiply_mod_poly(power, power);
  }
  return result;
}

// Lanes of 8 KiB for packets (tens of KiB), 512 bytes for what is left.
constexpr size_t kLongLane = 8192;
constexpr size_t kShortLane = 512;
constexpr uint32_t kLongShift1 = shift_for(kLongLane), kLongShift2 = shift_for(2 * kLongLane);
constexpr uint32_t kShortShift1 = shift_for(kShortLane), kShortShift2 = shift_for(2 * kShortLane);

__attribute__((target("sse4.2"))) inline uint64_t crc32c_word(uint64_t crc, const unsigned char* p) {
  uint64_t v;
  __builtin_memcpy(&v, p, 8);
  return __builtin_ia32_crc32di(crc, v);
}

// Three chains over [p, p + 3 * lane), joined. lane: a multiple of 8.
__attribute__((target("sse4.2"))) inline uint32_t crc32c_three_lanes(uint32_t crc, const unsigned char* p,
                                                                     size_t lane, uint32_t shift1,
                                                                     uint32_t shift2) {
  uint64_t a = crc, b = 0, c = 0;
  for (size_t i = 0; i < lane; i += 8) {
    a = crc32c_word(a, p + i);
    b = crc32c_word(b, p + lane + i);
    c = crc32c_word(c, p + 2 * lane + i);
  }
  // A state followed by n more bytes = the state times x^(8n), plus the
  // CRC of those bytes from 0 (the CRC is linear in its state).
  return multiply_mod_poly(shift2, static_cast<uint32_t>(a)) ^
         multiply_mod_poly(shift1, static_cast<uint32_t>(b)) ^ static_cast<uint32_t>(c);
}

__attribute__((target("sse4.2"))) uint32_t crc32c_sse42(uint32_t crc, const unsigned char* p,
                                                        size_t n) {
  for (; n >= 3 * kLongLane; p += 3 * kLongLane, n -= 3 * kLongLane)
    crc = crc32c_three_lanes(crc, p, kLongLane, kLongShift1, kLongShift2);
  for (; n >= 3 * kShortLane; p += 3 * kShortLane, n -= 3 * kShortLane)
    crc = crc32c_three_lanes(crc, p, kShortLane, kShortShift1, kShortShift2);
  uint64_t c = crc;
  for (; n >= 8; p += 8, n -= 8) c = crc32c_word(c, p);
  uint32_t c32 = static_cast<uint32_t>(c);
  while (n--) c32 = __builtin_ia32_crc32qi(c32, *p++);
  return c32;
}
#define SPOOR_HAVE_SSE42_CRC 1

// Whether the CPU has SSE4.2's crc32: one cpuid, at the first checksum.
// __builtin_cpu_supports would link libgcc's CPU model, whose constructor
// runs a dozen cpuid instructions and more in every program that loads this
// code (the preload library: every traced process), and on a virtual
// machine each cpuid traps to the hypervisor (~6.6 us on the benchmark VM).
// A race between two first calls only asks twice.
bool cpu_has_sse42() {
  static int known = 0;  // 0: not asked yet, 1: no, 2: yes
  int answer = __atomic_load_n(&known, __ATOMIC_RELAXED);
  if (answer == 0) {
    unsigned eax = 0, ebx = 0, ecx = 0, edx = 0;
    answer = __get_cpuid(1, &eax, &ebx, &ecx, &edx) && (ecx & bit_SSE4_2) != 0 ? 2 : 1;
    __atomic_store_n(&known, answer, __ATOMIC_RELAXED);
  }
  return answer == 2;
}
#endif

}  // namespace

uint32_t crc32c(uint32_t crc, const void* data, size_t size) {
  const auto* p = static_cast<const unsigned char*>(data);
  crc = ~crc;
#ifdef SPOOR_HAVE_SSE42_CRC
  // A bare-metal x86 build without cpuid defines SPOOR_NO_SSE42.
  if (cpu_has_sse42()) return ~crc32c_sse42(crc, p, size);
#endif
  return ~crc32c_portable(crc, p, size);
}

}  // namespace spoor
