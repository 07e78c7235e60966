// Stacks of a TraceModel as function frames: every recorded address
// through the symbolizer (spoor/symbolizer/symbolizer.h), inline frames
// expanded, memoized per stack. An address the symbolizer cannot name
// shows as `module+0xoffset` (the offset is the ELF file address), or as
// the raw address when no module holds it: it never disappears. A kernel
// address is named by the trace's KernelSymbol events (module "[kernel]"
// or "[module]"); a stack's unnamed kernel frames are one "[kernel]".
#ifndef SPOOR_ANALYSIS_SYMBOLIZED_STACKS_H
#define SPOOR_ANALYSIS_SYMBOLIZED_STACKS_H

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "spoor/analysis/model.h"
#include "spoor/symbolizer/symbolizer.h"

namespace spoor::analysis {

struct Frame {
  uint64_t address = 0;  // as recorded (a return address for caller frames)
  std::string function;  // demangled; "" when unknown
  std::string file;      // "" when unknown
  uint32_t line = 0;     // 0 when unknown
  bool inlined = false;  // inlined into the next frame
  std::string module;    // path of the module holding the address, "" when none
  uint64_t module_offset = 0;  // address in the module's ELF file (address - bias)
  // Named by an ELF symbol, without a line: the recorded address's offset
  // into it ("deflateInit2_+0x19"), so two calls in one function differ.
  bool has_symbol_offset = false;
  uint64_t symbol_offset = 0;
  // Unnamed, in a module: the start of the function holding the address,
  // from the module's call frame information (Location::code_start).
  bool has_code_start = false;
  uint64_t code_start = 0;

  // "function file.c:12", "function", "libfoo.so+0x1a2b" or "0x7f001234".
  std::string label() const;
  // The function, else the unnamed function holding the address ("function
  // at libfoo.so+0x1a00"), else module+0xoffset, else the address: what a
  // profile aggregates by.
  std::string function_or_location() const;
};

// The one frame that stands for the preloaded library's own innermost
// frames (the time a sample shows spent recording an event).
inline constexpr std::string_view kTracerFrameName = "[spoor: recording the event]";

// The one frame that stands for a stack's kernel frames where the trace
// does not name kernel functions (no KernelSymbol events).
inline constexpr std::string_view kUnnamedKernelFrame = "[kernel]";

// How a stack was captured. A sampled stack's first frame is the
// interrupted instruction itself; every other frame is a return address,
// looked up at address - 1 (the call instruction).
enum class StackUse : uint8_t { call, sample };

class SymbolizedStacks {
 public:
  // `model` must outlive this object.
  SymbolizedStacks(const TraceModel& model, symbolizer::Options options = {});
  SymbolizedStacks(SymbolizedStacks&&) noexcept;
  SymbolizedStacks& operator=(SymbolizedStacks&&) noexcept;
  ~SymbolizedStacks();

  // Innermost first; an inlined function comes before the one it was
  // inlined into. Empty for key 0 or a stack the trace never described.
  // The reference stays valid as long as this object.
  const std::vector<Frame>& frames(StackKey key, StackUse use = StackUse::call);

  // The same frames, not kept: for a pass over every stack that needs
  // each one once (the heap's function rows look through the allocator's
  // frames of nearly every Python site). A report of many processes kept
  // hundreds of MB of frames it never showed.
  std::vector<Frame> frames_not_kept(StackKey key, StackUse use = StackUse::call);

  // frames(key, use).front() without symbolizing the rest of the stack
  // when frames() has not been asked for it: one address through the
  // symbolizer (memoized per address), for a ranking that merges stacks by
  // their innermost function. nullopt where frames() is empty.
  std::optional<Frame> first_frame(StackKey key, StackUse use = StackUse::call);

  // The frames of one address of `image` (a pc when !return_address); an
  // address in the preload library is one kTracerFrameName frame, as in frames().
  std::vector<Frame> frames_at(ImageIndex image, uint64_t address, bool return_address);

  // Modules whose symbols were not found, and what would fix it.
  std::vector<symbolizer::ModuleProblem> problems() const;

 private:
  struct State;
  std::unique_ptr<State> state_;
};

// A file path's last component ("/usr/lib/libc.so.6" -> "libc.so.6").
std::string base_name(const std::string& path);

}  // namespace spoor::analysis

#endif  // SPOOR_ANALYSIS_SYMBOLIZED_STACKS_H
