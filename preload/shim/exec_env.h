// The environment an exec'd program gets: the caller's, with the shim put
// back into LD_PRELOAD and the SPOOR_* settings restored, so a program that
// passes its own envp (or cleared its environment) still has its children
// traced. Builds into caller-provided space (alloca): exec hooks may run in
// a vfork child, where allocating is not safe.
#ifndef SPOOR_PRELOAD_EXEC_ENV_H
#define SPOOR_PRELOAD_EXEC_ENV_H

#include <cstddef>

namespace spoor::preload {

// Bytes fix_environment needs for `envp` (null envp: an empty one).
size_t fixed_environment_bytes(char* const* envp);

// Writes the fixed environment into `space` and returns it.
char** fix_environment(char* const* envp, void* space);

// Why an exec of `path` cannot be traced, or "" when it can: a static
// executable or a setuid/setgid program (the loader ignores LD_PRELOAD in
// both). `search_path`: look `path` up in $PATH as execvp does. Uses raw
// system calls only, so it is safe in a vfork child and traces nothing.
const char* why_untraceable(const char* path, bool search_path);

}  // namespace spoor::preload

#endif  // SPOOR_PRELOAD_EXEC_ENV_H
