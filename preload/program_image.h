// Whether a program about to be started can take the shim: read from its
// ELF headers before the exec, by the exec and spawn hooks (shim/) and by
// spoor record for the program it starts (record/).
#ifndef SPOOR_PRELOAD_PROGRAM_IMAGE_H
#define SPOOR_PRELOAD_PROGRAM_IMAGE_H

namespace spoor::preload {

struct ProgramImage {
  // Why the program cannot be traced, "" when it can:
  //   "static binary", "setuid program", "program with file capabilities"
  //   (for a user other than root): the loader ignores LD_PRELOAD;
  //   "AddressSanitizer build", "ThreadSanitizer build", "HWAddressSanitizer
  //   build": linked against a sanitizer's shared runtime, which must be the
  //   first library loaded and intercepts the C library from before any
  //   constructor runs. A preloaded shim comes before it: ASan refuses to
  //   start, TSan crashes in an interceptor not set up yet;
  //   "32-bit x86 program", "aarch64 program"...: another ELF class or
  //   machine, whose loader cannot load the shim and says so on stderr.
  const char* why = "";
  // The program must be started without the shim in LD_PRELOAD (the
  // sanitizer builds, the other machines' programs); a static or setuid
  // program keeps it, for the dynamic programs it starts in turn.
  bool without_preload = false;
};

// Looks at the program an exec of `path` would run. `search_path`: look
// `path` up in $PATH as execvp does. A path that cannot be found or read
// says "" (the exec itself will fail or run what it finds). Uses raw system
// calls and the stack only: safe in a vfork child, and traces nothing.
ProgramImage examine_program_image(const char* path, bool search_path);

// The sanitizer whose shared runtime the ELF file at `path` (a program or
// a library) needs, as in ProgramImage::why ("AddressSanitizer build"...),
// or "" for none or a file that cannot be read.
const char* sanitizer_runtime_needed(const char* path);

}  // namespace spoor::preload

#endif  // SPOOR_PRELOAD_PROGRAM_IMAGE_H
