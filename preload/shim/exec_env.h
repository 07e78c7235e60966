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

// Writes the fixed environment into `space` and returns it. With
// LD_TRACE_LOADED_OBJECTS set (ldd), the loader lists the libraries and runs
// nothing: the caller's environment is passed as it is; so is one that
// holds another recorder's settings (below).
char** fix_environment(char* const* envp, void* space);

// True when `envp` holds another recorder's SPOOR_SOCKET: a `spoor record`
// that this one traces (a test suite's, a CI job's) starting its own
// program, which is its to record.
bool holds_another_recorders_settings(char* const* envp);
// What the exec hooks say of such a program (fits UntraceableNote::why).
inline constexpr char kInAnotherRecording[] = "in another spoor recording";

// Takes the tracing settings out of this program's environment, once they
// are captured (recorder_link.h): the SPOOR_* variables and the shim's entry
// in LD_PRELOAD (the variable itself when nothing else is in it). A program
// that prints or passes on its environment (env, make -p, a shell's export)
// then shows the one it was given; the exec and spawn hooks put the settings
// back for its children. `environ` becomes a new array (never freed), made
// without unsetenv (a program may define its own: bash does, over shell
// variables it has not made yet) and without the heap; glibc passes main
// this `environ`, not the first array. That one, on the initial stack, is
// left whole: Go's runtime finds the auxiliary vector past its null, and
// reads its environment from it.
void hide_tracing_environment();

// For the length of a system() or popen() call, whose shell glibc starts
// with its own posix_spawn and `environ`, where no hook sees it: `environ`
// is `fixed` (fix_environment's result), then the program's own again. A
// thread that changes the environment meanwhile changes `fixed`'s copy;
// its settings are then taken out of that one instead.
class TracingEnvironmentShown {
 public:
  explicit TracingEnvironmentShown(char** fixed);
  ~TracingEnvironmentShown();
  TracingEnvironmentShown(const TracingEnvironmentShown&) = delete;
  TracingEnvironmentShown& operator=(const TracingEnvironmentShown&) = delete;

 private:
  char** fixed_;
  char** saved_;
};

// `envp` without the tracing settings and without the shim's entry in
// LD_PRELOAD (the variable itself when nothing else is in it), written into
// `space` (fixed_environment_bytes(envp) bytes): for a program that must
// start without the shim (program_image.h).
char** environment_without_tracing(char* const* envp, void* space);

}  // namespace spoor::preload

#endif  // SPOOR_PRELOAD_EXEC_ENV_H
