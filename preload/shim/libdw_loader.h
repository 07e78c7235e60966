// libdw and libelf, loaded when the first unwind rule the recording's
// store lacks needs them, not with the shim. Most processes of a recording
// find every rule they need in the store (each `cat` of a shell loop after
// the first): loading libdw, libelf, libz and libbz2 cost each of them
// ~0.5 ms of its start in page faults of loading and relocating, and more
// at its exit, where their finalizers' pages fault in (bench/RESULTS.md).
//
// Entering the dynamic loader from inside a hook is safe only where the
// thread is not inside the loader already (ld.so calls malloc mid-dlopen)
// nor in a signal handler that may have interrupted it, and where no
// other thread can hold its lock while waiting for this one. So a rule
// that needs libdw before it is loaded only asks for it (the capture goes
// to libunwind); the load happens after a capture whose whole stack
// libunwind walked and found free of the loader and of signal frames, in
// a process that has started no thread, or in pthread_create before the
// first one starts.
#ifndef SPOOR_PRELOAD_LIBDW_LOADER_H
#define SPOOR_PRELOAD_LIBDW_LOADER_H

#include <elfutils/libdw.h>
#include <gelf.h>

namespace spoor::preload {

// The functions of libdw and libelf the unwind rules use.
struct LibDw {
  decltype(&::elf_begin) elf_begin;
  decltype(&::elf_cntl) elf_cntl;
  decltype(&::elf_end) elf_end;
  decltype(&::elf_getdata_rawchunk) elf_getdata_rawchunk;
  decltype(&::elf_getphdrnum) elf_getphdrnum;
  decltype(&::gelf_getnote) gelf_getnote;
  decltype(&::gelf_getphdr) gelf_getphdr;
  decltype(&::dwarf_getcfi_elf) dwarf_getcfi_elf;
  decltype(&::dwarf_cfi_end) dwarf_cfi_end;
  decltype(&::dwarf_cfi_addrframe) dwarf_cfi_addrframe;
  decltype(&::dwarf_frame_info) dwarf_frame_info;
  decltype(&::dwarf_frame_cfa) dwarf_frame_cfa;
  decltype(&::dwarf_frame_register) dwarf_frame_register;
};

// Resolves the real dlopen and notes the loader's span. At attach, in the
// shim's constructor. `loaded` runs after each load (the shim describes
// the new modules from its next hook).
void init_libdw_loader(void (*loaded)() = nullptr);

// The functions once loaded (elf_version done); null before, or when
// libdw could not be loaded (the captures then stay with libunwind).
const LibDw* libdw();

// Whether the process's address-space and data limits (ulimit -v, -d;
// none by default) leave room for libdw: 64 MiB beyond what it maps now.
// glibc allocates a dlopen'd library's thread-local data on its first use
// in each thread and aborts the process when that fails ("cannot allocate
// memory for thread-local data"); libelf has such data, and libdw maps
// module files. Near such a limit (which the shim's rings count against)
// libdw is neither loaded nor used, and the captures stay with libunwind.
// Two prlimit calls, and a read of /proc/self/statm under a limit.
bool memory_has_room_for_libdw();

// A rule needed libdw before it was loaded. Cheap; any context.
void want_libdw();

// After a capture libunwind walked: loads libdw if a rule asked for it
// and this is a moment the loader may be entered from (above).
// `frames[0..count)` is the walk, `complete` whether it reached the
// stack's end; a walk cut at its frame limit hides frames, so the stack
// is walked again to its end first (a few dozen times at most a process).
// True when it loaded libdw now.
bool load_libdw_after_walk(void* const* frames, int count, bool complete);

// In pthread_create, before the process's first other thread exists:
// loads libdw, since with threads running no capture may (another thread
// could hold the loader's lock and wait on this one). Before attach it
// only notes the threads, and init_libdw_loader loads it.
void load_libdw_before_threads();

// Loads libdw now, whatever the context: for tests and benchmarks of the
// rules themselves.
const LibDw* load_libdw_now();

}  // namespace spoor::preload

#endif  // SPOOR_PRELOAD_LIBDW_LOADER_H
