// Semihosting calls on ARMv7-M: operation number in r0, a pointer to the
// parameter block in r1, `bkpt 0xab`, the result in r0.
#include "semihosting.h"

namespace semihosting {
namespace {

enum Operation : uint32_t {
  kSysOpen = 0x01,
  kSysClose = 0x02,
  kSysWrite0 = 0x04,
  kSysWrite = 0x05,
  kSysGetCmdline = 0x15,
  kSysExitExtended = 0x20,
};
constexpr uint32_t kOpenModeWriteBinary = 6;   // "wb" in the SYS_OPEN mode table
constexpr uint32_t kApplicationExit = 0x20026;  // ADP_Stopped_ApplicationExit

int32_t call(uint32_t operation, const void* block) {
  register uint32_t r0 __asm__("r0") = operation;
  register const void* r1 __asm__("r1") = block;
  // "memory": the host reads the block and may write the buffers it names.
  __asm__ volatile("bkpt 0xab" : "+r"(r0) : "r"(r1) : "memory");
  return static_cast<int32_t>(r0);
}

size_t length(const char* s) {
  size_t n = 0;
  while (s[n] != '\0') ++n;
  return n;
}

}  // namespace

int open_for_writing(const char* path) {
  const uint32_t block[3] = {reinterpret_cast<uint32_t>(path), kOpenModeWriteBinary,
                             static_cast<uint32_t>(length(path))};
  return call(kSysOpen, block);
}

bool write(int handle, const void* data, size_t size) {
  const uint32_t block[3] = {static_cast<uint32_t>(handle), reinterpret_cast<uint32_t>(data),
                             static_cast<uint32_t>(size)};
  return call(kSysWrite, block) == 0;  // the result is the count NOT written
}

bool close(int handle) {
  const uint32_t block[1] = {static_cast<uint32_t>(handle)};
  return call(kSysClose, block) == 0;
}

void print(const char* text) { call(kSysWrite0, text); }

void print_number(const char* label, uint64_t value) {
  char digits[21];
  size_t n = 0;
  do {
    digits[n++] = static_cast<char>('0' + value % 10);
    value /= 10;
  } while (value != 0);
  char line[96];
  size_t used = 0;
  for (const char* p = label; *p != '\0' && used < sizeof line - 23; ++p) line[used++] = *p;
  while (n > 0) line[used++] = digits[--n];
  line[used++] = '\n';
  line[used] = '\0';
  print(line);
}

bool command_line(char* buffer, size_t size) {
  uint32_t block[2] = {reinterpret_cast<uint32_t>(buffer), static_cast<uint32_t>(size)};
  return call(kSysGetCmdline, block) == 0;
}

void exit(uint32_t code) {
  const uint32_t block[2] = {kApplicationExit, code};
  call(kSysExitExtended, block);
  for (;;) {
  }
}

}  // namespace semihosting
