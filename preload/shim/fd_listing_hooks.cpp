// The shim's own descriptors left out of the program's listings of its
// descriptors. Traced, `ls /proc/self/fd` or Python's
// os.listdir("/proc/self/fd") also printed the recorder connection (at a
// high number, high_descriptors.h), and a thread's perf sampling event
// under --sample-clock task, which untraced they never show: tracing
// changed what the program printed.
//
// A directory that is this process's descriptor table (/proc/self/fd,
// /dev/fd, /proc/<pid>/fd, /proc/thread-self/fd, a task's fd, and the same
// for fdinfo, by an absolute name or one relative to the working
// directory or a descriptor) is noted at opendir or fdopendir; readdir and
// readdir_r on it skip the entries that name the shim's descriptors.
// scandir and scandirat of one drop them before the program's filter sees
// them; getdents64, through its glibc wrapper or syscall(), takes them out
// of the entries the kernel returned.
//
// Cost: opendir of an absolute name compares the name, of a relative one
// makes an fstat (and reads the descriptor's link when it lies on /proc),
// as fdopendir does; readdir of any other directory, one relaxed load
// while no descriptor table is open; getdents64, an fstat per call.
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
#include "linux_dirent.h"
#include "raw_system_call.h"

namespace spoor::preload {
namespace {

using OpendirFn = DIR* (*)(const char*);
using FdopendirFn = DIR* (*)(int);
using ClosedirFn = int (*)(DIR*);
using ReaddirFn = dirent* (*)(DIR*);
using Readdir64Fn = dirent64* (*)(DIR*);
using ReaddirRFn = int (*)(DIR*, dirent*, dirent**);
using Readdir64RFn = int (*)(DIR*, dirent64*, dirent64**);
template <class Entry>
using ScanFilter = int (*)(const Entry*);
template <class Entry>
using ScanOrder = int (*)(const Entry**, const Entry**);
template <class Entry>
using ScandirFn = int (*)(const char*, Entry***, ScanFilter<Entry>, ScanOrder<Entry>);
template <class Entry>
using ScandiratFn = int (*)(int, const char*, Entry***, ScanFilter<Entry>, ScanOrder<Entry>);

constinit NextFunction<OpendirFn> g_opendir{"opendir"};
constinit NextFunction<FdopendirFn> g_fdopendir{"fdopendir"};
constinit NextFunction<ClosedirFn> g_closedir{"closedir"};
constinit NextFunction<ReaddirFn> g_readdir{"readdir"};
constinit NextFunction<Readdir64Fn> g_readdir64{"readdir64"};
constinit NextFunction<ReaddirRFn> g_readdir_r{"readdir_r"};
constinit NextFunction<Readdir64RFn> g_readdir64_r{"readdir64_r"};
constinit NextFunction<ScandirFn<dirent>> g_scandir{"scandir"};
constinit NextFunction<ScandirFn<dirent64>> g_scandir64{"scandir64"};
constinit NextFunction<ScandiratFn<dirent>> g_scandirat{"scandirat"};
constinit NextFunction<ScandiratFn<dirent64>> g_scandirat64{"scandirat64"};

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

// Whether the open directory `fd` is this process's descriptor table.
bool is_descriptor_table(int fd) {
  if (!on_proc(fd)) return false;
  char path[PATH_MAX];
  const size_t length = fd_link(fd, path, sizeof path - 1);
  path[length] = '\0';
  return length > 0 && names_own_descriptor_table(path);
}

// The same for the directory `path` names, relative to `dirfd` (or the
// working directory) when it does not start with '/': by its name, as
// scandir must decide before it opens the directory (opening it here
// would take a descriptor number the program might get next).
bool names_table_at(int dirfd, const char* path) {
  if (path == nullptr) return false;
  if (path[0] == '/') return names_own_descriptor_table(path);
  const int kept = errno;
  char full[PATH_MAX];
  size_t length = 0;
  if (dirfd == AT_FDCWD) {
    if (raw_system_call(SYS_getcwd, reinterpret_cast<long>(full), sizeof full, 0, 0, 0, 0) > 0) length = std::strlen(full);
  } else {
    length = fd_link(dirfd, full, sizeof full - 1);
  }
  errno = kept;
  // "." and "./" name the directory itself.
  const bool itself = std::strcmp(path, ".") == 0 || std::strcmp(path, "./") == 0;
  const size_t rest = itself ? 0 : std::strlen(path);
  if (length == 0 || full[0] != '/' || length + 1 + rest >= sizeof full) return false;
  full[length] = '\0';
  if (!itself) {
    if (full[length - 1] != '/') full[length++] = '/';
    std::memcpy(full + length, path, rest + 1);
  }
  return names_own_descriptor_table(full);
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

// readdir_r's: the next entry that is not the shim's.
template <class Entry, class Next>
int next_entry_r(Next next, DIR* dir, Entry* entry, Entry** result) {
  int error = next(dir, entry, result);
  if (SPOOR_LIKELY(g_tables_open.load(std::memory_order_relaxed) == 0) || !is_table(dir)) return error;
  while (error == 0 && *result != nullptr && names_shims_descriptor((*result)->d_name)) error = next(dir, entry, result);
  return error;
}

// scandir's filter on a descriptor table: the shim's entries out, then the
// program's own filter (none: every other entry), which the hook leaves
// here for the call's length. A filter that scans another table meanwhile
// puts it back when its own call returns.
using AnyFunction = void (*)();
constinit thread_local AnyFunction t_program_filter __attribute__((tls_model("initial-exec"))) = nullptr;

template <class Entry>
int keep_programs_entry(const Entry* entry) {
  if (names_shims_descriptor(entry->d_name)) return 0;
  const auto filter = reinterpret_cast<ScanFilter<Entry>>(t_program_filter);
  return filter == nullptr ? 1 : filter(entry);
}

// `scan(filter)` is the C library's scandir of the directory; `table`,
// whether it is this process's descriptor table.
template <class Entry, class Scan>
int scan_directory(bool table, ScanFilter<Entry> filter, Scan scan) {
  if (!table) return scan(filter);
  const AnyFunction outer = t_program_filter;
  t_program_filter = reinterpret_cast<AnyFunction>(filter);
  const int entries = scan(&keep_programs_entry<Entry>);
  t_program_filter = outer;
  return entries;
}

// Takes the records naming the shim's descriptors out of the `size` bytes
// at `buffer`; returns the bytes left. Records are 8-byte multiples, so
// the ones moved down stay aligned.
long drop_shims_records(char* buffer, long size) {
  long kept = 0;
  for (long at = 0; at < size;) {
    const auto* record = reinterpret_cast<const LinuxDirent64*>(buffer + at);
    const long length = record->reclen;
    if (length == 0 || at + length > size) {  // not the kernel's: the rest left as it is
      if (kept != at) std::memmove(buffer + kept, buffer + at, static_cast<size_t>(size - at));
      return kept + (size - at);
    }
    if (!names_shims_descriptor(record->name)) {
      if (kept != at) std::memmove(buffer + kept, buffer + at, static_cast<size_t>(length));
      kept += length;
    }
    at += length;
  }
  return kept;
}

}  // namespace

}  // namespace spoor::preload

using namespace spoor::preload;

extern "C" {

// getdents64, through its glibc wrapper or syscall(): when every record of
// a call named the shim's, the next call's are returned, as a 0 would say
// the listing ended.
long spoor_getdents64_system_call(long number, long fd, long buffer, long size, long a4, long a5, long a6) {
  long result = raw_system_call(number, fd, buffer, size, a4, a5, a6);
  if (result <= 0 || !is_descriptor_table(static_cast<int>(fd))) return as_libc_result(result);
  for (;;) {
    const long kept = drop_shims_records(reinterpret_cast<char*>(buffer), result);
    if (kept > 0) return kept;
    result = raw_system_call(number, fd, buffer, size, a4, a5, a6);
    if (result <= 0) return as_libc_result(result);
  }
}

SPOOR_INTERPOSE DIR* opendir(const char* path) {
  const OpendirFn next = g_opendir.get();
  if (SPOOR_UNLIKELY(next == nullptr)) return no_next_function<DIR*>(nullptr);
  DIR* dir = next(path);
  if (dir == nullptr) return dir;  // glibc's opendir reads the name first: a null one never gets here
  // A relative name is judged by where it led (the descriptor's link).
  if (path[0] == '/' ? names_own_descriptor_table(path) : is_descriptor_table(dirfd(dir))) note_table(dir);
  return dir;
}

SPOOR_INTERPOSE DIR* fdopendir(int fd) {
  const FdopendirFn next = g_fdopendir.get();
  if (SPOOR_UNLIKELY(next == nullptr)) return no_next_function<DIR*>(nullptr);
  DIR* dir = next(fd);
  if (dir != nullptr && is_descriptor_table(fd)) note_table(dir);
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

SPOOR_INTERPOSE int readdir_r(DIR* dir, dirent* entry, dirent** result) {
  const ReaddirRFn next = g_readdir_r.get();
  if (SPOOR_UNLIKELY(next == nullptr)) return ENOSYS;
  return next_entry_r(next, dir, entry, result);
}

SPOOR_INTERPOSE int readdir64_r(DIR* dir, dirent64* entry, dirent64** result) {
  const Readdir64RFn next = g_readdir64_r.get();
  if (SPOOR_UNLIKELY(next == nullptr)) return ENOSYS;
  return next_entry_r(next, dir, entry, result);
}

SPOOR_INTERPOSE int scandir(const char* path, dirent*** list, ScanFilter<dirent> filter, ScanOrder<dirent> order) {
  const ScandirFn<dirent> next = g_scandir.get();
  if (SPOOR_UNLIKELY(next == nullptr)) return no_next_function(-1);
  return scan_directory<dirent>(names_table_at(AT_FDCWD, path), filter,
                                [&](ScanFilter<dirent> f) { return next(path, list, f, order); });
}

SPOOR_INTERPOSE int scandir64(const char* path, dirent64*** list, ScanFilter<dirent64> filter,
                              ScanOrder<dirent64> order) {
  const ScandirFn<dirent64> next = g_scandir64.get();
  if (SPOOR_UNLIKELY(next == nullptr)) return no_next_function(-1);
  return scan_directory<dirent64>(names_table_at(AT_FDCWD, path), filter,
                                  [&](ScanFilter<dirent64> f) { return next(path, list, f, order); });
}

SPOOR_INTERPOSE int scandirat(int dirfd, const char* path, dirent*** list, ScanFilter<dirent> filter,
                              ScanOrder<dirent> order) {
  const ScandiratFn<dirent> next = g_scandirat.get();
  if (SPOOR_UNLIKELY(next == nullptr)) return no_next_function(-1);
  return scan_directory<dirent>(names_table_at(dirfd, path), filter,
                                [&](ScanFilter<dirent> f) { return next(dirfd, path, list, f, order); });
}

SPOOR_INTERPOSE int scandirat64(int dirfd, const char* path, dirent64*** list, ScanFilter<dirent64> filter,
                                ScanOrder<dirent64> order) {
  const ScandiratFn<dirent64> next = g_scandirat64.get();
  if (SPOOR_UNLIKELY(next == nullptr)) return no_next_function(-1);
  return scan_directory<dirent64>(names_table_at(dirfd, path), filter,
                                  [&](ScanFilter<dirent64> f) { return next(dirfd, path, list, f, order); });
}

SPOOR_INTERPOSE ssize_t getdents64(int fd, void* buffer, size_t size) {
  return spoor_getdents64_system_call(SYS_getdents64, fd, reinterpret_cast<long>(buffer), static_cast<long>(size),
                                      0, 0, 0);
}

}  // extern "C"
