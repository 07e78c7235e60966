// Stacks to frames. Every module of an image is described to the
// symbolizer the first time one of its addresses is looked up; the
// symbolizer memoizes per address, this file per stack.
#include "spoor/analysis/symbolized_stacks.h"

#include <algorithm>

#include <cinttypes>
#include <cstdio>
#include <unordered_map>

#include "module_info.h"
#include "spoor/analysis/perf_map.h"

namespace spoor::analysis {
namespace {

std::string hex(uint64_t v) {
  char buf[24];
  std::snprintf(buf, sizeof buf, "0x%" PRIx64, v);
  return buf;
}

}  // namespace

std::string base_name(const std::string& path) {
  const size_t slash = path.rfind('/');
  return slash == std::string::npos ? path : path.substr(slash + 1);
}

namespace {
std::string in_module(const std::string& module, uint64_t offset) { return base_name(module) + "+" + hex(offset); }
}  // namespace

std::string Frame::function_or_location() const {
  if (!function.empty()) return function;
  if (!module.empty())
    return has_code_start ? "function at " + in_module(module, code_start) : in_module(module, module_offset);
  return hex(address);
}

std::string Frame::label() const {
  if (function.empty()) return module.empty() ? hex(address) : in_module(module, module_offset);
  std::string s = function_or_location();
  if (!function.empty() && !file.empty()) {
    s += "  " + base_name(file);
    if (line != 0) s += ":" + std::to_string(line);
  }
  return s;
}

struct SymbolizedStacks::State {
  const TraceModel& model;
  const std::string perf_map_dir;
  symbolizer::Symbolizer symbolizer;
  // pid -> its JIT's perf map, read at the pid's first address in no
  // module; null when it has none (or one another process wrote).
  std::unordered_map<uint32_t, std::unique_ptr<PerfMap>> perf_maps;
  std::vector<symbolizer::ModuleProblem> perf_map_problems;
  // (image << 32 | module index in the image) -> the symbolizer's id
  std::unordered_map<uint64_t, symbolizer::ModuleId> module_ids;
  // stack key with the sample flag in bit 63 (image indexes stay far below)
  std::unordered_map<uint64_t, std::vector<Frame>> stacks;

  State(const TraceModel& m, symbolizer::Options options)
      : model(m), perf_map_dir(options.perf_map_dir), symbolizer(std::move(options)) {}

  // The map the recorder kept in the trace; else, for a trace without
  // one (an older spoor's), the map still on disk where it was recorded,
  // as perf report reads it.
  const PerfMap* perf_map_of(ImageIndex image) {
    if (image >= model.images.size()) return nullptr;
    const uint32_t pid = model.images[image].pid;
    auto [it, inserted] = perf_maps.try_emplace(pid);
    if (!inserted) return it->second.get();
    if (auto kept = model.kept_perf_maps.find(pid); kept != model.kept_perf_maps.end()) {
      it->second = parse_perf_map(kept->second.path, *kept->second.text, perf_map_problems);
    } else if (!perf_map_dir.empty()) {
      RecordingSpan span;
      span.known = model.has_realtime;
      span.first_realtime_ns = model.first_ns + model.realtime_minus_monotonic_ns;
      span.last_realtime_ns = model.last_ns + model.realtime_minus_monotonic_ns;
      it->second = read_perf_map(perf_map_dir, pid, span, perf_map_problems);
    }
    return it->second.get();
  }

  symbolizer::ModuleId module_id(ImageIndex image, const Module& mod) {
    const auto index = static_cast<uint64_t>(&mod - model.images[image].modules.data());
    auto [it, inserted] = module_ids.try_emplace((static_cast<uint64_t>(image) << 32) | index, 0);
    if (inserted) it->second = symbolizer.add_module(module_info(mod));
    return it->second;
  }

  void append(ImageIndex image, uint64_t address, bool return_address, std::vector<Frame>& out) {
    // A return address points past its call: the call is at address - 1.
    const uint64_t lookup = return_address && address > 0 ? address - 1 : address;
    Frame base;
    base.address = address;
    if (is_kernel_address(address)) {
      // Named when the recorder wrote the kernel's symbols, with where the
      // function lives ("[kernel]", or a module's "[ext4]") in the name: the
      // kernel has its own memcpy and memset, which a profile must not add
      // to libc's.
      if (const KernelSymbolEntry* k = model.kernel_symbol_at(lookup)) {
        base.module = "[" + (k->module.empty() ? std::string("kernel") : k->module) + "]";
        base.function = k->name + " " + base.module;
        base.module_offset = address;
        base.has_symbol_offset = true;
        base.symbol_offset = address - k->address;
      }
      out.push_back(std::move(base));
      return;
    }
    const Module* mod = image < model.images.size() ? model.images[image].module_at(lookup) : nullptr;
    if (mod == nullptr) {
      // A JIT's code: named by the runtime's perf map, when it wrote one.
      if (const PerfMap* map = perf_map_of(image))
        if (const std::string* name = map->name_at(lookup)) base.function = *name;
      out.push_back(std::move(base));
      return;
    }
    base.module = mod->path;
    base.module_offset = address - mod->bias;
    const symbolizer::Location& loc = symbolizer.symbolize(module_id(image, *mod), lookup);
    for (const symbolizer::SourceFrame& s : loc.frames) {
      Frame f = base;
      f.function = s.function;
      f.file = s.file;
      f.line = s.line;
      f.inlined = s.inlined;
      f.has_symbol_offset = s.named_by_symbol && s.line == 0;
      f.symbol_offset = s.symbol_offset + (address - lookup);  // of the address as recorded
      f.has_code_start = loc.code_start_known && s.function.empty();
      f.code_start = loc.code_start;
      out.push_back(std::move(f));
    }
    if (loc.frames.empty()) out.push_back(std::move(base));
  }

  std::vector<Frame> symbolize(StackKey key, StackUse use);
};

SymbolizedStacks::SymbolizedStacks(const TraceModel& model, symbolizer::Options options)
    : state_(std::make_unique<State>(model, std::move(options))) {}
SymbolizedStacks::SymbolizedStacks(SymbolizedStacks&&) noexcept = default;
SymbolizedStacks& SymbolizedStacks::operator=(SymbolizedStacks&&) noexcept = default;
SymbolizedStacks::~SymbolizedStacks() = default;

namespace {

// A CPU sample that lands while the preloaded library records an event is
// taken when the library's code is done (samples.h defers it), so its
// innermost frames are the library's own; a page fault in the library is
// the library touching its own tables. Either is the cost of tracing, not
// code of the program: one frame names it, and the program's frames above
// it keep their inclusive time.
//
// Further out, the library's frames are its hooks calling the function the
// program called (the program's fopen() through the hook, whose libc code
// then allocated): they are dropped, and the stack reads as the untraced
// program's would.
bool in_preload(const Frame& f) { return base_name(f.module).starts_with("libspoor-preload"); }

void collapse_tracer_frames(std::vector<Frame>& frames) {
  size_t n = 0;
  while (n < frames.size() && in_preload(frames[n])) ++n;
  if (n > 0) {
    Frame tracer;
    tracer.address = frames[0].address;
    tracer.function = std::string(kTracerFrameName);
    tracer.module = frames[0].module;
    tracer.module_offset = frames[0].module_offset;
    frames.erase(frames.begin(), frames.begin() + static_cast<std::ptrdiff_t>(n - 1));
    frames[0] = std::move(tracer);
  }
  const size_t first = n > 0 ? 1 : 0;
  frames.erase(std::remove_if(frames.begin() + static_cast<std::ptrdiff_t>(first), frames.end(), in_preload),
               frames.end());
}

// A kernel sample's kernel frames, in a trace that does not name them
// (recorded before KernelSymbol, or where kallsyms hid its addresses): one
// "[kernel]" frame, so the time shows as the kernel's, under the call that
// entered it, and not as a column of addresses.
void collapse_unnamed_kernel_frames(std::vector<Frame>& frames) {
  auto unnamed_kernel = [](const Frame& f) { return is_kernel_address(f.address) && f.function.empty(); };
  std::vector<Frame> out;
  out.reserve(frames.size());
  for (Frame& f : frames) {
    if (!unnamed_kernel(f)) {
      out.push_back(std::move(f));
      continue;
    }
    if (!out.empty() && out.back().function == kUnnamedKernelFrame && is_kernel_address(out.back().address)) continue;
    f.function = std::string(kUnnamedKernelFrame);
    out.push_back(std::move(f));
  }
  frames = std::move(out);
}

}  // namespace

std::vector<Frame> SymbolizedStacks::State::symbolize(StackKey key, StackUse use) {
  std::vector<Frame> out;
  const StackFrames* stack = model.stack(key);
  if (stack == nullptr) return out;
  for (size_t i = 0; i < stack->size(); ++i) append(stack_image(key), (*stack)[i], !(i == 0 && use == StackUse::sample), out);
  collapse_tracer_frames(out);
  collapse_unnamed_kernel_frames(out);
  return out;
}

const std::vector<Frame>& SymbolizedStacks::frames(StackKey key, StackUse use) {
  const uint64_t memo_key = key | (use == StackUse::sample ? uint64_t{1} << 63 : 0);
  if (auto it = state_->stacks.find(memo_key); it != state_->stacks.end()) return it->second;
  return state_->stacks.emplace(memo_key, state_->symbolize(key, use)).first->second;
}

std::vector<Frame> SymbolizedStacks::frames_not_kept(StackKey key, StackUse use) {
  const uint64_t memo_key = key | (use == StackUse::sample ? uint64_t{1} << 63 : 0);
  if (auto it = state_->stacks.find(memo_key); it != state_->stacks.end()) return it->second;
  return state_->symbolize(key, use);
}

std::optional<Frame> SymbolizedStacks::first_frame(StackKey key, StackUse use) {
  const uint64_t memo_key = key | (use == StackUse::sample ? uint64_t{1} << 63 : 0);
  if (auto it = state_->stacks.find(memo_key); it != state_->stacks.end())
    return it->second.empty() ? std::nullopt : std::optional<Frame>(it->second.front());
  const StackFrames* stack = state_->model.stack(key);
  if (stack == nullptr || stack->size() == 0) return std::nullopt;
  // The first address alone: collapse_tracer_frames gives its innermost
  // frame the same whether the frames of the outer addresses follow or not.
  std::vector<Frame> frames = frames_at(stack_image(key), (*stack)[0], use == StackUse::call);
  return std::move(frames.front());
}

std::vector<Frame> SymbolizedStacks::frames_at(ImageIndex image, uint64_t address, bool return_address) {
  std::vector<Frame> out;
  state_->append(image, address, return_address, out);
  collapse_tracer_frames(out);
  return out;
}

std::vector<symbolizer::ModuleProblem> SymbolizedStacks::problems() const {
  std::vector<symbolizer::ModuleProblem> all = state_->symbolizer.problems();
  all.insert(all.end(), state_->perf_map_problems.begin(), state_->perf_map_problems.end());
  return all;
}

}  // namespace spoor::analysis
