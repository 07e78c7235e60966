#include "sample_capture.h"

#include <elf.h>
#include <link.h>
#include <pthread.h>
#include <signal.h>
#include <sys/auxv.h>
#include <sys/ucontext.h>
#include <time.h>
#include <unistd.h>

#include <atomic>
#include <cstdio>
#include <cstring>
#include <fstream>

#include "spoor/unwind/perf_regs.h"

namespace spoor::testing {
namespace {

namespace uw = spoor::unwind;

// Preallocated before the timer starts: the handler only copies.
struct Slots {
  std::vector<uint64_t> regs;    // count * kRegs
  std::vector<uint8_t> stacks;   // count * stack_bytes
  std::vector<size_t> sizes;     // bytes kept per sample
  size_t count = 0;
  size_t stack_bytes = 0;
  uintptr_t stack_top = 0;
  std::atomic<size_t> used{0};
  timer_t timer{};
};
Slots g_slots;

// perf's register order for kPerfRegsDwarfMask, from ucontext's gregs.
constexpr int kRegs = 17;
constexpr int kGregOfPerf[kRegs] = {
    REG_RAX, REG_RBX, REG_RCX, REG_RDX, REG_RSI, REG_RDI, REG_RBP, REG_RSP, REG_RIP,  // bits 0-8
    REG_R8,  REG_R9,  REG_R10, REG_R11, REG_R12, REG_R13, REG_R14, REG_R15,          // bits 16-23
};

void on_timer(int, siginfo_t*, void* context) {
  const size_t i = g_slots.used.load(std::memory_order_relaxed);
  if (i >= g_slots.count) return;
  const auto* uc = static_cast<const ucontext_t*>(context);
  uint64_t* regs = &g_slots.regs[i * kRegs];
  for (int r = 0; r < kRegs; ++r) regs[r] = static_cast<uint64_t>(uc->uc_mcontext.gregs[kGregOfPerf[r]]);
  const uintptr_t sp = static_cast<uintptr_t>(uc->uc_mcontext.gregs[REG_RSP]);
  // The interrupted code's stack is intact above its sp: the signal frame
  // was pushed below it.
  size_t n = sp < g_slots.stack_top ? g_slots.stack_top - sp : 0;
  if (n > g_slots.stack_bytes) n = g_slots.stack_bytes;
  std::memcpy(&g_slots.stacks[i * g_slots.stack_bytes], reinterpret_cast<const void*>(sp), n);
  g_slots.sizes[i] = n;
  g_slots.used.store(i + 1, std::memory_order_release);
}

uintptr_t main_stack_top() {
  pthread_attr_t attr;
  void* addr = nullptr;
  size_t size = 0;
  pthread_getattr_np(pthread_self(), &attr);
  pthread_attr_getstack(&attr, &addr, &size);
  pthread_attr_destroy(&attr);
  return reinterpret_cast<uintptr_t>(addr) + size;
}

std::vector<uint8_t> build_id_of(const dl_phdr_info* info) {
  for (int i = 0; i < info->dlpi_phnum; ++i) {
    const ElfW(Phdr)& ph = info->dlpi_phdr[i];
    if (ph.p_type != PT_NOTE) continue;
    const auto* p = reinterpret_cast<const uint8_t*>(info->dlpi_addr + ph.p_vaddr);
    const uint8_t* end = p + ph.p_memsz;
    while (p + sizeof(ElfW(Nhdr)) <= end) {
      const auto* n = reinterpret_cast<const ElfW(Nhdr)*>(p);
      const uint8_t* name = p + sizeof(ElfW(Nhdr));
      const uint8_t* desc = name + ((n->n_namesz + 3) & ~3u);
      if (n->n_type == NT_GNU_BUILD_ID && n->n_namesz == 4 && std::memcmp(name, "GNU", 4) == 0)
        return {desc, desc + n->n_descsz};
      p = desc + ((n->n_descsz + 3) & ~3u);
    }
  }
  return {};
}

}  // namespace

void start_capture(size_t count, size_t stack_bytes, unsigned interval_us) {
  g_slots.regs.assign(count * kRegs, 0);
  g_slots.stacks.assign(count * stack_bytes, 0);
  g_slots.sizes.assign(count, 0);
  g_slots.count = count;
  g_slots.stack_bytes = stack_bytes;
  g_slots.stack_top = main_stack_top();
  g_slots.used = 0;
  struct sigaction sa {};
  sa.sa_sigaction = on_timer;
  sa.sa_flags = SA_SIGINFO | SA_RESTART;
  sigaction(SIGPROF, &sa, nullptr);
  sigevent ev{};
  ev.sigev_notify = SIGEV_SIGNAL;
  ev.sigev_signo = SIGPROF;
  timer_create(CLOCK_MONOTONIC, &ev, &g_slots.timer);
  itimerspec its{};
  its.it_interval.tv_nsec = static_cast<long>(interval_us) * 1000;
  its.it_value = its.it_interval;
  timer_settime(g_slots.timer, 0, &its, nullptr);
}

size_t captured() { return g_slots.used.load(std::memory_order_acquire); }
const std::atomic<size_t>& capture_counter() { return g_slots.used; }

std::vector<CapturedSample> stop_capture() {
  timer_delete(g_slots.timer);
  signal(SIGPROF, SIG_IGN);
  std::vector<CapturedSample> out(captured());
  for (size_t i = 0; i < out.size(); ++i) {
    out[i].mask = uw::kPerfRegsDwarfMask;
    out[i].regs.assign(&g_slots.regs[i * kRegs], &g_slots.regs[(i + 1) * kRegs]);
    const uint8_t* s = &g_slots.stacks[i * g_slots.stack_bytes];
    out[i].stack.assign(s, s + g_slots.sizes[i]);
  }
  return out;
}

std::string own_exe() {
  char buf[4096];
  const ssize_t n = readlink("/proc/self/exe", buf, sizeof buf - 1);
  return n > 0 ? std::string(buf, static_cast<size_t>(n)) : std::string();
}

std::vector<FileMapping> own_exe_mappings() {
  const std::string self = own_exe();
  std::vector<FileMapping> out;
  std::ifstream maps("/proc/self/maps");
  std::string line;
  while (std::getline(maps, line)) {
    uint64_t start, end, pgoff;
    char perms[8];
    char path[4096] = "";
    if (std::sscanf(line.c_str(), "%lx-%lx %7s %lx %*s %*s %4095s", &start, &end, perms, &pgoff, path) < 4) continue;
    if (!self.empty() && self == path) out.push_back({start, end, pgoff, perms[2] == 'x'});
  }
  return out;
}

std::vector<symbolizer::ModuleInfo> own_modules() {
  std::vector<symbolizer::ModuleInfo> out;
  dl_iterate_phdr(
      [](dl_phdr_info* info, size_t, void* arg) {
        auto& mods = *static_cast<std::vector<symbolizer::ModuleInfo>*>(arg);
        std::string path = info->dlpi_name != nullptr ? info->dlpi_name : "";
        if (path.empty()) path = own_exe();
        if (path.empty()) return 0;
        if (path.front() != '/') {
          // The vDSO has no file: its image, as spoor record's ModuleImage
          // gives it, read from memory.
          if (path.find("vdso") == std::string::npos) return 0;
          const auto base = static_cast<uintptr_t>(getauxval(AT_SYSINFO_EHDR));
          std::ifstream maps("/proc/self/maps");
          std::string line;
          while (std::getline(maps, line)) {
            if (line.find("[vdso]") == std::string::npos) continue;
            uintptr_t from = 0, to = 0;
            if (std::sscanf(line.c_str(), "%lx-%lx", &from, &to) != 2 || from != base) continue;
            symbolizer::ModuleInfo m;
            m.path = "[vdso]";
            m.bias = info->dlpi_addr;
            m.start = from;
            m.size = to - from;
            m.build_id = build_id_of(info);
            m.image.assign(reinterpret_cast<const uint8_t*>(from), reinterpret_cast<const uint8_t*>(to));
            mods.push_back(std::move(m));
          }
          return 0;
        }
        for (int i = 0; i < info->dlpi_phnum; ++i) {
          const ElfW(Phdr)& ph = info->dlpi_phdr[i];
          if (ph.p_type != PT_LOAD || (ph.p_flags & PF_X) == 0) continue;
          symbolizer::ModuleInfo m;
          m.path = path;
          m.bias = info->dlpi_addr;
          m.start = info->dlpi_addr + ph.p_vaddr;
          m.size = ph.p_memsz;
          m.build_id = build_id_of(info);
          mods.push_back(std::move(m));
        }
        return 0;
      },
      &out);
  return out;
}

namespace {
template <class T>
void put(std::ofstream& f, const T& v) { f.write(reinterpret_cast<const char*>(&v), sizeof v); }
template <class T>
bool get(std::ifstream& f, T& v) { return static_cast<bool>(f.read(reinterpret_cast<char*>(&v), sizeof v)); }
void put_bytes(std::ofstream& f, const void* p, size_t n) {
  put(f, static_cast<uint64_t>(n));
  f.write(static_cast<const char*>(p), static_cast<std::streamsize>(n));
}
template <class T>
bool get_vector(std::ifstream& f, std::vector<T>& v) {
  uint64_t n = 0;
  if (!get(f, n) || n > (uint64_t{1} << 32)) return false;
  v.resize(n / sizeof(T));
  return static_cast<bool>(f.read(reinterpret_cast<char*>(v.data()), static_cast<std::streamsize>(n)));
}
}  // namespace

bool write_capture(const std::string& path, const Capture& c) {
  std::ofstream f(path, std::ios::binary);
  put(f, static_cast<uint64_t>(c.modules.size()));
  for (const auto& m : c.modules) {
    put_bytes(f, m.path.data(), m.path.size());
    put_bytes(f, m.build_id.data(), m.build_id.size());
    put(f, m.bias);
    put(f, m.start);
    put(f, m.size);
    put_bytes(f, m.image.data(), m.image.size());
  }
  put(f, static_cast<uint64_t>(c.samples.size()));
  for (const auto& s : c.samples) {
    put(f, s.mask);
    put_bytes(f, s.regs.data(), s.regs.size() * 8);
    put_bytes(f, s.stack.data(), s.stack.size());
  }
  return static_cast<bool>(f);
}

bool read_capture(const std::string& path, Capture& c) {
  std::ifstream f(path, std::ios::binary);
  uint64_t n = 0;
  if (!get(f, n)) return false;
  c.modules.resize(n);
  for (auto& m : c.modules) {
    std::vector<char> p;
    if (!get_vector(f, p) || !get_vector(f, m.build_id) || !get(f, m.bias) || !get(f, m.start) || !get(f, m.size) ||
        !get_vector(f, m.image))
      return false;
    m.path.assign(p.begin(), p.end());
  }
  if (!get(f, n)) return false;
  c.samples.resize(n);
  for (auto& s : c.samples)
    if (!get(f, s.mask) || !get_vector(f, s.regs) || !get_vector(f, s.stack)) return false;
  return true;
}

}  // namespace spoor::testing
