// io_uring rings a program drives with its own system calls, through
// libc's syscall() (fio's engine, Rust's io-uring crate and the runtimes
// on it): set up with io_uring_setup, mapped with mmap, fed and reaped
// with io_uring_enter (uring_raw.cpp). syscall_hook.cpp hands the three
// io_uring system calls here; map_hooks.cpp hands the mappings of their
// descriptors.
#ifndef SPOOR_PRELOAD_URING_RAW_H
#define SPOOR_PRELOAD_URING_RAW_H

#include <atomic>
#include <cstddef>

namespace spoor::preload {

// Set while this thread is inside a liburing call the shim follows
// (uring_hooks.cpp): a system call liburing makes through syscall() is
// that call's, not one to record again.
extern constinit thread_local bool t_in_ring_call __attribute__((tls_model("initial-exec")));

// Set once the program has set up a ring through syscall(): until then the
// mmap and munmap hooks pay one load and a branch for this.
extern std::atomic<bool> g_raw_rings_seen;


// After a mapping of `fd` at `offset` succeeded: one of a followed ring's
// regions when `fd` is its descriptor.
void note_ring_mapping(int fd, long long offset, const void* address, size_t size);

// Before [address, address + size) is unmapped: a followed ring's last
// completions are read while its memory is there, and its regions there
// are forgotten.
void before_ring_unmap(const void* address, size_t size);

}  // namespace spoor::preload

// io_uring_setup, io_uring_enter or io_uring_register through syscall():
// made, and recorded. Returns what syscall() returns (-1 and errno on
// failure). syscall_hook.cpp's syscall() jumps here with its own arguments
// (so this is the frame right below the program's call: stacks skip it).
extern "C" __attribute__((visibility("hidden"))) long spoor_ring_system_call(long number, long a1, long a2,
                                                                           long a3, long a4, long a5, long a6);

#endif  // SPOOR_PRELOAD_URING_RAW_H
