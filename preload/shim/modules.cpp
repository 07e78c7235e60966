// Module scanning with dl_iterate_phdr, and the dlopen/dlclose hooks.
#include "modules.h"

#include <dlfcn.h>
#include <elf.h>
#include <link.h>
#include <sys/auxv.h>
#include <unistd.h>

#include <atomic>
#include <mutex>
#include <new>

#include "build_id.h"
#include "fast_unwind.h"
#include "reentry_guard.h"

namespace spoor::preload {

constinit Provider g_process{"Spoor.Process"};

namespace {

constexpr int kMaxModules = 4096;

// What a ModuleLoad said, kept whole where it fits, so that a fork child
// can say it again in its own streams without reading the module: its
// program headers and notes are pages the child has not mapped yet, a
// page fault each (~10 per fork child of a shell, bench/RESULTS.md).
constexpr uint32_t kKeptBuildId = 64;
struct Known {
  uintptr_t bias;
  uintptr_t start;
  uint64_t size;
  bool present;  // seen in the current scan
  bool whole;    // path and build ID kept whole: describable from here
  uint8_t build_id_size;
  uint8_t build_id[kKeptBuildId];
  char path[256];
};

Known g_known[kMaxModules];
int g_known_count = 0;
// Set in a fork child: the next scan first describes the known modules
// again (the parent's descriptions are in the parent's streams).
bool g_describe_known_again = false;
std::mutex g_scan_mutex;  // scans are rare (attach, after dlopen/dlclose)
// After a dlopen or dlclose, this many hooks check the loader's add/remove
// counters (one dl_iterate_phdr step, ~0.1 us) and rescan when they moved.
// A window, not a one-shot flag: the hooks that run inside dlopen (the
// loader's own allocations) come before the module is in the list.
constexpr int kChecksAfterDlopen = 4096;
std::atomic<int> g_checks_left{0};
unsigned long long g_seen_adds = 0, g_seen_subs = 0;
char g_exe_path[4096];

// The vDSO has no file a symbolizer could open later: its bytes go into
// the trace (ModuleImage). The kernel maps its whole ELF file, and the
// section headers (where a symbolizer finds .dynsym) lie past the loadable
// segments, so the image runs to the end of whichever comes last. Once per
// image, a few KiB: 1 or 2 events.
void write_image_if_vdso(uintptr_t bias, uintptr_t start, uint64_t size, const char* path) {
  if (start == 0 || start != getauxval(AT_SYSINFO_EHDR) || !kModuleImage.enabled()) return;
  const auto* ehdr = reinterpret_cast<const ElfW(Ehdr)*>(start);
  const uint64_t headers_end = ehdr->e_shoff + uint64_t{ehdr->e_shnum} * ehdr->e_shentsize;
  constexpr uint64_t kMaxImage = 1 << 20;  // an ELF header gone wrong never reads far
  if (headers_end > size && headers_end <= kMaxImage) size = headers_end;
  const auto* bytes = reinterpret_cast<const uint8_t*>(start);
  for (uint64_t offset = 0; offset < size; offset += kModuleImageChunk) {
    const uint64_t n = size - offset < kModuleImageChunk ? size - offset : kModuleImageChunk;
    kModuleImage.write(reinterpret_cast<const void*>(bias), path, offset,
                       Blob{bytes + offset, static_cast<uint32_t>(n)});
  }
}

// A module's ModuleLoad, and the vDSO's bytes when it is the vDSO.
void describe_module(uintptr_t bias, uintptr_t start, uint64_t size, const char* path, const uint8_t* build_id,
                     uint32_t build_id_size) {
  kModuleLoad.write(reinterpret_cast<const void*>(bias), reinterpret_cast<const void*>(start), size, path,
                    Blob{build_id, build_id_size});
  write_image_if_vdso(bias, start, size, path);
}

int on_module(dl_phdr_info* info, size_t, void*) {
  g_seen_adds = info->dlpi_adds;
  g_seen_subs = info->dlpi_subs;
  const char* path = info->dlpi_name;
  if (path == nullptr || path[0] == '\0') path = g_exe_path;  // the executable
  for (int i = 0; i < g_known_count; ++i)
    if (g_known[i].bias == info->dlpi_addr && __builtin_strcmp(g_known[i].path, path) == 0) {
      g_known[i].present = true;
      return 0;
    }
  // The span of its loadable segments.
  uintptr_t lo = UINTPTR_MAX, hi = 0;
  for (int i = 0; i < info->dlpi_phnum; ++i) {
    const ElfW(Phdr)& ph = info->dlpi_phdr[i];
    if (ph.p_type != PT_LOAD) continue;
    lo = ph.p_vaddr < lo ? ph.p_vaddr : lo;
    hi = ph.p_vaddr + ph.p_memsz > hi ? ph.p_vaddr + ph.p_memsz : hi;
  }
  const uint8_t* id = nullptr;
  const uint32_t id_size = build_id_in_memory(info, &id);
  const uintptr_t start = info->dlpi_addr + (lo == UINTPTR_MAX ? 0 : lo);
  const uint64_t size = lo == UINTPTR_MAX ? 0 : hi - lo;
  describe_module(info->dlpi_addr, start, size, path, id, id_size);
  if (g_known_count < kMaxModules) {
    Known& k = g_known[g_known_count++];
    k.bias = info->dlpi_addr;
    k.start = start;
    k.size = size;
    k.present = true;
    size_t n = 0;
    while (path[n] && n + 1 < sizeof k.path) {
      k.path[n] = path[n];
      ++n;
    }
    k.path[n] = '\0';
    k.whole = path[n] == '\0' && id_size <= kKeptBuildId;
    k.build_id_size = static_cast<uint8_t>(k.whole ? id_size : 0);
    if (k.whole && id_size > 0) __builtin_memcpy(k.build_id, id, id_size);
  }
  return 0;
}

// In a fork child, before its first scan: each module the parent described
// whole is described again from the table; the others leave it, and the
// scan reads them from the module as it would a new one.
void describe_known_modules_again() {
  g_describe_known_again = false;
  int kept = 0;
  for (int i = 0; i < g_known_count; ++i) {
    const Known& k = g_known[i];
    if (!k.whole) continue;
    describe_module(k.bias, k.start, k.size, k.path, k.build_id, k.build_id_size);
    if (kept != i) g_known[kept] = k;
    ++kept;
  }
  g_known_count = kept;
}

}  // namespace

const char* executable_path() { return g_exe_path; }

void scan_modules() {
  std::lock_guard lock(g_scan_mutex);
  if (g_exe_path[0] == '\0') {
    const ssize_t n = readlink("/proc/self/exe", g_exe_path, sizeof g_exe_path - 1);
    g_exe_path[n > 0 ? n : 0] = '\0';
  }
  if (g_describe_known_again) describe_known_modules_again();
  for (int i = 0; i < g_known_count; ++i) g_known[i].present = false;
  dl_iterate_phdr(on_module, nullptr);
  // Gone since the last scan: unloaded. Compact the table.
  int kept = 0;
  for (int i = 0; i < g_known_count; ++i) {
    if (!g_known[i].present) {
      kModuleUnload.write(reinterpret_cast<const void*>(g_known[i].bias), g_known[i].path);
      continue;
    }
    g_known[kept++] = g_known[i];
  }
  g_known_count = kept;
}

void describe_modules_again_after_fork() {
  // The parent may have held the lock at fork: a fresh one, never unlocked.
  new (&g_scan_mutex) std::mutex;
  g_describe_known_again = true;
}

void note_modules_changed() { g_checks_left.store(kChecksAfterDlopen, std::memory_order_release); }

void rescan_modules_if_changed() {
  if (SPOOR_LIKELY(g_checks_left.load(std::memory_order_relaxed) <= 0)) return;
  g_checks_left.fetch_sub(1, std::memory_order_relaxed);
  struct Counters {
    unsigned long long adds, subs;
  } now{};
  dl_iterate_phdr(
      [](dl_phdr_info* info, size_t, void* out) {
        *static_cast<Counters*>(out) = {info->dlpi_adds, info->dlpi_subs};
        return 1;  // the counters are the same in every entry: stop at the first
      },
      &now);
  if (now.adds != g_seen_adds || now.subs != g_seen_subs) scan_modules();
}

}  // namespace spoor::preload

using namespace spoor::preload;

namespace {
using DlopenFn = void* (*)(const char*, int);
using DlcloseFn = int (*)(void*);
std::atomic<DlopenFn> g_dlopen{nullptr};
std::atomic<DlcloseFn> g_dlclose{nullptr};
}  // namespace

extern "C" {

// dlopen ends in a tail call, so glibc sees the program's return address:
// it searches the caller's RUNPATH and namespace, not the shim's. The scan
// happens in the next hook (a constructor of the new module that allocates
// already finds it in the list).
__attribute__((visibility("default"))) void* dlopen(const char* file, int mode) {
  DlopenFn real = g_dlopen.load(std::memory_order_acquire);
  if (real == nullptr) {
    real = reinterpret_cast<DlopenFn>(dlsym(RTLD_NEXT, "dlopen"));
    g_dlopen.store(real, std::memory_order_release);
  }
  note_modules_changed();
  return real(file, mode);
}

__attribute__((visibility("default"))) int dlclose(void* handle) {
  DlcloseFn real = g_dlclose.load(std::memory_order_acquire);
  if (real == nullptr) {
    real = reinterpret_cast<DlcloseFn>(dlsym(RTLD_NEXT, "dlclose"));
    g_dlclose.store(real, std::memory_order_release);
  }
  note_modules_changed();
  // The unwinder's cached rules may describe the unloaded code, whose
  // addresses the next dlopen can reuse: captures fall back to libunwind
  // while it unloads, and the cache is forgotten after.
  begin_module_unload();
  const int result = real(handle);
  end_module_unload();
  return result;
}

}  // extern "C"
