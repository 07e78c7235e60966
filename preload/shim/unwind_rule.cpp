// Reads x86-64 unwind rules from modules' .eh_frame with libdw. Runs on a
// rule-cache miss only (once per return address), under the fast
// unwinder's build lock, after the recording's shared store
// (shared_rule_store.h) had no rule for it; what it builds goes there for
// the other processes. libdw is called through libdw_loader.h's table,
// loaded by then or asked for. The files are opened with ELF_C_READ_MMAP:
// libelf maps them instead of reading them into the heap.
#include "unwind_rule.h"

#include <dwarf.h>
#include <elfutils/libdw.h>
#include <fcntl.h>
#include <gelf.h>
#include <link.h>
#include <sys/auxv.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <unistd.h>

#include <atomic>
#include <bit>
#include <cerrno>
#include <cstdlib>
#include <cstring>

#include "build_id.h"
#include "libdw_loader.h"
#include "shared_rule_store.h"

namespace spoor::preload {
namespace {

// DWARF register numbers (x86-64 psABI).
constexpr int kRegRbp = 6;
constexpr int kRegRsp = 7;
constexpr int kRegRa = 16;

struct Module {
  uintptr_t start, end;  // the span of its PT_LOAD segments, in memory
  uintptr_t bias;
  uint64_t shared_key;  // its key in the recording's rule store; 0: not shared
  bool opened;          // its file was looked at (elf and cfi below are final)
  Elf* elf;
  Dwarf_CFI* cfi;  // null: no usable unwind tables (every rule unsupported)
  // Kept from identify_module for open_tables.
  bool is_vdso;
  uint32_t build_id_size;
  uint8_t build_id[64];
  char path[512];
};

constexpr int kMaxModules = 512;
Module g_modules[kMaxModules];
int g_module_count = 0;
uint64_t g_modules_generation = 0;
unsigned long long g_subs_seen = 0;
unsigned long long g_adds_seen = 0;
// Whether this generation holds a frame-chain guess (below): a module
// loaded where code without a module was would make it stale.
bool g_guessed = false;
// libdw and libelf (libdw_loader.h): set by describe_unwind_rule once loaded;
// every function below that calls them runs after it.
const LibDw* g_dw = nullptr;
constinit thread_local uint64_t t_rules_from_store __attribute__((tls_model("initial-exec"))) = 0;

// The modules identified in this generation, as a capture that may not
// take the build lock reads them (a CPU sample's walk, in its signal
// handler; a hook inside the allocator): the span, bias and store key of
// each, behind a sequence number per entry (odd while it is written), so
// that a reader never mixes two modules' fields. Written under the build
// lock with g_modules; readers take no lock and call nothing.
struct ModuleSpan {
  std::atomic<uint64_t> sequence;
  std::atomic<uint64_t> generation;
  std::atomic<uintptr_t> start, end, bias;
  std::atomic<uint64_t> key;
};
ModuleSpan g_spans[kMaxModules];
std::atomic<int> g_span_count{0};

void publish_span(int index, const Module& m) {
  ModuleSpan& s = g_spans[index];
  const uint64_t sequence = s.sequence.load(std::memory_order_relaxed);
  s.sequence.store(sequence + 1, std::memory_order_relaxed);
  std::atomic_thread_fence(std::memory_order_release);  // odd before the fields change
  s.generation.store(g_modules_generation, std::memory_order_relaxed);
  s.start.store(m.start, std::memory_order_relaxed);
  s.end.store(m.end, std::memory_order_relaxed);
  s.bias.store(m.bias, std::memory_order_relaxed);
  s.key.store(m.shared_key, std::memory_order_relaxed);
  s.sequence.store(sequence + 2, std::memory_order_release);
  if (g_span_count.load(std::memory_order_relaxed) <= index) g_span_count.store(index + 1, std::memory_order_release);
}

void forget_modules() {
  g_span_count.store(0, std::memory_order_release);
  for (int i = 0; i < g_module_count; ++i) {
    if (g_modules[i].cfi != nullptr) g_dw->dwarf_cfi_end(g_modules[i].cfi);
    if (g_modules[i].elf != nullptr) g_dw->elf_end(g_modules[i].elf);
  }
  g_module_count = 0;
}

// What dl_iterate_phdr tells about the module holding an address.
struct Found {
  uintptr_t address;
  bool found;
  bool is_vdso;
  uintptr_t start, end, bias;
  char path[512];
  uint8_t build_id[64];
  uint32_t build_id_size;
};

int find_module(dl_phdr_info* info, size_t, void* context) {
  auto* f = static_cast<Found*>(context);
  uintptr_t lo = UINTPTR_MAX, hi = 0;
  bool holds = false;
  for (int i = 0; i < info->dlpi_phnum; ++i) {
    const ElfW(Phdr)& ph = info->dlpi_phdr[i];
    if (ph.p_type != PT_LOAD) continue;
    const uintptr_t seg = info->dlpi_addr + ph.p_vaddr;
    lo = seg < lo ? seg : lo;
    hi = seg + ph.p_memsz > hi ? seg + ph.p_memsz : hi;
    if (f->address >= seg && f->address < seg + ph.p_memsz) holds = true;
  }
  if (!holds) return 0;
  f->found = true;
  f->start = lo;
  f->end = hi;
  f->bias = info->dlpi_addr;
  f->is_vdso = lo == getauxval(AT_SYSINFO_EHDR);
  const char* name = info->dlpi_name;
  // The executable has an empty name; /proc/self/exe opens it even when
  // its path has changed since.
  if (name == nullptr || name[0] == '\0') name = "/proc/self/exe";
  const size_t n = std::strlen(name);
  if (n < sizeof f->path) std::memcpy(f->path, name, n + 1);
  else f->path[0] = '\0';
  const uint8_t* id = nullptr;
  f->build_id_size = build_id_in_memory(info, &id);
  if (f->build_id_size > sizeof f->build_id) f->build_id_size = 0;
  if (f->build_id_size != 0) std::memcpy(f->build_id, id, f->build_id_size);
  return 1;
}

// True when the file's GNU build ID note is `id` (or neither has one).
bool file_has_build_id(Elf* elf, const uint8_t* id, uint32_t size) {
  size_t phnum = 0;
  if (g_dw->elf_getphdrnum(elf, &phnum) != 0) return false;
  for (size_t i = 0; i < phnum; ++i) {
    GElf_Phdr ph;
    if (g_dw->gelf_getphdr(elf, static_cast<int>(i), &ph) == nullptr || ph.p_type != PT_NOTE) continue;
    Elf_Data* data = g_dw->elf_getdata_rawchunk(elf, static_cast<int64_t>(ph.p_offset), ph.p_filesz, ELF_T_NHDR);
    if (data == nullptr) continue;
    GElf_Nhdr note;
    size_t name_at = 0, desc_at = 0;
    for (size_t at = 0; (at = g_dw->gelf_getnote(data, at, &note, &name_at, &desc_at)) > 0;) {
      const char* bytes = static_cast<const char*>(data->d_buf);
      if (note.n_type == NT_GNU_BUILD_ID && note.n_namesz == 4 && std::memcmp(bytes + name_at, "GNU", 4) == 0)
        return note.n_descsz == size && std::memcmp(bytes + desc_at, id, size) == 0;
    }
  }
  return size == 0;
}

// Whether the module has a file whose tables libdw can read (the vDSO and
// a module without a path have none; their rules stay with the process).
bool has_file(const Module& m) { return !m.is_vdso && m.path[0] != '\0'; }

// Finds the module holding `address` and notes what identifies it (span,
// bias, build ID, path), reading only the loader's list and the module's
// notes in memory; null when no module holds it or the table is full. Its
// file is opened later, only for a rule the shared store does not have.
Module* identify_module(uintptr_t address) {
  if (g_module_count == kMaxModules) return nullptr;
  Found f{};
  f.address = address;
  dl_iterate_phdr(find_module, &f);
  if (!f.found) return nullptr;
  Module& m = g_modules[g_module_count++];
  m = Module{};
  m.start = f.start;
  m.end = f.end;
  m.bias = f.bias;
  m.is_vdso = f.is_vdso;
  m.build_id_size = f.build_id_size;
  std::memcpy(m.build_id, f.build_id, f.build_id_size);
  std::memcpy(m.path, f.path, sizeof m.path);
  // The vDSO has no file (and no allocator calls inside): left unusable.
  m.shared_key = has_file(m) ? shared_rule_module_key(f.build_id, f.build_id_size) : 0;
  publish_span(static_cast<int>(&m - g_modules), m);
  return &m;
}

// Opens the module's unwind tables, once.
void open_tables(Module& m) {
  if (m.opened) return;
  m.opened = true;
  if (!has_file(m)) return;
  const int fd = open(m.path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) return;
  m.elf = g_dw->elf_begin(fd, ELF_C_READ_MMAP, nullptr);
  // Everything is mapped now; the descriptor can go (and a program that
  // closes descriptors it does not know cannot pull it from under libelf).
  if (m.elf != nullptr) g_dw->elf_cntl(m.elf, ELF_C_FDDONE);
  close(fd);
  if (m.elf == nullptr) return;
  // A file replaced since it was loaded would give another module's rules.
  if (!file_has_build_id(m.elf, m.build_id, m.build_id_size)) return;
  m.cfi = g_dw->dwarf_getcfi_elf(m.elf);
}

Module* module_for(uintptr_t address, bool* in_no_module) {
  for (int i = 0; i < g_module_count; ++i)
    if (address >= g_modules[i].start && address < g_modules[i].end) return &g_modules[i];
  const bool room = g_module_count < kMaxModules;
  Module* m = identify_module(address);
  *in_no_module = m == nullptr && room;
  return m;
}

}  // namespace

bool read_own_memory(void* out, uintptr_t address, size_t size) {
  iovec local{out, size};
  iovec remote{reinterpret_cast<void*>(address), size};
  const int saved = errno;  // the program's, in the hook that captures
  const long got = syscall(SYS_process_vm_readv, syscall(SYS_getpid), &local, 1, &remote, 1, 0);
  errno = saved;
  return got == static_cast<long>(size);
}

// Code in no module (a JIT's: the JVM's interpreter and compiled methods,
// V8's, LuaJIT's) has no unwind table, nor has some code in modules.
// libunwind then guesses that rbp is a frame pointer (CFA = rbp + 16, the
// return address just below, the caller's rbp below that), which is how
// such code keeps its frames, and checks each load with system calls
// (mincore, a pipe's write and read): a JVM's captures took ~6 us each. The same guess as a rule keeps those
// walks on the fast path, whose loads stay within the thread's stack; a
// guess that leaves it still goes to libunwind.
UnwindRule frame_chain_guess() {
  UnwindRule rule;
  rule.kind = UnwindRule::kFromRbp;
  rule.ra_word = -1;
  rule.rbp_word = -2;
  rule.lowest_word = -2;
  rule.cfa_offset = 16;
  return rule;
}

// CPython's perf trampoline (Python 3.12 and later, with -X perf or
// PYTHONPERFSUPPORT=1): one copy per Python function, in anonymous memory
// named in the perf map, of
//   sub $8, %rsp; call *%rcx; add $8, %rsp; ret
// It keeps no frame pointer, so the guess above misses it (and libunwind
// ends the stack there): at its call, CFA = rsp + 16 and the return
// address just below. Its bytes are read with process_vm_readv, which
// fails instead of faulting where `address` is no readable code (a bad
// return address); once per address, as every rule.
constexpr unsigned char kCpythonTrampoline[] = {0x48, 0x83, 0xec, 0x08, 0xff, 0xd1, 0x48, 0x83, 0xc4, 0x08, 0xc3};
constexpr uintptr_t kCpythonTrampolineReturn = 6;  // the return address's offset in it

bool is_cpython_trampoline_call(uintptr_t address) {
  const uintptr_t start = address + 1 - kCpythonTrampolineReturn;  // address: the return address - 1
  unsigned char bytes[sizeof kCpythonTrampoline];
  return read_own_memory(bytes, start, sizeof bytes) && std::memcmp(bytes, kCpythonTrampoline, sizeof bytes) == 0;
}

// Go's runtime.asmcgocall (amd64; Go 1.19's code) runs a cgo
// call's C function on the thread's system stack, after
//   call *%rax
//   mov 0x30(%rsp),%rdi      g, saved there before the call
//   mov 0x8(%rdi),%rsi       g.stack.hi
//   sub 0x28(%rsp),%rsi      minus the goroutine stack's depth, saved too
// (then %rsi is the goroutine's sp, its return address on top). The C
// frames' unwind tables lead to this return address; neither the rbp
// guess nor libunwind goes on from there (the goroutine's stack is
// another stack), and a C allocation's stack ended at asmcgocall. The
// bytes are matched exactly: another Go's other layout keeps the guess.
constexpr unsigned char kGoAsmcgocallCall[] = {0xff, 0xd0};
constexpr unsigned char kGoAsmcgocallReturn[] = {0x48, 0x8b, 0x7c, 0x24, 0x30, 0x48, 0x8b, 0x77,
                                                 0x08, 0x48, 0x2b, 0x74, 0x24, 0x28};

bool is_go_asmcgocall_return(uintptr_t address) {
  unsigned char bytes[sizeof kGoAsmcgocallCall + sizeof kGoAsmcgocallReturn];
  return read_own_memory(bytes, address + 1 - sizeof kGoAsmcgocallCall, sizeof bytes) &&
         std::memcmp(bytes, kGoAsmcgocallCall, sizeof kGoAsmcgocallCall) == 0 &&
         std::memcmp(bytes + sizeof kGoAsmcgocallCall, kGoAsmcgocallReturn, sizeof kGoAsmcgocallReturn) == 0;
}

UnwindRule go_system_stack_rule() {
  UnwindRule rule;
  rule.kind = UnwindRule::kGoSystemStack;
  return rule;
}

namespace {

UnwindRule cpython_trampoline_rule() {
  UnwindRule rule;
  rule.kind = UnwindRule::kFromRsp;
  rule.ra_word = -1;
  rule.lowest_word = -1;
  rule.cfa_offset = 16;
  return rule;
}

// The location rule "saved at CFA + offset" as libdw spells it:
// DW_OP_call_frame_cfa, then DW_OP_plus_uconst offset unless it is 0.
bool saved_at_cfa_offset(const Dwarf_Op* ops, size_t nops, int64_t* offset) {
  if (nops == 0 || ops[0].atom != DW_OP_call_frame_cfa) return false;
  if (nops == 1) {
    *offset = 0;
    return true;
  }
  if (nops != 2 || ops[1].atom != DW_OP_plus_uconst) return false;
  *offset = static_cast<int64_t>(ops[1].number);
  return true;
}

// A saved slot below the CFA, in 8-byte words (-1..-128); 0 when it is not
// one the fast path handles.
int8_t slot_word(int64_t offset) {
  if (offset >= 0 || offset < -1024 || offset % 8 != 0) return 0;
  return static_cast<int8_t>(offset / 8);
}

UnwindRule rule_from_frame(Dwarf_Frame* frame) {
  UnwindRule rule;
  bool signal_frame = false;
  if (g_dw->dwarf_frame_info(frame, nullptr, nullptr, &signal_frame) != kRegRa || signal_frame) return rule;

  Dwarf_Op* ops = nullptr;
  size_t nops = 0;
  if (g_dw->dwarf_frame_cfa(frame, &ops, &nops) != 0 || nops != 1 || ops[0].atom != DW_OP_bregx) return rule;
  if (ops[0].number != kRegRsp && ops[0].number != kRegRbp) return rule;
  const bool cfa_from_rbp = ops[0].number == kRegRbp;
  const auto cfa_offset = static_cast<int64_t>(ops[0].number2);
  if (cfa_offset < INT32_MIN || cfa_offset > INT32_MAX) return rule;

  Dwarf_Op mem[3];
  // The return address: undefined ends the stack (_start, clone's child).
  if (g_dw->dwarf_frame_register(frame, kRegRa, mem, &ops, &nops) < 0) return rule;
  if (nops == 0 && ops != nullptr) {
    rule.kind = UnwindRule::kOutermost;
    return rule;
  }
  int64_t ra_offset = 0;
  if (!saved_at_cfa_offset(ops, nops, &ra_offset) || slot_word(ra_offset) == 0) return rule;

  // rbp: unchanged, or saved in this frame.
  if (g_dw->dwarf_frame_register(frame, kRegRbp, mem, &ops, &nops) < 0) return rule;
  int8_t rbp_word = 0;
  if (nops != 0 || ops != nullptr) {
    int64_t rbp_offset = 0;
    if (!saved_at_cfa_offset(ops, nops, &rbp_offset) || (rbp_word = slot_word(rbp_offset)) == 0) return rule;
  }

  // rsp: the CFA itself, which is the ABI's default (a value rule); an
  // explicit other rule is unusual enough to leave to libunwind.
  if (g_dw->dwarf_frame_register(frame, kRegRsp, mem, &ops, &nops) < 0) return rule;
  const bool rsp_is_cfa = (nops == 2 && ops[0].atom == DW_OP_call_frame_cfa && ops[1].atom == DW_OP_stack_value) ||
                          (nops == 3 && ops[0].atom == DW_OP_call_frame_cfa && ops[1].atom == DW_OP_plus_uconst &&
                           ops[1].number == 0 && ops[2].atom == DW_OP_stack_value);
  if (!rsp_is_cfa) return rule;

  rule.ra_word = slot_word(ra_offset);
  rule.rbp_word = rbp_word;
  rule.lowest_word = rbp_word != 0 && rbp_word < rule.ra_word ? rbp_word : rule.ra_word;
  rule.cfa_offset = static_cast<int32_t>(cfa_offset);
  if (!cfa_from_rbp && (cfa_offset <= 0 || cfa_offset + 8 * rule.lowest_word < 0)) return rule;
  rule.kind = cfa_from_rbp ? UnwindRule::kFromRbp : UnwindRule::kFromRsp;
  return rule;
}

// A rule from the shared store is another process's word: it is taken
// only when it keeps what the walk relies on without checking (a stray
// write into the store must not send a walk below the stack pointer).
// Every rule describe_unwind_rule makes keeps these.
bool keeps_walk_invariants(const UnwindRule& r) {
  switch (r.kind) {
    case UnwindRule::kOutermost:
    case UnwindRule::kUnsupported:
    case UnwindRule::kGoSystemStack:
      return true;
    case UnwindRule::kFromRsp:
    case UnwindRule::kFromRbp: {
      const bool slots = r.ra_word < 0 && r.rbp_word <= 0 && r.lowest_word <= r.ra_word &&
                         (r.rbp_word == 0 || r.lowest_word <= r.rbp_word) &&
                         (r.lowest_word == r.ra_word || r.lowest_word == r.rbp_word);
      if (r.kind == UnwindRule::kFromRbp) return slots;
      return slots && r.cfa_offset > 0 && r.cfa_offset + 8 * r.lowest_word >= 0;
    }
    default:
      return false;
  }
}

// The store's rule for `offset` in module `key`, when it has one the walk
// may take; 0 otherwise. One an earlier recording kept is published into
// the store's slots, where the next lookup (any process's) finds it.
uint64_t usable_stored_rule(uint64_t key, uint64_t offset) {
  uint64_t bits = find_shared_rule(key, offset);
  if (bits == 0 && (bits = find_kept_rule(key, offset)) != 0) publish_shared_rule(key, offset, bits);
  return bits != 0 && keeps_walk_invariants(std::bit_cast<UnwindRule>(bits)) ? bits : 0;
}

}  // namespace

UnwindRule describe_unwind_rule(uintptr_t address, uint64_t generation) {
  if (generation != g_modules_generation) {
    forget_modules();  // some module was unloaded: its file is not the one at its addresses now
    g_modules_generation = generation;
    g_guessed = false;
  }
  bool in_no_module = false;
  Module* m = module_for(address, &in_no_module);
  if (in_no_module) {
    // A rule for code in no module goes stale when a module is loaded
    // where that code was (a module's own code stays what it is until
    // the module is unloaded).
    g_guessed = true;
    return is_cpython_trampoline_call(address) ? cpython_trampoline_rule() : frame_chain_guess();
  }
  if (m == nullptr) return UnwindRule{};
  const uint64_t offset = address - m->bias;
  // Built by this or another process of the recording: no file opened.
  if (const uint64_t stored = usable_stored_rule(m->shared_key, offset); stored != 0) {
    ++t_rules_from_store;
    return std::bit_cast<UnwindRule>(stored);
  }
  // A rule the store lacks: libdw reads it from the module's file, once
  // loaded. Until then the capture goes to libunwind, and asks for libdw
  // (libdw_loader.h).
  g_dw = libdw();
  if (g_dw == nullptr && !m->opened && has_file(*m)) {
    want_libdw();
    return UnwindRule{UnwindRule::kNone};
  }
  // Near a memory limit libdw is not used (libdw_loader.h): a thread's
  // first call into it may allocate its thread-local data.
  if (!memory_has_room_for_libdw()) return UnwindRule{UnwindRule::kNone};
  open_tables(*m);
  // A Go executable's own code has no .eh_frame (only its cgo objects do).
  // (Not shared: another process may read the file that this one cannot.)
  if (m->cfi == nullptr) return is_go_asmcgocall_return(address) ? go_system_stack_rule() : UnwindRule{};
  Dwarf_Frame* frame = nullptr;
  UnwindRule rule;
  // Code its module's table does not cover (V8's builtins in node's
  // executable, hand-written assembly without CFI, Go's code): libunwind
  // guesses the same there. (A module whose file cannot be read keeps
  // kUnsupported: libunwind reads the table from memory, which may have
  // more.) Both follow from the module's bytes alone, as the table does.
  if (g_dw->dwarf_cfi_addrframe(m->cfi, offset, &frame) != 0) {
    rule = is_go_asmcgocall_return(address) ? go_system_stack_rule() : frame_chain_guess();
  } else {
    rule = rule_from_frame(frame);
    std::free(frame);
  }
  publish_shared_rule(m->shared_key, offset, std::bit_cast<uint64_t>(rule));
  return rule;
}

uint64_t rules_from_store_here() { return t_rules_from_store; }

uint64_t rule_from_store_alone(uintptr_t address, uint64_t generation) {
  const int count = g_span_count.load(std::memory_order_acquire);
  for (int i = 0; i < count && i < kMaxModules; ++i) {
    const ModuleSpan& s = g_spans[i];
    const uint64_t before = s.sequence.load(std::memory_order_acquire);
    if (before & 1) continue;  // being written
    const uint64_t span_generation = s.generation.load(std::memory_order_relaxed);
    const uintptr_t start = s.start.load(std::memory_order_relaxed);
    const uintptr_t end = s.end.load(std::memory_order_relaxed);
    const uintptr_t bias = s.bias.load(std::memory_order_relaxed);
    const uint64_t key = s.key.load(std::memory_order_relaxed);
    std::atomic_thread_fence(std::memory_order_acquire);  // the fields read before the check below
    if (s.sequence.load(std::memory_order_relaxed) != before) continue;
    if (span_generation != generation || address < start || address >= end) continue;
    return usable_stored_rule(key, address - bias);
  }
  return 0;
}

bool modules_changed_since_last_check() {
  struct Counts {
    unsigned long long adds = 0, subs = 0;
  } counts;
  dl_iterate_phdr(
      [](dl_phdr_info* info, size_t, void* out) {
        *static_cast<Counts*>(out) = {info->dlpi_adds, info->dlpi_subs};
        return 1;  // the same in every entry: the first is enough
      },
      &counts);
  const bool moved = counts.subs != g_subs_seen || (g_guessed && counts.adds != g_adds_seen);
  g_subs_seen = counts.subs;
  g_adds_seen = counts.adds;
  return moved;
}

}  // namespace spoor::preload
