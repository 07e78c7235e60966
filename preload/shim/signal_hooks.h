// The program's side of the sample signal (samples.h). The kernel's
// disposition for it is the sampler's handler; the program's own is kept
// here: sigaction and signal report and change it, the handler runs it for
// every signal that did not come from a sampling timer, and the sigwait
// family and signalfd never hand a sampling signal to the program.
#ifndef SPOOR_PRELOAD_SIGNAL_HOOKS_H
#define SPOOR_PRELOAD_SIGNAL_HOOKS_H

#include <signal.h>

namespace spoor::preload {

// Resolves the real signal functions (dlsym is not async-signal-safe, and
// a program's handler may call sigaction), installs `action` for `sig` and
// keeps what was there (an inherited SIG_IGN, say) as the program's
// disposition. Returns false when the handler cannot be installed.
bool take_sample_signal(int sig, const struct sigaction& action);

// Runs the program's disposition for a signal the sampler does not own, as
// the kernel would have: its handler with its mask (once, for
// SA_RESETHAND), nothing for SIG_IGN, and for SIG_DFL the default action
// (a real-time signal's ends the process). Async-signal-safe.
void run_program_handler(int sig, siginfo_t* info, void* context);

}  // namespace spoor::preload

#endif  // SPOOR_PRELOAD_SIGNAL_HOOKS_H
