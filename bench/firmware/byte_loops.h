// memcpy and memset for the bench's bare-metal programs and the core's
// no-libc test (tests/core/freestanding_main.cpp), the only libc the core
// may use: byte loops, so their size is known (and reported apart from the
// core's). Included by exactly one file of each program.
#ifndef SPOOR_BENCH_FIRMWARE_BYTE_LOOPS_H
#define SPOOR_BENCH_FIRMWARE_BYTE_LOOPS_H

#include <stddef.h>

extern "C" {
void* memcpy(void* dst, const void* src, size_t n) {
  auto* d = static_cast<unsigned char*>(dst);
  const auto* s = static_cast<const unsigned char*>(src);
  while (n--) *d++ = *s++;
  return dst;
}
void* memset(void* dst, int c, size_t n) {
  auto* d = static_cast<unsigned char*>(dst);
  while (n--) *d++ = static_cast<unsigned char>(c);
  return dst;
}
}

#endif  // SPOOR_BENCH_FIRMWARE_BYTE_LOOPS_H
