// Loading libdw when a rule first needs it (libdw_loader.h): the checks
// that make a moment safe for the dynamic loader, and the dlopen.
#include "libdw_loader.h"

#define UNW_LOCAL_ONLY
#include <dlfcn.h>
#include <libunwind.h>
#include <link.h>
#include <pthread.h>
#include <fcntl.h>
#include <sys/auxv.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdint>

#include "rule_cache.h"

namespace spoor::preload {
namespace {

using DlopenFn = void* (*)(const char*, int);

LibDw g_table{};
std::atomic<const LibDw*> g_loaded{nullptr};
std::atomic<bool> g_wanted{false};
enum LoadState : int { kIdle, kLoading, kFailed };  // kFailed: not tried again
std::atomic<int> g_state{kIdle};
// pthread_create ran in this image: libdw was loaded there, or failed to
// load, or (before attach) is loaded at attach; no capture loads it.
std::atomic<bool> g_threads_started{false};
DlopenFn g_dlopen = nullptr;  // the C library's, not the shim's hook
// The process that initialised the loader, renewed in fork children: a
// vfork child (which runs no fork handlers) differs, and shares its
// parent's memory, loader state included.
uint32_t g_pid = 0;
// ld.so's span, and the signal return trampoline every handler returns
// through (glibc's __restore_rt): a frame in either means the thread is
// inside the loader or in a signal handler.
uintptr_t g_loader_start = 0, g_loader_end = 0;
uintptr_t g_restorer = 0;
void (*g_on_loaded)() = nullptr;

int note_loader_span(dl_phdr_info* info, size_t, void*) {
  if (info->dlpi_addr != getauxval(AT_BASE)) return 0;
  uintptr_t lo = UINTPTR_MAX, hi = 0;
  for (int i = 0; i < info->dlpi_phnum; ++i) {
    const ElfW(Phdr)& ph = info->dlpi_phdr[i];
    if (ph.p_type != PT_LOAD) continue;
    const uintptr_t start = info->dlpi_addr + ph.p_vaddr;
    if (start < lo) lo = start;
    if (start + ph.p_memsz > hi) hi = start + ph.p_memsz;
  }
  if (lo < hi) {
    g_loader_start = lo;
    g_loader_end = hi;
  }
  return 1;
}

// The kernel's view of a handler (rt_sigaction's struct, not glibc's).
struct KernelSigaction {
  void* handler;
  unsigned long flags;
  void* restorer;
  uint64_t mask;
};
constexpr unsigned long kSaRestorer = 0x04000000;

// The restorer of the first handler installed with one (glibc gives every
// handler its __restore_rt). 0 when no signal has a handler: then no
// signal frame can be on any stack.
uintptr_t find_restorer() {
  for (int sig = 1; sig < 65; ++sig) {
    KernelSigaction a{};
    if (syscall(SYS_rt_sigaction, sig, nullptr, &a, sizeof a.mask) != 0) continue;
    if (a.handler != nullptr && a.handler != reinterpret_cast<void*>(1) && (a.flags & kSaRestorer) != 0)
      return reinterpret_cast<uintptr_t>(a.restorer);
  }
  return 0;
}

void renew_pid_in_child() {
  g_pid = static_cast<uint32_t>(syscall(SYS_getpid));
  // A fork taken while another thread was loading: that thread is not here.
  int loading = kLoading;
  g_state.compare_exchange_strong(loading, kIdle, std::memory_order_relaxed);
}

template <typename Fn>
bool resolve(void* handle, const char* name, Fn& out) {
  out = reinterpret_cast<Fn>(dlsym(handle, name));
  return out != nullptr;
}

// Called by the one thread that claimed g_state.
const LibDw* load() {
  if (g_dlopen == nullptr) g_dlopen = reinterpret_cast<DlopenFn>(dlsym(RTLD_NEXT, "dlopen"));
  void* handle = g_dlopen != nullptr ? g_dlopen("libdw.so.1", RTLD_NOW | RTLD_LOCAL) : nullptr;
  LibDw t{};
  decltype(&::elf_version) version = nullptr;
  const bool all = handle != nullptr && resolve(handle, "elf_version", version) &&
                   resolve(handle, "elf_begin", t.elf_begin) && resolve(handle, "elf_cntl", t.elf_cntl) &&
                   resolve(handle, "elf_end", t.elf_end) &&
                   resolve(handle, "elf_getdata_rawchunk", t.elf_getdata_rawchunk) &&
                   resolve(handle, "elf_getphdrnum", t.elf_getphdrnum) &&
                   resolve(handle, "gelf_getnote", t.gelf_getnote) && resolve(handle, "gelf_getphdr", t.gelf_getphdr) &&
                   resolve(handle, "dwarf_getcfi_elf", t.dwarf_getcfi_elf) &&
                   resolve(handle, "dwarf_cfi_end", t.dwarf_cfi_end) &&
                   resolve(handle, "dwarf_cfi_addrframe", t.dwarf_cfi_addrframe) &&
                   resolve(handle, "dwarf_frame_info", t.dwarf_frame_info) &&
                   resolve(handle, "dwarf_frame_cfa", t.dwarf_frame_cfa) &&
                   resolve(handle, "dwarf_frame_register", t.dwarf_frame_register);
  if (!all || version(EV_CURRENT) == EV_NONE) {
    g_state.store(kFailed, std::memory_order_release);
    return nullptr;
  }
  g_table = t;
  g_loaded.store(&g_table, std::memory_order_release);
  g_state.store(kIdle, std::memory_order_release);
  if (g_on_loaded != nullptr) g_on_loaded();
  return &g_table;
}

// Near a memory limit, no load (memory_has_room_for_libdw): not marked
// failed, as the limit may be raised.
bool claim_load() {
  if (!memory_has_room_for_libdw()) return false;
  int idle = kIdle;
  return g_state.compare_exchange_strong(idle, kLoading, std::memory_order_acquire);
}

bool in_loader_or_signal_frame(uintptr_t pc) {
  if (pc >= g_loader_start && pc < g_loader_end) return true;
  return g_restorer != 0 && pc >= g_restorer && pc < g_restorer + 16;
}

// A capture cut at its frame limit (every capture under a small
// --stack-depth, or in deep recursion) hides the frames beyond it, where
// the loader or a signal frame may be: the stack is walked again to its
// end before the loader is entered. With libunwind's cursor, frame by
// frame, not into an array: captures also run on small signal stacks.
// Until libdw is loaded, at most kCutWalkChecks times in a process (each
// is a walk of the whole stack by libunwind), after which only whole
// captures may load it. Without this, a process whose captures are all
// cut never loaded libdw, and each capture whose rule needs it went to
// libunwind: malloc_heavy at --stack-depth 2 ran 1.5x slower than at 64.
constexpr int kWholeStackSteps = 4096;
constexpr int kCutWalkChecks = 64;
std::atomic<int> g_cut_walk_checks{0};

bool whole_stack_free_of_loader_and_signal_frames() {
  if (g_cut_walk_checks.fetch_add(1, std::memory_order_relaxed) >= kCutWalkChecks) return false;
  unw_context_t context;
  unw_cursor_t cursor;
  if (unw_getcontext(&context) != 0 || unw_init_local(&cursor, &context) != 0) return false;
  for (int i = 0; i < kWholeStackSteps; ++i) {
    unw_word_t ip = 0;
    if (unw_get_reg(&cursor, UNW_REG_IP, &ip) != 0) return false;
    if (in_loader_or_signal_frame(ip) || unw_is_signal_frame(&cursor) > 0) return false;
    const int step = unw_step(&cursor);
    if (step == 0) return true;  // the outermost frame
    if (step < 0) return false;  // a frame libunwind cannot step out of: what lies beyond is unknown
  }
  return false;
}

}  // namespace

void init_libdw_loader(void (*loaded)()) {
  static std::atomic<bool> done{false};
  if (done.exchange(true)) return;
  g_on_loaded = loaded;
  g_dlopen = reinterpret_cast<DlopenFn>(dlsym(RTLD_NEXT, "dlopen"));
  g_pid = static_cast<uint32_t>(syscall(SYS_getpid));
  dl_iterate_phdr(note_loader_span, nullptr);
  pthread_atfork(nullptr, nullptr, renew_pid_in_child);
  // Threads started before this (a library's constructor): no capture may
  // load it later, so now, in the shim's constructor, where a dlopen is
  // allowed.
  if (g_threads_started.load(std::memory_order_relaxed) && claim_load()) load();
}

const LibDw* libdw() { return g_loaded.load(std::memory_order_acquire); }

bool memory_has_room_for_libdw() {
  constexpr uint64_t kRoom = 64u << 20;
  rlimit space{}, data{};
  if (syscall(SYS_prlimit64, 0, RLIMIT_AS, nullptr, &space) != 0 ||
      syscall(SYS_prlimit64, 0, RLIMIT_DATA, nullptr, &data) != 0)
    return true;  // no limit known: as without the check
  if (space.rlim_cur == RLIM_INFINITY && data.rlim_cur == RLIM_INFINITY) return true;
  // statm: size and data (with the stack), in pages.
  const int saved_errno = errno;
  char text[128] = {};
  const long fd = syscall(SYS_openat, AT_FDCWD, "/proc/self/statm", O_RDONLY | O_CLOEXEC);
  const long got = fd >= 0 ? syscall(SYS_read, fd, text, sizeof text - 1) : -1;
  if (fd >= 0) syscall(SYS_close, fd);
  errno = saved_errno;
  if (got <= 0) return false;  // under a limit, unknown use: no
  uint64_t field[6] = {};
  const char* c = text;
  for (uint64_t& f : field) {
    while (*c == ' ') ++c;
    for (; *c >= '0' && *c <= '9'; ++c) f = f * 10 + static_cast<uint64_t>(*c - '0');
  }
  const uint64_t page = static_cast<uint64_t>(sysconf(_SC_PAGESIZE));
  const auto fits = [&](rlim_t limit, uint64_t pages) {
    return limit == RLIM_INFINITY || (limit > pages * page && limit - pages * page >= kRoom);
  };
  return fits(space.rlim_cur, field[0]) && fits(data.rlim_cur, field[5]);
}

void want_libdw() { g_wanted.store(true, std::memory_order_relaxed); }

bool load_libdw_after_walk(void* const* frames, int count, bool complete) {
  if (!g_wanted.load(std::memory_order_relaxed) || libdw() != nullptr) return false;
  // Each condition below rules out one way the loader could be entered
  // where it must not be (libdw_loader.h). Threads need none: a process
  // that started them tried to load it then (or at attach, if they came
  // first), and has it or failed for good.
  if (!may_build_rule()) return false;
  if (_r_debug.r_state != r_debug::RT_CONSISTENT) return false;  // some dlopen or dlclose is mapping or unmapping
  if (static_cast<uint32_t>(syscall(SYS_getpid)) != g_pid) return false;  // a vfork child
  if (g_restorer == 0) g_restorer = find_restorer();
  for (int i = 0; i < count; ++i)
    if (in_loader_or_signal_frame(reinterpret_cast<uintptr_t>(frames[i]))) return false;
  if (!complete && !whole_stack_free_of_loader_and_signal_frames()) return false;
  return claim_load() && load() != nullptr;
}

void load_libdw_before_threads() {
  if (g_threads_started.exchange(true, std::memory_order_relaxed) || libdw() != nullptr) return;
  // Not before attach (init_libdw_loader: the fast unwinder is in use).
  if (g_pid != 0 && claim_load()) load();
}

const LibDw* load_libdw_now() {
  if (const LibDw* loaded = libdw(); loaded != nullptr) return loaded;
  return claim_load() ? load() : libdw();
}

}  // namespace spoor::preload
