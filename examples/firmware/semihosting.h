// ARM semihosting: the debugger (here QEMU with -semihosting-config
// enable=on,target=native) performs file and console operations for the
// program. Each call traps with `bkpt 0xab` and takes as long as the host
// needs, so it is for setup, output and exit, never for the event path.
#ifndef SPOOR_FIRMWARE_SEMIHOSTING_H
#define SPOOR_FIRMWARE_SEMIHOSTING_H

#include <stddef.h>
#include <stdint.h>

namespace semihosting {

// Opens `path` on the host for writing in binary ("wb": created or
// truncated), relative to the debugger's working directory. Returns a
// handle, or -1 on failure.
int open_for_writing(const char* path);

// Writes all `size` bytes. Returns false when the host took fewer.
bool write(int handle, const void* data, size_t size);

// Returns false when the host could not close the file.
bool close(int handle);

// Prints a NUL-terminated string on the debugger's console.
void print(const char* text);

// Prints `label` followed by the decimal `value` and a newline.
void print_number(const char* label, uint64_t value);

// Copies the command line (the program name and QEMU's arg= words,
// separated by spaces) into `buffer`, NUL-terminated. Returns false when
// there is none or it does not fit.
bool command_line(char* buffer, size_t size);

// Ends the program: QEMU exits with `code`.
[[noreturn]] void exit(uint32_t code);

}  // namespace semihosting

#endif  // SPOOR_FIRMWARE_SEMIHOSTING_H
