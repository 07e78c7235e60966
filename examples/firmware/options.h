// The example's run-time options, read from the semihosting command line
// (QEMU: -semihosting-config enable=on,target=native,arg=firmware.elf,arg=--jobs,arg=100).
#ifndef SPOOR_FIRMWARE_OPTIONS_H
#define SPOOR_FIRMWARE_OPTIONS_H

#include <stdint.h>

namespace firmware {

struct Options {
  const char* out = "firmware.spoor";  // --out FILE: the trace, relative to QEMU's directory
  uint32_t jobs = 0;                   // --jobs N: 0 picks the target's default
  uint32_t buffer_bytes = 0;           // --buffer BYTES: use only part of the static ring memory
  uint32_t packet_bytes = 256;         // --packet BYTES: a power of two >= 256
  uint32_t bench_events = 0;           // --bench N: measure N events' instructions, write no trace
  const char* error = nullptr;         // set when the command line was not understood
};

// Reads the command line. Unknown words set `error`.
Options read_options();

}  // namespace firmware

#endif  // SPOOR_FIRMWARE_OPTIONS_H
