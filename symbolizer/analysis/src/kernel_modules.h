// What the loader does with Spoor.Kernel's Mmap records and CpuSamples:
// executable file mappings become the image's modules (when the preload's
// ModuleLoad has not described them), and each sample's registers and
// stack copy are unwound (spoor::unwind) into a stack of the model.
#ifndef SPOOR_ANALYSIS_KERNEL_MODULES_H
#define SPOOR_ANALYSIS_KERNEL_MODULES_H

#include <span>
#include <string>
#include <unordered_map>
#include <vector>

#include "spoor/analysis/known_events.h"
#include "spoor/analysis/load.h"
#include "spoor/analysis/model.h"
#include "module_paths.h"
#include "spoor/unwind/mapping_bias.h"
#include "spoor/unwind/process_unwinder.h"

namespace spoor::analysis {

// A CpuSample's user stack copy: `stack`, then its continuations
// stack_2..stack_4 when the copy was longer than one Blob holds (joined
// into `joined`, which the result then points into; else `stack` itself).
std::span<const uint8_t> sample_stack(const reader::Event& e, const KnownEvent& k, std::vector<uint8_t>& joined);

class KernelModules {
 public:
  // `paths` spells each module file one way (module_paths.h); it must
  // outlive this object.
  KernelModules(TraceModel& model, const LoadOptions& options, ModulePaths& paths);

  // An executable file mapping of `image` as a module (bias from the file's
  // program headers); the [vdso] as a module too, with the trace's image of
  // it (set_vdso) where it has one; any other executable one without a file
  // (anonymous JIT code) as a region the unwinder names; non-executable,
  // unreadable and already known mappings change nothing.
  void mmap(const reader::Event& e, const KnownEvent& k, ImageIndex image);

  // The vDSO's bytes (a VdsoImage event): the [vdso] mappings met before
  // it (the exec's, which the kernel reports first) and after it become
  // modules with this image.
  void set_vdso(std::vector<uint8_t> image);

  // The sample's stack (model.stacks), unwound with `image`'s modules;
  // identical stacks of one image share a key. 0 when the sample has no pc.
  // Cost: one DWARF walk (a few microseconds per frame, bench/RESULTS.md).
  StackKey unwind(const reader::Event& e, const KnownEvent& k, ImageIndex image);

  // The unwinders' module problems into model.kernel_unwind, once per file
  // and message (each image's unwinder reports its own copy of a module).
  void finish();

 private:
  struct ImageUnwinder {
    unwind::ProcessUnwinder unwinder;
    size_t modules_added = 0;
    std::unordered_map<std::string, uint32_t> ids;  // stack bytes -> ID
  };

  ImageUnwinder& image_unwinder(ImageIndex image);
  unwind::ProcessUnwinder& unwinder_of(ImageIndex image);

  TraceModel& m_;
  ModulePaths& paths_;
  unwind::UnwindOptions unwind_options_;
  unwind::MappingBias biases_;
  std::unordered_map<ImageIndex, ImageUnwinder> unwinders_;
  std::vector<uint8_t> stack_;  // a sample's stack joined from its Blobs (sample_stack)
  std::vector<uint8_t> vdso_;   // the trace's VdsoImage; empty without one
  struct VdsoMapping {
    ImageIndex image;
    uint64_t start, length;
    int64_t ns;
  };
  std::vector<VdsoMapping> vdso_mappings_;  // met before the VdsoImage
  void add_vdso(const VdsoMapping& m);
};

}  // namespace spoor::analysis

#endif  // SPOOR_ANALYSIS_KERNEL_MODULES_H
