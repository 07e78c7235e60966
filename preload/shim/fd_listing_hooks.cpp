// The shim's own descriptors left out of the program's listings of its
// descriptors. Traced, `ls /proc/self/fd` or Python's
// os.listdir("/proc/self/fd") also printed the recorder connection and
// libunwind's pipe (at high numbers, high_descriptors.h), which untraced
// they never show: tracing changed what the program printed.
//
// A directory opened by a name of this process's descriptor table
// (/proc/self/fd, /dev/fd, /proc/<pid>/fd, /proc/thread-self/fd, a task's
// fd, and the same for fdinfo) is noted at opendir or fdopendir; readdir
// on it skips the entries that name the shim's descriptors. Listings made
// with the getdents64 system call itself are not filtered.
//
// Cost: opendir compares the name; fdopendir makes an fstat (and reads
// the descriptor's link when it lies on /proc); readdir of any other
// directory, one relaxed load while no descriptor table is open.
#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <climits>
#include <cstring>

#include "io_interpose.h"
#include "io_provider.h"

namespace spoor::preload {
namespace {

using OpendirFn = DIR* (*)(const char*);
using FdopendirFn = DIR* (*)(int);
using ClosedirFn = int (*)(DIR*);
using ReaddirFn = dirent* (*)(DIR*);
using Readdir64Fn = dirent64* (*)(DIR*);

constinit NextFunction<OpendirFn> g_opendir{"opendir"};
constinit NextFunction<FdopendirFn> g_fdopendir{"fdopendir"};
constinit NextFunction<ClosedirFn> g_closedir{"closedir"};
constinit NextFunction<ReaddirFn> g_readdir{"readdir"};
constinit NextFunction<Readdir64Fn> g_readdir64{"readdir64"};

// The descriptor tables open now. A program lists them one at a time; one
// that opens more than this many at once sees the shim's in the others.
constexpr int kTables = 8;
constinit std::atomic<DIR*> g_table[kTables] = {};
constinit std::atomic<int> g_tables_open{0};

// The path's next component, if it is `name`: what follows it ("" at the
// end), else null.
const char* after_component(const char* path, const char* name) {
  const size_t n = std::strlen(name);
  if (std::strncmp(path, name, n) != 0 || (path[n] != '/' && path[n] != '\0')) return nullptr;
  path += n;
  while (*path == '/') ++path;
  return path;
}

// The same for a component of digits, its value in *value.
const char* after_number(const char* path, long* value) {
  long n = 0;
  const char* c = path;
  for (; *c >= '0' && *c <= '9' && n < INT_MAX; ++c) n = n * 10 + (*c - '0');
  if (c == path || (*c != '/' && *c != '\0')) return nullptr;
  *value = n;
  while (*c == '/') ++c;
  return c;
}

// "fd" or "fdinfo", and nothing after.
bool names_table(const char* rest) {
  const char* end = after_component(rest, "fd");
  if (end == nullptr) end = after_component(rest, "fdinfo");
  return end != nullptr && *end == '\0';
}

bool names_own_descriptor_table(const char* path) {
  if (path == nullptr) return false;
  if (const char* rest = after_component(path, "/dev"); rest != nullptr) return names_table(rest);
  const char* rest = after_component(path, "/proc");
  if (rest == nullptr) return false;
  if (const char* r = after_component(rest, "thread-self"); r != nullptr) return names_table(r);
  const char* process = after_component(rest, "self");
  long pid = 0;
  if (process == nullptr && ((process = after_number(rest, &pid)) == nullptr || pid != getpid())) return false;
  if (names_table(process)) return true;
  // A thread's: task/<tid>/fd.
  const char* task = after_component(process, "task");
  long tid = 0;
  return task != nullptr && (task = after_number(task, &tid)) != nullptr && names_table(task);
}

// Whether `fd` lies on /proc, by its device: a tree walker (find, fts)
// opens every directory with fdopendir, and an fstat costs a fifth of
// reading the descriptor's link (19,532 of them for `find /usr` here).
std::atomic<uint64_t> g_proc_device{0};  // 0: not looked up yet
bool on_proc(int fd) {
  const int kept = errno;
  struct stat st{};
  uint64_t proc = g_proc_device.load(std::memory_order_relaxed);
  if (proc == 0 && syscall(SYS_newfstatat, AT_FDCWD, "/proc/self", &st, 0) == 0) {
    proc = st.st_dev;
    g_proc_device.store(proc, std::memory_order_relaxed);
  }
  const bool on = proc != 0 && syscall(SYS_fstat, fd, &st) == 0 && st.st_dev == proc;
  errno = kept;
  return on;
}

void note_table(DIR* dir) {
  for (auto& slot : g_table) {
    DIR* empty = nullptr;
    if (slot.compare_exchange_strong(empty, dir, std::memory_order_relaxed)) {
      g_tables_open.fetch_add(1, std::memory_order_relaxed);
      return;
    }
  }
}

bool is_table(DIR* dir) {
  for (const auto& slot : g_table)
    if (slot.load(std::memory_order_relaxed) == dir) return true;
  return false;
}

void forget_table(DIR* dir) {
  for (auto& slot : g_table) {
    DIR* expected = dir;
    if (slot.compare_exchange_strong(expected, nullptr, std::memory_order_relaxed)) {
      g_tables_open.fetch_sub(1, std::memory_order_relaxed);
      return;
    }
  }
}

// The C library's function could not be found (inside a lookup on this
// thread): no directory can be read now.
template <class T>
T no_next_function(T failed) {
  errno = ENOSYS;
  return failed;
}

// errno kept: a program tells the end of a directory from a failure by
// errno, and the connection's check is an fstat that may fail.
bool names_shims_descriptor(const char* name) {
  const int kept = errno;
  long fd = 0;
  const bool shims = after_number(name, &fd) != nullptr && shim_owns_descriptor(static_cast<int>(fd));
  errno = kept;
  return shims;
}

// The next entry of `dir` that is not the shim's.
template <class Entry, class Next>
Entry* next_entry(Next next, DIR* dir) {
  Entry* entry = next(dir);
  if (SPOOR_LIKELY(g_tables_open.load(std::memory_order_relaxed) == 0) || !is_table(dir)) return entry;
  while (entry != nullptr && names_shims_descriptor(entry->d_name)) entry = next(dir);
  return entry;
}

}  // namespace
}  // namespace spoor::preload

using namespace spoor::preload;

extern "C" {

SPOOR_INTERPOSE DIR* opendir(const char* path) {
  const OpendirFn next = g_opendir.get();
  if (SPOOR_UNLIKELY(next == nullptr)) return no_next_function<DIR*>(nullptr);
  DIR* dir = next(path);
  if (dir != nullptr && names_own_descriptor_table(path)) note_table(dir);
  return dir;
}

SPOOR_INTERPOSE DIR* fdopendir(int fd) {
  const FdopendirFn next = g_fdopendir.get();
  if (SPOOR_UNLIKELY(next == nullptr)) return no_next_function<DIR*>(nullptr);
  DIR* dir = next(fd);
  if (dir != nullptr && on_proc(fd)) {
    char path[PATH_MAX];
    const size_t length = fd_link(fd, path, sizeof path - 1);
    path[length] = '\0';
    if (length > 0 && names_own_descriptor_table(path)) note_table(dir);
  }
  return dir;
}

SPOOR_INTERPOSE int closedir(DIR* dir) {
  const ClosedirFn next = g_closedir.get();
  if (SPOOR_UNLIKELY(next == nullptr)) return no_next_function(-1);
  // Before the call: once closed, the same address may be the next
  // opendir's.
  if (g_tables_open.load(std::memory_order_relaxed) != 0) forget_table(dir);
  return next(dir);
}

SPOOR_INTERPOSE dirent* readdir(DIR* dir) {
  const ReaddirFn next = g_readdir.get();
  if (SPOOR_UNLIKELY(next == nullptr)) return no_next_function<dirent*>(nullptr);
  return next_entry<dirent>(next, dir);
}

SPOOR_INTERPOSE dirent64* readdir64(DIR* dir) {
  const Readdir64Fn next = g_readdir64.get();
  if (SPOOR_UNLIKELY(next == nullptr)) return no_next_function<dirent64*>(nullptr);
  return next_entry<dirent64>(next, dir);
}

}  // extern "C"
