#include "kernel_modules.h"

#include <algorithm>
#include <cctype>
#include <cstring>

#include "module_info.h"

namespace spoor::analysis {
namespace {

namespace f = field;
constexpr uint32_t kProtExec = 4;  // PROT_EXEC

// "memory at 0x7ffd1234 is outside ..." -> "memory at 0x… is outside ...":
// one line per kind of stop, not per address.
std::string masked(const std::string& reason) {
  std::string out;
  for (size_t i = 0; i < reason.size(); ++i) {
    if (reason.compare(i, 2, "0x") == 0) {
      out += "0x…";
      i += 2;
      while (i < reason.size() && std::isxdigit(static_cast<unsigned char>(reason[i]))) ++i;
      --i;
      continue;
    }
    if (std::isdigit(static_cast<unsigned char>(reason[i]))) {
      out += 'N';
      while (i + 1 < reason.size() && std::isdigit(static_cast<unsigned char>(reason[i + 1]))) ++i;
      continue;
    }
    out += reason[i];
  }
  return out;
}

}  // namespace

std::span<const uint8_t> sample_stack(const reader::Event& e, const KnownEvent& k, std::vector<uint8_t>& joined) {
  const std::span<const uint8_t> first = field_blob(e, k, f::kKStack);
  if (field_blob(e, k, f::kKStack2).empty()) return first;  // one Blob held it: no copy
  joined.assign(first.begin(), first.end());
  for (int slot : {f::kKStack2, f::kKStack3, f::kKStack4}) {
    const std::span<const uint8_t> more = field_blob(e, k, slot);
    joined.insert(joined.end(), more.begin(), more.end());
  }
  return joined;
}

KernelModules::KernelModules(TraceModel& model, const LoadOptions& options, ModulePaths& paths)
    : m_(model), paths_(paths), biases_(options.sysroot) {
  unwind_options_.debug_dirs = options.debug_dirs;
  unwind_options_.sysroot = options.sysroot;
}

void KernelModules::mmap(const reader::Event& e, const KnownEvent& k, ImageIndex image) {
  if ((field_u64(e, k, f::kKProt) & kProtExec) == 0) return;
  const std::string_view path = field_str(e, k, f::kKMmapPath);
  const uint64_t start = field_u64(e, k, f::kKMmapStart);
  if (path == "[vdso]") {
    const VdsoMapping m{image, start, field_u64(e, k, f::kKMmapLength), e.time_ns};
    if (!vdso_.empty()) return add_vdso(m);
    // Named as a region until its image comes, if it does.
    unwinder_of(image).add_unbacked(start, m.length, std::string(path));
    vdso_mappings_.push_back(m);
    return;
  }
  if (path.empty() || path.front() != '/' || path.starts_with("//anon")) {
    // Anonymous (JIT code), [vdso], ...: no file, but the unwinder names
    // them when a walk ends there.
    unwinder_of(image).add_unbacked(start, field_u64(e, k, f::kKMmapLength), std::string(path));
    return;
  }
  Image& im = m_.images[image];
  for (const Module& mod : im.modules)
    if (mod.start == start && mod.path == path) return;
  unwind::Mapping mapping;
  mapping.path = path;
  mapping.start = start;
  mapping.length = field_u64(e, k, f::kKMmapLength);
  mapping.pgoff = field_u64(e, k, f::kKPgoff);
  const auto id = field_blob(e, k, f::kKMmapBuildId);
  mapping.build_id.assign(id.begin(), id.end());
  // The same mapping under another spelling of its file (the preload's
  // /lib/... beside the kernel's /usr/lib/...) is known already too.
  const std::string spelling = paths_.canonical(path, mapping.build_id);
  for (const Module& mod : im.modules)
    if (mod.start == start && mod.path == spelling) return;
  const bool recorded_id = !mapping.build_id.empty();
  const auto info = biases_.module(mapping);
  Module mod;
  mod.start = mapping.start;
  mod.size = mapping.length;
  mod.load_ns = e.time_ns;
  // A file that cannot be read keeps its mapping (frames show as
  // module+0xoffset from the mapping's start).
  mod.bias = info ? info->bias : mapping.start - mapping.pgoff;
  mod.build_id = info ? info->build_id : std::move(mapping.build_id);
  // A build ID read from the file (kernels before 5.12 record none) may
  // name a module known under another spelling.
  mod.path = !recorded_id && !mod.build_id.empty() ? paths_.canonical(path, mod.build_id) : spelling;
  im.modules.push_back(std::move(mod));
}

void KernelModules::set_vdso(std::vector<uint8_t> image) {
  vdso_ = std::move(image);
  if (vdso_.empty()) return;
  for (const VdsoMapping& m : vdso_mappings_) add_vdso(m);
  vdso_mappings_.clear();
}

// Mapped whole from its ELF header: its addresses are offsets from the
// mapping's start (its first segment is at 0), as the preload's ModuleLoad
// has it. A module before the unwinder's unbacked region of it.
void KernelModules::add_vdso(const VdsoMapping& m) {
  Image& im = m_.images[m.image];
  for (const Module& mod : im.modules)
    if (mod.start == m.start && mod.path == "[vdso]") return;
  Module mod;
  mod.path = "[vdso]";
  mod.start = m.start;
  mod.size = m.length;
  mod.bias = m.start;
  mod.load_ns = m.ns;
  mod.image = vdso_;
  im.modules.push_back(std::move(mod));
}

unwind::ProcessUnwinder& KernelModules::unwinder_of(ImageIndex image) {
  return image_unwinder(image).unwinder;
}

KernelModules::ImageUnwinder& KernelModules::image_unwinder(ImageIndex image) {
  return unwinders_.try_emplace(image, ImageUnwinder{unwind::ProcessUnwinder(unwind_options_), 0, {}}).first->second;
}

StackKey KernelModules::unwind(const reader::Event& e, const KnownEvent& k, ImageIndex image) {
  ImageUnwinder& u = image_unwinder(image);
  const Image& im = m_.images[image];
  for (; u.modules_added < im.modules.size(); ++u.modules_added)
    u.unwinder.add_module(module_info(im.modules[u.modules_added]));
  unwind::UserSample s;
  s.ip = field_u64(e, k, f::kKSampleIp);
  s.regs_abi = static_cast<uint32_t>(field_u64(e, k, f::kKRegsAbi));
  s.regs.mask = field_u64(e, k, f::kKRegsMask);
  s.regs.values = field_blob(e, k, f::kKRegs);
  s.stack = sample_stack(e, k, stack_);
  s.callchain = field_blob(e, k, f::kKCallchain);
  const unwind::UnwoundStack r = u.unwinder.unwind(s);
  KernelUnwindSummary& sum = m_.kernel_unwind;
  switch (r.method) {
    case unwind::UnwindMethod::dwarf: ++sum.dwarf; break;
    case unwind::UnwindMethod::frame_pointer: ++sum.frame_pointer; break;
    case unwind::UnwindMethod::ip_only: ++sum.pc_only; break;
  }
  sum.frames += r.pcs.size();
  if (!r.stop_reason.empty()) ++sum.stops[masked(r.stop_reason)];
  if (r.stack_copy_short) ++sum.stack_copy_short;
  sum.largest_stack_copy = std::max<uint64_t>(sum.largest_stack_copy, s.stack.size());
  // The kernel's frames first (innermost first, as the sample was taken
  // in the kernel), then the user stack: a profile shows the time a read()
  // spent copying under read().
  const std::span<const uint8_t> kernel_chain = field_blob(e, k, f::kKKernelCallchain);
  const size_t kernel_frames = kernel_chain.size() / 8;
  if (kernel_frames > 0) ++sum.in_kernel;
  if (r.pcs.empty() && kernel_frames == 0) return 0;
  std::string bytes((kernel_frames + r.pcs.size()) * 8, '\0');
  if (kernel_frames > 0) std::memcpy(bytes.data(), kernel_chain.data(), kernel_frames * 8);
  if (!r.pcs.empty()) std::memcpy(bytes.data() + kernel_frames * 8, r.pcs.data(), r.pcs.size() * 8);
  auto [it, inserted] = u.ids.try_emplace(std::move(bytes), kUnwoundStackIdBase + static_cast<uint32_t>(u.ids.size()));
  const StackKey key = stack_key(image, it->second);
  if (inserted)
    m_.stacks[key] = m_.keep_frames({reinterpret_cast<const uint8_t*>(it->first.data()), it->first.size()});
  return key;
}

void KernelModules::finish() {
  auto& out = m_.kernel_unwind.module_problems;
  // By image, in order: the report lists problems as the trace met them.
  std::vector<ImageIndex> images;
  for (const auto& [image, u] : unwinders_) images.push_back(image);
  std::sort(images.begin(), images.end());
  for (ImageIndex image : images)
    for (const symbolizer::ModuleProblem& p : unwinders_.at(image).unwinder.problems()) {
      std::pair<std::string, std::string> key{p.path, p.message};
      if (std::find(out.begin(), out.end(), key) == out.end()) out.push_back(std::move(key));
    }
}

}  // namespace spoor::analysis
