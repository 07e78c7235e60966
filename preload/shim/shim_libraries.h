// The libraries loaded only because the shim needs them (libstdc++,
// libunwind, libdw and their dependencies, for a program that needs none
// of them): what their constructors allocate before attach is the shim's,
// not the program's, and stays out of the trace (pre_attach_log.h).
#ifndef SPOOR_PRELOAD_SHIM_LIBRARIES_H
#define SPOOR_PRELOAD_SHIM_LIBRARIES_H

#include <cstdint>

namespace spoor::preload {

// Whether `pc` lies in libspoor-preload.so itself.
bool in_shim(uintptr_t pc);

// Whether `pc` lies in the shim or in a library that only the shim's
// dependencies (DT_NEEDED, transitively) bring in: not one the program's
// executable needs. Reads the loaded objects' dynamic sections on each
// call (dl_iterate_phdr): for attach, not for hooks.
class ShimOnlyLibraries {
 public:
  ShimOnlyLibraries();
  bool contains(uintptr_t pc) const;

 private:
  static constexpr int kMaxObjects = 256;
  struct Range {
    uintptr_t start, end;
  };
  Range ranges_[kMaxObjects] = {};
  int count_ = 0;
};

}  // namespace spoor::preload

#endif  // SPOOR_PRELOAD_SHIM_LIBRARIES_H
