#include "exec_env.h"

#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <utility>

#include "../protocol.h"
#include "recorder_link.h"

extern char** environ;

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

// `list` without the entry `item` and one separator next to it, the rest
// as it was; false when it does not fit `out`.
bool list_without(const char* list, const char* item, char* out, size_t out_size) {
  const size_t n = std::strlen(item), total = std::strlen(list);
  if (total >= out_size) return false;
  for (const char* p = list; *p;) {
    const size_t len = std::strcspn(p, ": ");
    if (len == n && std::strncmp(p, item, n) == 0) {
      size_t from = static_cast<size_t>(p - list), to = from + len;
      if (list[to] != '\0')
        ++to;  // the separator after it
      else if (from > 0)
        --from;  // the last entry: the separator before it
      std::memcpy(out, list, from);
      std::strcpy(out + from, list + to);
      return true;
    }
    p += len;
    if (*p) ++p;
  }
  return false;
}

}  // namespace

void hide_tracing_environment() {
  static char preload_rest[8192];
  const char* shim = shim_preload_path();
  size_t count = 0;
  if (environ != nullptr)
    while (environ[count] != nullptr) ++count;
  if (count == 0) return;
  // A new array: the first one lies on the initial stack, where a runtime
  // that finds the auxiliary vector past envp's null (Go's) needs it whole.
  const size_t bytes = (count + 1) * sizeof(char*);
  void* space = reinterpret_cast<void*>(
      syscall(SYS_mmap, nullptr, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0));
  if (space == MAP_FAILED) return;
  auto** kept = static_cast<char**>(space);
  size_t n = 0;
  for (size_t i = 0; i < count; ++i) {
    char* var = environ[i];
    bool setting = false;
    for (const char* variable : kTracingVariables) setting |= same_name(var, variable);
    if (!setting && shim != nullptr && std::strncmp(var, kLdPreload, sizeof kLdPreload - 1) == 0) {
      std::memcpy(preload_rest, kLdPreload, sizeof kLdPreload - 1);
      char* rest = preload_rest + sizeof kLdPreload - 1;
      if (list_without(var + sizeof kLdPreload - 1, shim, rest, sizeof preload_rest - (sizeof kLdPreload - 1))) {
        if (*rest == '\0')
          setting = true;  // only the shim was preloaded
        else
          var = preload_rest;
        shim = nullptr;  // one entry, one buffer
      }
    }
    if (!setting) kept[n++] = var;
  }
  kept[n] = nullptr;
  environ = kept;
}

TracingEnvironmentShown::TracingEnvironmentShown(char** fixed) : fixed_(fixed), saved_(environ) { environ = fixed; }

TracingEnvironmentShown::~TracingEnvironmentShown() {
  if (environ == fixed_)
    environ = saved_;
  else
    hide_tracing_environment();
}

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

bool holds_another_recorders_settings(char* const* envp) {
  const char* theirs = find(envp, "SPOOR_SOCKET=");
  if (theirs == nullptr) return false;
  for (const char* const* v = tracing_environment(); *v != nullptr; ++v)
    if (std::strcmp(*v, theirs) == 0) return false;
  return true;
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
  // The loader only lists the libraries it would load (ldd): the shim
  // would be one of them, and no program runs to be traced.
  if (find(envp, "LD_TRACE_LOADED_OBJECTS=") != nullptr) var_count = 0;
  // Another recorder's settings: passed as given; ours would send the
  // program here instead.
  if (holds_another_recorders_settings(envp)) var_count = 0;
  // The shim's LD_PRELOAD entry, when dladdr named it, comes first.
  const bool has_preload = var_count > 0 && std::strncmp(vars[0], kLdPreload, sizeof kLdPreload - 1) == 0;
  // The tracing setting for the caller's variable `var`, in its place (the
  // new image's shim takes it out again, and the order stays the caller's).
  bool preload_done = false;  // a second LD_PRELOAD (a raw envp may hold two) is passed as it is
  auto setting_for = [&](char* var) -> char* {
    if (has_preload && !preload_done && std::strncmp(var, kLdPreload, sizeof kLdPreload - 1) == 0) {
      preload_done = true;
      // Keep the caller's preloads after the shim (once).
      const char* shim = vars[0] + sizeof kLdPreload - 1;
      const char* rest = var + sizeof kLdPreload - 1;
      if (list_has(rest, shim)) return var;
      std::strcpy(text, vars[0]);
      if (*rest) {
        std::strcat(text, ":");
        std::strcat(text, rest);
      }
      return text;
    }
    for (size_t v = 0; v < var_count; ++v)
      if (same_name(var, vars[v])) return const_cast<char*>(vars[v]);
    return var;
  };
  for (size_t i = 0; i < count; ++i) out[n++] = setting_for(envp[i]);
  // The settings the caller's environment lacked, at its end.
  for (size_t v = 0; v < var_count; ++v)
    if (find(envp, vars[v]) == nullptr) out[n++] = const_cast<char*>(vars[v]);
  out[n] = nullptr;
  return out;
}

char** environment_without_tracing(char* const* envp, void* space) {
  size_t count = 0;
  for (char* const* e = envp; e != nullptr && *e != nullptr; ++e) ++count;
  auto** out = static_cast<char**>(space);
  char* text = reinterpret_cast<char*>(out + count + 1);
  const char* shim = shim_preload_path();  // one LD_PRELOAD is rewritten (the room is for one)
  size_t n = 0;
  for (size_t i = 0; i < count; ++i) {
    char* var = envp[i];
    bool setting = false;
    for (const char* variable : kTracingVariables) setting |= same_name(var, variable);
    if (setting) continue;
    if (shim != nullptr && std::strncmp(var, kLdPreload, sizeof kLdPreload - 1) == 0) {
      const char* entry = std::exchange(shim, nullptr);
      const size_t room = std::strlen(var) + 1;
      std::memcpy(text, kLdPreload, sizeof kLdPreload - 1);
      char* rest = text + sizeof kLdPreload - 1;
      if (list_without(var + sizeof kLdPreload - 1, entry, rest, room - (sizeof kLdPreload - 1))) {
        if (*rest == '\0') continue;  // only the shim was preloaded
        var = text;
        text += room;
      }
    }
    out[n++] = var;
  }
  out[n] = nullptr;
  return out;
}

}  // namespace spoor::preload
