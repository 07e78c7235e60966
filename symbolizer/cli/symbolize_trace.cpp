// spoor symbolize --trace: reads every Spoor.Stack Stack event of a trace,
// maps each frame to the module its process had loaded there (Spoor.Process
// ModuleLoad events of the same process image), and prints each stack with
// its frames.
//
// Stack ids and module addresses are per process and per image: a
// ProcessStart with exec_count > 0 starts a new image, whose stacks and
// modules are new. Frames are return addresses, so callers are symbolized
// at address - 1; the innermost frame of a stack that a Spoor.Samples
// Sample refers to is the interrupted instruction itself and is taken as
// is (samples and stacks of one image are read before any is printed).
#include "symbolize_trace.h"

#include <algorithm>
#include <cinttypes>
#include <cstdio>
#include <map>
#include <memory>
#include <set>
#include <unordered_map>
#include <unordered_set>

#include "command.h"
#include "spoor/analysis/perf_map.h"
#include "spoor/reader/event_reader.h"
#include "trace_report.h"

namespace spoor::cli {
namespace {

struct LoadedModule {
  uint64_t start = 0;
  uint64_t end = 0;
  uint64_t bias = 0;
  symbolizer::ModuleId id = 0;
  std::string path;
};

struct Frame {
  uint64_t address = 0;
  const LoadedModule* module = nullptr;  // nullptr: in no recorded module
};

// One process image: its modules as they were loaded, its stacks with each
// frame's module as of the Stack event.
struct Image {
  uint32_t pid = 0;
  uint32_t exec_count = 0;
  std::string exe;
  std::vector<std::unique_ptr<LoadedModule>> modules;
  std::map<uint64_t, const LoadedModule*> mapped;  // by start address
  std::map<uint32_t, std::vector<Frame>> stacks;   // by stack id
  std::unordered_set<uint32_t> sampled;            // stack ids a Sample refers to
};

uint64_t as_u64(const reader::Value* v) {
  if (v == nullptr) return 0;
  if (auto p = std::get_if<uint64_t>(v)) return *p;
  if (auto p = std::get_if<reader::Pointer>(v)) return p->address;
  if (auto p = std::get_if<int64_t>(v)) return static_cast<uint64_t>(*p);
  return 0;
}

std::string_view as_string(const reader::Value* v) {
  if (v == nullptr) return {};
  if (auto p = std::get_if<std::string_view>(v)) return *p;
  return {};
}

std::span<const uint8_t> as_bytes(const reader::Value* v) {
  if (v == nullptr) return {};
  if (auto p = std::get_if<reader::Blob>(v)) return p->bytes;
  return {};
}

const LoadedModule* module_at(const Image& image, uint64_t address) {
  auto it = image.mapped.upper_bound(address);
  if (it == image.mapped.begin()) return nullptr;
  --it;
  return address < it->second->end ? it->second : nullptr;
}

void print_frame(std::string& out, int index, uint64_t address, bool exact, const Frame& frame,
                 symbolizer::Symbolizer& symbolizer, const analysis::PerfMap* jit) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "    #%-2d 0x%016" PRIx64 " ", index, address);
  out += buf;
  if (frame.module == nullptr) {
    // A JIT's code, named by the runtime's perf map when there is one.
    const std::string* name = jit != nullptr ? jit->name_at(exact ? address : address - 1) : nullptr;
    out += name != nullptr ? *name + " (JIT code, perf map)\n" : "?? (in no recorded module)\n";
    return;
  }
  // A return address's call instruction ends at it: look one byte back.
  const symbolizer::Location& location = symbolizer.symbolize(frame.module->id, exact ? address : address - 1);
  for (size_t i = 0; i < location.frames.size(); ++i) {
    const symbolizer::SourceFrame& f = location.frames[i];
    if (i > 0) out += "                              (inlined by) ";
    if (!location.resolved) {
      std::snprintf(buf, sizeof buf, "+0x%" PRIx64, location.module_address + (exact ? 0 : 1));
      out += location.module + buf + "\n";
      continue;
    }
    out += f.function.empty() ? "??" : f.function;
    if (!f.file.empty()) {
      out += " at " + f.file;
      if (f.line != 0) out += ':' + std::to_string(f.line);
    } else if (i == 0) {
      std::snprintf(buf, sizeof buf, "+0x%" PRIx64, location.module_address + (exact ? 0 : 1));
      out += " (" + location.module + buf + ")";
    }
    out += '\n';
  }
}

}  // namespace

int symbolize_trace(const std::string& path, const symbolizer::Options& given, const Addr2lineStyle&) {
  std::optional<reader::Trace> trace = open_trace(path);
  if (!trace) return kExitTrace;
  // A trace's stacks are read by people, not diffed against addr2line:
  // whole inline chains, demangled, with DWARF's own names.
  symbolizer::Options options = given;
  options.demangle = true;
  options.inline_frames = true;
  options.gnu_addr2line_compatible = false;
  symbolizer::Symbolizer symbolizer(options);

  std::vector<std::unique_ptr<Image>> images;  // in the order they started
  std::unordered_map<uint32_t, Image*> current;  // by pid
  auto image_of = [&](uint32_t pid) -> Image& {
    Image*& image = current[pid];
    if (image == nullptr) {
      images.push_back(std::make_unique<Image>());
      image = images.back().get();
      image->pid = pid;
      if (const reader::Process* p = trace->process(pid)) image->exe = p->name;
    }
    return *image;
  };

  reader::EventReader events(*trace);
  reader::Event ev;
  analysis::RecordingSpan span;
  span.known = trace->has_clock() && trace->clock().realtime_ns_ref != 0;
  const int64_t to_realtime = trace->clock().realtime_ns_ref - trace->clock().monotonic_ns_ref;
  bool first_event = true;
  while (events.next(ev)) {
    if (first_event) span.first_realtime_ns = ev.time_ns + to_realtime;
    first_event = false;
    span.last_realtime_ns = std::max(span.last_realtime_ns, ev.time_ns + to_realtime);
    if (ev.provider == nullptr || ev.descriptor == nullptr) continue;
    const std::string& provider = ev.provider->name;
    const std::string& name = ev.descriptor->name;
    if (provider == "Spoor.Process" && name == "ProcessStart") {
      const uint32_t exec_count = static_cast<uint32_t>(as_u64(ev.field("exec_count")));
      Image& old = image_of(ev.pid);
      if (exec_count > 0 && exec_count != old.exec_count) {
        current[ev.pid] = nullptr;
        Image& fresh = image_of(ev.pid);
        fresh.exec_count = exec_count;
      }
      Image& image = image_of(ev.pid);
      const std::string_view exe = as_string(ev.field("exe"));
      if (!exe.empty()) image.exe = exe;
    } else if (provider == "Spoor.Process" && name == "ModuleLoad") {
      Image& image = image_of(ev.pid);
      symbolizer::ModuleInfo info;
      info.bias = as_u64(ev.field("bias"));
      info.start = as_u64(ev.field("start"));
      info.size = as_u64(ev.field("size"));
      info.path = as_string(ev.field("path"));
      const std::span<const uint8_t> build_id = as_bytes(ev.field("build_id"));
      info.build_id.assign(build_id.begin(), build_id.end());
      auto module = std::make_unique<LoadedModule>();
      module->start = info.start;
      module->end = info.start + info.size;
      module->path = info.path;
      module->bias = info.bias;
      module->id = symbolizer.add_module(info);
      image.mapped[module->start] = module.get();
      image.modules.push_back(std::move(module));
    } else if (provider == "Spoor.Process" && name == "ModuleUnload") {
      Image& image = image_of(ev.pid);
      const uint64_t bias = as_u64(ev.field("bias"));
      const std::string_view unloaded = as_string(ev.field("path"));
      for (auto it = image.mapped.begin(); it != image.mapped.end();) {
        if (it->second->path == unloaded && it->second->bias == bias)
          it = image.mapped.erase(it);
        else
          ++it;
      }
    } else if (provider == "Spoor.Stack" && name == "Stack") {
      Image& image = image_of(ev.pid);
      const uint32_t id = static_cast<uint32_t>(as_u64(ev.field("id")));
      const std::span<const uint8_t> bytes = as_bytes(ev.field("frames"));
      std::vector<Frame> frames;
      for (size_t i = 0; i + 8 <= bytes.size(); i += 8) {
        uint64_t address = 0;
        for (int b = 7; b >= 0; --b) address = address << 8 | bytes[i + static_cast<size_t>(b)];
        frames.push_back({address, module_at(image, address)});
      }
      image.stacks[id] = std::move(frames);
    } else if (provider == "Spoor.Samples" && name == "Sample") {
      image_of(ev.pid).sampled.insert(static_cast<uint32_t>(as_u64(ev.field("stack"))));
    }
  }

  std::string out;
  size_t stacks = 0;
  std::vector<symbolizer::ModuleProblem> map_problems;
  std::unordered_map<uint32_t, std::unique_ptr<analysis::PerfMap>> perf_maps;  // by pid
  for (const auto& image : images) {
    if (image->stacks.empty()) continue;
    auto [map, fresh] = perf_maps.try_emplace(image->pid);
    if (fresh) {
      const reader::SymbolMap* kept = trace->symbol_map(image->pid);
      map->second = kept != nullptr && kept->kind == format::kSymbolMapPerf
                        ? analysis::parse_perf_map(kept->path, kept->text, map_problems)
                        : analysis::read_perf_map(options.perf_map_dir, image->pid, span, map_problems);
    }
    out.clear();
    char buf[128];
    std::snprintf(buf, sizeof buf, "process %u image %u", image->pid, image->exec_count);
    out += buf;
    if (!image->exe.empty()) out += " (" + image->exe + ")";
    out += '\n';
    for (const auto& [id, frames] : image->stacks) {
      const bool sampled = image->sampled.count(id) > 0;
      out += "  stack " + std::to_string(id) + (sampled ? " (sampled)" : "") + "\n";
      for (size_t i = 0; i < frames.size(); ++i)
        print_frame(out, static_cast<int>(i), frames[i].address, sampled && i == 0, frames[i], symbolizer,
                    map->second.get());
      ++stacks;
    }
    std::fwrite(out.data(), 1, out.size(), stdout);
  }
  std::vector<symbolizer::ModuleProblem> problems = symbolizer.problems();
  problems.insert(problems.end(), map_problems.begin(), map_problems.end());
  for (const symbolizer::ModuleProblem& p : problems)
    std::fprintf(stderr, "spoor symbolize: warning: %s: %s\n", p.path.c_str(), p.message.c_str());
  for (const reader::Damage& d : all_damage(*trace, events))
    std::fprintf(stderr, "spoor symbolize: warning: trace damaged: %s\n", d.message.c_str());
  if (stacks == 0) std::fprintf(stderr, "spoor symbolize: '%s' holds no Spoor.Stack Stack events\n", path.c_str());
  return kExitOk;
}

}  // namespace spoor::cli
