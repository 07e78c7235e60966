// libdw's unwinder over a copied stack. One Dwfl per process image, with
// the image's modules reported as the walk reaches them (perf reports them
// the same way, but builds a Dwfl per sample: here its CFI parsing is paid
// once per module). The thread callbacks read the sample being unwound
// through State::current, which unwind() sets for the duration of one walk.
#include "spoor/unwind/process_unwinder.h"

#include <elfutils/libdwelf.h>
#include <elfutils/libdwfl.h>
#include <fcntl.h>
#include <gelf.h>
#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <cinttypes>
#include <cstdio>
#include <cstring>
#include <optional>

#include "spoor/symbolizer/file_by_build_id.h"

namespace spoor::unwind {

const char* method_name(UnwindMethod m) {
  switch (m) {
    case UnwindMethod::dwarf: return "dwarf";
    case UnwindMethod::frame_pointer: return "frame pointers";
    case UnwindMethod::ip_only: return "pc only";
  }
  return "?";
}

namespace {

// libdw wants a pid for the one thread it unwinds; the trace's pid plays no
// part (memory and registers come from the sample), so any positive one does.
constexpr pid_t kUnwoundPid = 1;

std::string hex(uint64_t v) {
  char buf[24];
  std::snprintf(buf, sizeof buf, "0x%" PRIx64, v);
  return buf;
}

std::vector<uint64_t> u64s(std::span<const uint8_t> bytes) {
  std::vector<uint64_t> out(bytes.size() / 8);
  if (!out.empty()) std::memcpy(out.data(), bytes.data(), out.size() * 8);
  return out;
}

}  // namespace

struct ProcessUnwinder::State {
  enum class ModuleState : uint8_t { pending, reported, unusable };
  struct Mod {
    symbolizer::ModuleInfo info;
    ModuleState state = ModuleState::pending;
    Dwfl_Module* dwfl_module = nullptr;
  };

  UnwindOptions options;
  std::string debuginfo_path_storage;
  char* debuginfo_path = nullptr;
  Dwfl_Callbacks callbacks{};
  Dwfl_Thread_Callbacks thread_callbacks{};
  Dwfl* dwfl = nullptr;
  bool attached = false;
  std::vector<Mod> modules;  // in load order; the latest wins an overlap
  std::vector<symbolizer::ModuleProblem> problems;
  struct Unbacked {
    uint64_t start, size;
    std::string name;
  };
  std::vector<Unbacked> unbacked;  // in map order; the latest wins an overlap

  // The walk in progress.
  const UserSample* current = nullptr;
  uint64_t current_sp = 0;
  std::vector<uint64_t>* pcs = nullptr;
  std::string memory_error;  // the first read the copy and the files could not serve
  bool memory_past_copy = false;  // ... and it was above the copy's end
  bool memory_below_sp = false;   // ... or below the sampled sp

  explicit State(UnwindOptions o) : options(std::move(o)) {
    for (const std::string& d : options.debug_dirs) debuginfo_path_storage += d + ":";
    debuginfo_path_storage += ":.debug:/usr/lib/debug";
    debuginfo_path = debuginfo_path_storage.data();
    callbacks.find_elf = dwfl_build_id_find_elf;
    callbacks.find_debuginfo = dwfl_standard_find_debuginfo;
    callbacks.section_address = dwfl_offline_section_address;
    callbacks.debuginfo_path = &debuginfo_path;
    dwfl = dwfl_begin(&callbacks);
    thread_callbacks.next_thread = next_thread;
    thread_callbacks.memory_read = memory_read;
    thread_callbacks.set_initial_registers = set_initial_registers;
  }
  ~State() {
    if (dwfl != nullptr) dwfl_end(dwfl);
  }

  Mod* module_at(uint64_t address) {
    for (auto it = modules.rbegin(); it != modules.rend(); ++it)
      if (address >= it->info.start && address - it->info.start < it->info.size) return &*it;
    return nullptr;
  }

  // Why `pc` (a frame's, in no module) cannot be unwound from.
  std::string no_module(uint64_t pc) const {
    for (auto it = unbacked.rbegin(); it != unbacked.rend(); ++it) {
      if (pc < it->start || pc - it->start >= it->size) continue;
      if (it->name.empty() || it->name == "//anon")
        return "pc " + hex(pc) + " is in anonymous executable memory (JIT code?): no CFI to unwind it";
      if (it->name == "[vdso]") return "pc " + hex(pc) + " is in [vdso], of which no image was recorded";
      return "pc " + hex(pc) + " is in " + it->name + ", which no file backs";
    }
    return "pc " + hex(pc) + " is in no known module";
  }

  void problem(const Mod& m, std::string message) {
    for (const auto& p : problems)
      if (p.path == m.info.path) return;
    problems.push_back({m.info.path, std::move(message)});
  }

  // Why the file open at `fd` is not the recorded build of `m`; "" when it
  // is (or the trace recorded no build ID).
  static std::string other_build(int fd, const Mod& m) {
    if (m.info.build_id.empty()) return {};
    Elf* elf = elf_begin(fd, ELF_C_READ_MMAP, nullptr);
    const void* id = nullptr;
    const ssize_t n = elf != nullptr ? dwelf_elf_gnu_build_id(elf, &id) : -1;
    const bool same = n > 0 && static_cast<size_t>(n) == m.info.build_id.size() &&
                      std::memcmp(id, m.info.build_id.data(), m.info.build_id.size()) == 0;
    const std::string found = n > 0 ? symbolizer::build_id_hex(static_cast<const uint8_t*>(id), static_cast<size_t>(n)) : "none";
    if (elf != nullptr) elf_end(elf);
    if (same) return {};
    return "build ID " + found + " differs from the recorded " +
           symbolizer::build_id_hex(m.info.build_id.data(), m.info.build_id.size()) + ": the file changed since recording";
  }

  // Opens `file` if it is the recorded build of `m`: the descriptor, or -1
  // with `why` set.
  static int open_recorded_build(const std::string& file, const Mod& m, std::string& why) {
    const int fd = m.info.image.empty() ? open(file.c_str(), O_RDONLY | O_CLOEXEC) : image_fd(m.info.image);
    if (fd < 0) {
      why = std::string("cannot open '") + file + "': " + std::strerror(errno);
      return -1;
    }
    why = other_build(fd, m);
    if (why.empty()) return fd;
    close(fd);
    return -1;
  }

  // Reports the module holding `address` to libdwfl on first use: opened
  // here so its build ID is checked before libdw reads its CFI. A file
  // gone or changed since the recording gives way to the recorded build,
  // found by its build ID (file_by_build_id.h): only the binary itself
  // serves here, for its .eh_frame.
  void report(uint64_t address) {
    Mod* m = module_at(address);
    if (m == nullptr || m->state != ModuleState::pending) return;
    m->state = ModuleState::unusable;
    std::string file = m->info.image.empty() ? options.sysroot + m->info.path : m->info.path;
    std::string why;
    int fd = open_recorded_build(file, *m, why);
    if (fd < 0 && m->info.image.empty() && !m->info.build_id.empty()) {
      symbolizer::Options search;
      search.debug_dirs = options.debug_dirs;
      search.sysroot = options.sysroot;
      const symbolizer::FoundFile found =
          symbolizer::file_by_build_id(m->info.build_id, search, symbolizer::FileUse::unwinding);
      std::string also;
      if (!found.path.empty()) fd = open_recorded_build(found.path, *m, also);
      if (fd >= 0) {
        file = found.path;
      } else {
        why += found.path.empty() ? "; no binary with that build ID under " + symbolizer::build_id_search_places(search)
                                  : "; the file found by its build ID in " + found.where + " failed too: " + also;
      }
    }
    if (fd < 0) {
      problem(*m, why + "; its frames end the unwinding");
      return;
    }
    dwfl_report_begin_add(dwfl);
    // The Dwfl owns fd from here, whatever the outcome.
    m->dwfl_module = dwfl_report_elf(dwfl, m->info.path.c_str(), file.c_str(), fd, m->info.bias, true);
    dwfl_report_end(dwfl, nullptr, nullptr);
    if (m->dwfl_module == nullptr) {
      problem(*m, std::string("cannot read '") + file + "' as ELF: " + dwfl_errmsg(-1));
      return;
    }
    m->state = ModuleState::reported;
  }

  // A captured image (the vDSO, which has no file) as a file libdw can
  // read its CFI from: an anonymous memory file holding the bytes.
  static int image_fd(const std::vector<uint8_t>& image) {
    const int fd = memfd_create("spoor-image", MFD_CLOEXEC);
    if (fd < 0) return -1;
    size_t done = 0;
    while (done < image.size()) {
      const ssize_t n = write(fd, image.data() + done, image.size() - done);
      if (n <= 0) {
        close(fd);
        return -1;
      }
      done += static_cast<size_t>(n);
    }
    return fd;
  }

  // A word of the module file's loaded bytes, for the rare CFI expression
  // that reads memory outside the stack.
  bool read_module(uint64_t address, Dwarf_Word* out) {
    Mod* m = module_at(address);
    if (m == nullptr) return false;
    report(address);
    if (m->state != ModuleState::reported) return false;
    Dwarf_Addr bias = 0;
    Elf* elf = dwfl_module_getelf(m->dwfl_module, &bias);
    size_t phnum = 0;
    if (elf == nullptr || elf_getphdrnum(elf, &phnum) != 0) return false;
    size_t file_size = 0;
    const char* raw = elf_rawfile(elf, &file_size);
    if (raw == nullptr) return false;
    const uint64_t vaddr = address - bias;
    for (size_t i = 0; i < phnum; ++i) {
      GElf_Phdr ph;
      if (gelf_getphdr(elf, static_cast<int>(i), &ph) == nullptr || ph.p_type != PT_LOAD) continue;
      if (vaddr < ph.p_vaddr || vaddr + 8 > ph.p_vaddr + ph.p_filesz) continue;
      const uint64_t offset = ph.p_offset + (vaddr - ph.p_vaddr);
      if (offset + 8 > file_size) return false;
      std::memcpy(out, raw + offset, 8);
      return true;
    }
    return false;
  }

  static pid_t next_thread(Dwfl* dwfl, void* dwfl_arg, void** thread_argp) {
    if (*thread_argp != nullptr) return 0;  // one thread: the sample's
    *thread_argp = dwfl_arg;
    return dwfl_pid(dwfl);
  }

  // At a sampled `ret`, GCC's CFI still says the register its last pop
  // restored is saved just below the return address (it emits no
  // .cfi_restore after `leave` or `pop`), so libdw reads sp - 8, which the
  // copy does not hold. The pop loaded that word into the register: its
  // sampled value is the word. The instruction before the ret says which
  // register: leave (rbp), pop r (0x58 + r), or REX.B pop (r8..r15).
  std::optional<uint64_t> popped_at_ret(uint64_t address) {
    if (pcs == nullptr || pcs->size() != 1 || address != current_sp - 8) return std::nullopt;
    const uint64_t pc = pcs->front();
    Dwarf_Word code = 0;
    if (pc < 7 || !read_module(pc - 7, &code)) return std::nullopt;
    uint8_t b[8];
    std::memcpy(b, &code, 8);  // b[7] is the byte at pc
    if (b[7] != 0xc3) return std::nullopt;
    static constexpr PerfRegX86 kLow[8] = {kPerfAx, kPerfCx, kPerfDx, kPerfBx, kPerfSp, kPerfBp, kPerfSi, kPerfDi};
    unsigned reg = kPerfSp;
    if (b[6] == 0xc9) reg = kPerfBp;
    else if (b[6] >= 0x58 && b[6] <= 0x5f && b[5] == 0x41) reg = kPerfR8 + (b[6] - 0x58u);
    else if (b[6] >= 0x58 && b[6] <= 0x5f) reg = kLow[b[6] - 0x58];
    if (reg == kPerfSp) return std::nullopt;
    return current->regs.get(reg);
  }

  static bool memory_read(Dwfl*, Dwarf_Addr address, Dwarf_Word* result, void* dwfl_arg) {
    auto* s = static_cast<State*>(dwfl_arg);
    const std::span<const uint8_t> stack = s->current->stack;
    if (address >= s->current_sp && address - s->current_sp <= stack.size() &&
        stack.size() - (address - s->current_sp) >= 8) {
      std::memcpy(result, stack.data() + (address - s->current_sp), 8);
      return true;
    }
    if (s->read_module(address, result)) return true;
    if (const auto popped = s->popped_at_ret(address)) {
      *result = *popped;
      return true;
    }
    if (s->memory_error.empty()) {
      s->memory_error = s->memory_problem(address);
      s->memory_past_copy = !stack.empty() && address >= s->current_sp;
      s->memory_below_sp = address < s->current_sp;
    }
    return false;
  }

  static bool set_initial_registers(Dwfl_Thread* thread, void* thread_arg) {
    auto* s = static_cast<State*>(thread_arg);
    // Only the registers the sample has: one libdw never gets stays
    // undefined, so a rule that needs it stops the walk instead of
    // following a made-up value.
    for (unsigned dwarf = 0; dwarf < 17; ++dwarf) {
      const auto v = s->current->regs.get(kDwarfToPerfX86[dwarf]);
      if (!v) continue;
      const Dwarf_Word w = *v;
      if (!dwfl_thread_state_registers(thread, static_cast<int>(dwarf), 1, &w)) return false;
    }
    return true;
  }

  static int frame(Dwfl_Frame* state, void* arg) {
    auto* s = static_cast<State*>(arg);
    Dwarf_Addr pc = 0;
    bool activation = false;
    if (!dwfl_frame_pc(state, &pc, nullptr)) return DWARF_CB_ABORT;
    // A read that failed on the way to this frame did not stop the walk
    // (libdw leaves a register it could not restore undefined): only the
    // failures of the step after the last frame say why it ended.
    s->memory_error.clear();
    s->memory_past_copy = false;
    s->memory_below_sp = false;
    // The module must be known before libdw asks whether this frame is an
    // activation (which reads its CFI), and before it unwinds past it.
    s->report(s->pcs->empty() || pc == 0 ? pc : pc - 1);
    if (!dwfl_frame_pc(state, &pc, &activation)) return DWARF_CB_ABORT;
    // A caller frame below a signal frame is an activation: its pc is
    // exact. Stored +1, so that readers of return addresses (pc - 1) land
    // on it like on every other caller frame.
    s->pcs->push_back(!s->pcs->empty() && activation ? pc + 1 : pc);
    return s->pcs->size() >= s->options.max_frames ? DWARF_CB_ABORT : DWARF_CB_OK;
  }

  // The ELF of the reported module holding `address` if it is x86-64 code.
  Elf* x86_64_elf_at(uint64_t address) {
    Mod* m = module_at(address);
    if (m == nullptr || m->state != ModuleState::reported) return nullptr;
    Dwarf_Addr bias = 0;
    Elf* elf = dwfl_module_getelf(m->dwfl_module, &bias);
    GElf_Ehdr header;
    if (elf == nullptr || gelf_getehdr(elf, &header) == nullptr || header.e_machine != EM_X86_64) return nullptr;
    return elf;
  }

  // glibc's ld.so starts every dynamically linked process at _start and
  // _dl_start_user: hand-written assembly without CFI (RTLD_START), about
  // 0x40 bytes from the ELF entry point. A walk that ends on a pc there
  // found no CFI because it reached the bottom of the stack: before main,
  // those are the outermost frames, not a stop.
  bool in_entry_code(uint64_t address) {
    constexpr uint64_t kEntryCodeBytes = 0x40;
    Mod* m = module_at(address);
    if (m == nullptr || m->state != ModuleState::reported) return false;
    Dwarf_Addr bias = 0;
    Elf* elf = dwfl_module_getelf(m->dwfl_module, &bias);
    GElf_Ehdr header;
    if (elf == nullptr || gelf_getehdr(elf, &header) == nullptr || header.e_entry == 0) return false;
    const uint64_t entry = header.e_entry + bias;
    return address >= entry && address - entry < kEntryCodeBytes;
  }

  // Why a read of the sample's memory failed, in the words of its cause.
  std::string memory_problem(uint64_t address) const {
    const size_t copied = current->stack.size();
    if (copied == 0)
      return "the sample has no copy of the user stack (taken in execve once the old image was gone, or the "
             "kernel could not read it)";
    const std::string where = " (" + std::to_string(copied) + " bytes from sp " + hex(current_sp) + ")";
    if (address < current_sp)
      return "memory at " + hex(address) + " is below the sampled sp" + where +
             ": the CFI gave a frame address the stack does not hold";
    return "the stack copy" + where + " ends before the caller's frame at " + hex(address) +
           ": the stack is deeper than the copy (spoor record --kernel-stack-size)";
  }

  // DWARF unwinding; false when it could not start, with the reason in `out`.
  bool dwarf_unwind(const UserSample& sample, UnwoundStack& out) {
    if (sample.regs_abi != kRegsAbi64) {
      out.stop_reason = sample.regs_abi == kRegsAbiNone
                            ? "no user registers in the sample"
                            : "registers of ABI " + std::to_string(sample.regs_abi) + " (only x86-64's unwind)";
      return false;
    }
    const auto ip = sample.regs.get(kPerfIp);
    const auto sp = sample.regs.get(kPerfSp);
    if (!ip || !sp) {
      out.stop_reason = "the sample's registers lack ip or sp";
      return false;
    }
    if (dwfl == nullptr) {
      out.stop_reason = std::string("libdwfl: ") + dwfl_errmsg(-1);
      return false;
    }
    report(*ip);
    if (!attached) {
      // libdw sizes its register state from the ELF it is given, or else
      // from whichever module it lists first, which may be any file the
      // process mapped: give it the x86-64 module the sample ran in.
      Elf* machine = x86_64_elf_at(*ip);
      if (machine == nullptr) {
        out.stop_reason = module_at(*ip) == nullptr
                              ? no_module(*ip)
                              : "pc " + hex(*ip) + " is in no module of the host's architecture to unwind from";
        return false;
      }
      if (!dwfl_attach_state(dwfl, machine, kUnwoundPid, &thread_callbacks, this)) {
        out.stop_reason = "no module to unwind in (pc " + hex(*ip) + "): " + dwfl_errmsg(-1);
        return false;
      }
      attached = true;
    }
    current = &sample;
    current_sp = *sp;
    pcs = &out.pcs;
    memory_error.clear();
    memory_past_copy = false;
    memory_below_sp = false;
    const int rc = dwfl_getthread_frames(dwfl, kUnwoundPid, frame, this);
    const std::string libdw_error = rc == -1 ? dwfl_errmsg(-1) : "";
    current = nullptr;
    pcs = nullptr;
    out.method = UnwindMethod::dwarf;
    // libdw ends a walk the same way at the outermost frame (its return
    // address is undefined) and when a read for the return address failed:
    // a failed read, or a last pc in no module, says which it was.
    const uint64_t last = out.pcs.empty() ? *ip : out.pcs.back();
    const uint64_t last_lookup = out.pcs.size() > 1 ? last - 1 : last;
    if (out.pcs.size() >= options.max_frames)
      out.stop_reason = "stopped at " + std::to_string(options.max_frames) + " frames";
    else if (!memory_error.empty()) {
      out.stop_reason = memory_error;
      out.stack_copy_short = memory_past_copy;
      out.frame_below_sp = memory_below_sp;
    } else if (module_at(last_lookup) == nullptr)
      out.stop_reason = no_module(last);
    else if (rc != 0 && !in_entry_code(last_lookup))
      out.stop_reason = libdw_error.empty() ? "libdw stopped" : "libdw: " + libdw_error;
    return true;
  }
};

ProcessUnwinder::ProcessUnwinder(UnwindOptions options) : state_(std::make_unique<State>(std::move(options))) {}
ProcessUnwinder::ProcessUnwinder(ProcessUnwinder&&) noexcept = default;
ProcessUnwinder& ProcessUnwinder::operator=(ProcessUnwinder&&) noexcept = default;
ProcessUnwinder::~ProcessUnwinder() = default;

void ProcessUnwinder::add_module(const symbolizer::ModuleInfo& module) {
  // One file mapped once, described twice: the kernel's mmap record (its
  // executable segment) and the preload's ModuleLoad (the whole image),
  // with the same bias. Two Dwfl modules over one range would make the
  // second unusable ("address range overlaps"), so the first one stands,
  // widened to cover both while nothing has been reported from it.
  for (State::Mod& m : state_->modules) {
    if (m.info.path != module.path || m.info.bias != module.bias) continue;
    const uint64_t lo = std::min(m.info.start, module.start);
    const uint64_t hi = std::max(m.info.start + m.info.size, module.start + module.size);
    if (hi - lo > m.info.size + module.size) continue;  // disjoint: a second mapping of its own
    if (m.state == State::ModuleState::pending) {
      m.info.start = lo;
      m.info.size = hi - lo;
      if (m.info.build_id.empty()) m.info.build_id = module.build_id;
      if (m.info.image.empty()) m.info.image = module.image;
    }
    return;
  }
  State::Mod m;
  m.info = module;
  state_->modules.push_back(std::move(m));
}

size_t ProcessUnwinder::module_count() const { return state_->modules.size(); }

void ProcessUnwinder::add_unbacked(uint64_t start, uint64_t size, std::string name) {
  state_->unbacked.push_back({start, size, std::move(name)});
}

const std::vector<symbolizer::ModuleProblem>& ProcessUnwinder::problems() const { return state_->problems; }

UnwoundStack ProcessUnwinder::unwind(const UserSample& sample) {
  UnwoundStack out;
  const bool walked = state_->dwarf_unwind(sample, out);
  const std::vector<uint64_t> chain = u64s(sample.callchain);
  // The callchain is the better answer when DWARF got no further than the
  // sampled pc (no stack copied, or code without CFI), unless the frame
  // register DWARF followed held no frame: the kernel walked the same one.
  if (walked && (out.pcs.size() > 1 || chain.size() <= 1 || out.frame_below_sp)) return out;
  if (!chain.empty()) {
    out.pcs = chain;
    out.method = UnwindMethod::frame_pointer;
    return out;
  }
  if (out.pcs.empty()) {
    const uint64_t ip = sample.ip != 0 ? sample.ip : sample.regs.get(kPerfIp).value_or(0);
    if (ip != 0) out.pcs.push_back(ip);
  }
  out.method = walked ? UnwindMethod::dwarf : UnwindMethod::ip_only;
  return out;
}

}  // namespace spoor::unwind
