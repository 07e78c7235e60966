#include "exec_env.h"

#include <elf.h>
#include <fcntl.h>
#include <limits.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cstdint>
#include <cstdlib>
#include <cstring>

#include "recorder_link.h"

namespace spoor::preload {
namespace {

size_t name_length(const char* var) {
  const char* eq = std::strchr(var, '=');
  return eq == nullptr ? std::strlen(var) : static_cast<size_t>(eq - var) + 1;  // includes '='
}

bool same_name(const char* a, const char* b) {
  const size_t n = name_length(a);
  return n == name_length(b) && std::strncmp(a, b, n) == 0;
}

const char* find(char* const* envp, const char* var) {
  for (char* const* e = envp; e != nullptr && *e != nullptr; ++e)
    if (same_name(*e, var)) return *e;
  return nullptr;
}

// True when the colon- or space-separated list `list` holds `item`.
bool list_has(const char* list, const char* item) {
  const size_t n = std::strlen(item);
  for (const char* p = list; *p;) {
    const size_t len = std::strcspn(p, ": ");
    if (len == n && std::strncmp(p, item, n) == 0) return true;
    p += len;
    if (*p) ++p;
  }
  return false;
}

constexpr char kLdPreload[] = "LD_PRELOAD=";

}  // namespace

size_t fixed_environment_bytes(char* const* envp) {
  size_t count = 0;
  for (char* const* e = envp; e != nullptr && *e != nullptr; ++e) ++count;
  size_t vars = 0, ours = 0;
  for (const char* const* v = tracing_environment(); *v != nullptr; ++v) {
    ++vars;
    if (std::strncmp(*v, kLdPreload, sizeof kLdPreload - 1) == 0) ours = std::strlen(*v);
  }
  const char* theirs = find(envp, kLdPreload);
  return (count + vars + 1) * sizeof(char*) + ours + (theirs ? std::strlen(theirs) : 0) + 2;
}

char** fix_environment(char* const* envp, void* space) {
  const char* const* vars = tracing_environment();
  size_t var_count = 0;
  while (vars[var_count] != nullptr) ++var_count;
  size_t count = 0;
  for (char* const* e = envp; e != nullptr && *e != nullptr; ++e) ++count;
  auto** out = static_cast<char**>(space);
  char* text = reinterpret_cast<char*>(out + count + var_count + 1);
  size_t n = 0;
  // The caller's variables, except those the tracing settings replace.
  for (size_t i = 0; i < count; ++i) {
    bool replaced = false;
    for (size_t v = 0; v < var_count && !replaced; ++v) replaced = same_name(envp[i], vars[v]);
    if (!replaced) out[n++] = envp[i];
  }
  for (size_t v = 0; v < var_count; ++v) {
    const char* var = vars[v];
    const char* theirs = find(envp, var);
    if (std::strncmp(var, kLdPreload, sizeof kLdPreload - 1) == 0 && theirs != nullptr) {
      // Keep the caller's preloads after the shim (once).
      const char* shim = var + sizeof kLdPreload - 1;
      const char* rest = theirs + sizeof kLdPreload - 1;
      if (list_has(rest, shim)) {
        out[n++] = const_cast<char*>(theirs);
        continue;
      }
      std::strcpy(text, var);
      if (*rest) {
        std::strcat(text, ":");
        std::strcat(text, rest);
      }
      out[n++] = text;
      continue;
    }
    out[n++] = const_cast<char*>(var);
  }
  out[n] = nullptr;
  return out;
}

const char* why_untraceable(const char* path, bool search_path) {
  if (path == nullptr) return "";
  char found[PATH_MAX];
  if (search_path && std::strchr(path, '/') == nullptr) {
    const char* dirs = std::getenv("PATH");
    if (dirs == nullptr) dirs = "/bin:/usr/bin";
    bool ok = false;
    for (const char* p = dirs; *p && !ok;) {
      const size_t len = std::strcspn(p, ":");
      if (len + 1 + std::strlen(path) < sizeof found) {
        std::memcpy(found, p, len);
        found[len] = '/';
        std::strcpy(found + len + 1, path);
        ok = syscall(SYS_faccessat, AT_FDCWD, found, X_OK, 0) == 0;
      }
      p += len;
      if (*p) ++p;
    }
    if (!ok) return "";
    path = found;
  }
  struct stat st;
  if (syscall(SYS_newfstatat, AT_FDCWD, path, &st, 0) != 0) return "";
  if (((st.st_mode & S_ISUID) && st.st_uid != geteuid()) || ((st.st_mode & S_ISGID) && st.st_gid != getegid()))
    return "setuid program";
  const int fd = static_cast<int>(syscall(SYS_openat, AT_FDCWD, path, O_RDONLY | O_CLOEXEC));
  if (fd < 0) return "";
  Elf64_Ehdr eh;
  const char* why = "";
  if (syscall(SYS_pread64, fd, &eh, sizeof eh, 0) == static_cast<long>(sizeof eh) && std::memcmp(eh.e_ident, ELFMAG, SELFMAG) == 0 &&
      eh.e_ident[EI_CLASS] == ELFCLASS64 && eh.e_phentsize == sizeof(Elf64_Phdr)) {
    bool interp = false;
    for (unsigned i = 0; i < eh.e_phnum; ++i) {
      Elf64_Phdr ph;
      if (syscall(SYS_pread64, fd, &ph, sizeof ph, static_cast<off_t>(eh.e_phoff + i * sizeof ph)) !=
          static_cast<long>(sizeof ph))
        break;
      interp |= ph.p_type == PT_INTERP;
    }
    // No interpreter, no loader to read LD_PRELOAD (a static PIE included).
    if (!interp) why = "static binary";
  }
  syscall(SYS_close, fd);
  return why;
}

}  // namespace spoor::preload
