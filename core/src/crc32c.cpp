// CRC-32C with a 16-entry table: small enough for firmware (64 bytes of
// flash), and an SSE4.2 path for hosted x86-64 builds where the drainer
// checksums hundreds of MB/s.
#include "spoor/crc32c.h"

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
__attribute__((target("sse4.2"))) uint32_t crc32c_sse42(uint32_t crc, const unsigned char* p,
                                                        size_t n) {
  uint64_t c = crc;
  while (n >= 8) {
    uint64_t v;
    __builtin_memcpy(&v, p, 8);
    c = __builtin_ia32_crc32di(c, v);
    p += 8;
    n -= 8;
  }
  uint32_t c32 = static_cast<uint32_t>(c);
  while (n--) c32 = __builtin_ia32_crc32qi(c32, *p++);
  return c32;
}
#define SPOOR_HAVE_SSE42_CRC 1
#endif

}  // namespace

uint32_t crc32c(uint32_t crc, const void* data, size_t size) {
  const auto* p = static_cast<const unsigned char*>(data);
  crc = ~crc;
#ifdef SPOOR_HAVE_SSE42_CRC
  // __builtin_cpu_supports reads a word libgcc fills in before main; a
  // bare-metal x86 build without libgcc's cpu model defines SPOOR_NO_SSE42.
  if (__builtin_cpu_supports("sse4.2")) return ~crc32c_sse42(crc, p, size);
#endif
  return ~crc32c_portable(crc, p, size);
}

}  // namespace spoor
