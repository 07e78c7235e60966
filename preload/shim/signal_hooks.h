// The program's side of the sample signal (samples.h). The kernel's
// disposition for it is the sampler's handler; the program's own is kept
// here: sigaction and signal report and change it, the handler runs it for
// every signal that did not come from a sampling timer, the sigwait
// family and signalfd never hand a sampling signal to the program, and
// the mask functions never block it (below).
#ifndef SPOOR_PRELOAD_SIGNAL_HOOKS_H
#define SPOOR_PRELOAD_SIGNAL_HOOKS_H

#include <signal.h>

namespace spoor::preload {

// Makes fork safe for the signal hooks' lock (pthread_atfork). Once, at
// load, before the program's threads exist.
void register_signal_fork_handlers();

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

// The sample signal stays unblocked in every thread, or a thread that
// blocks "all signals" (liblzma's and many thread pools' workers are
// created so) would never be sampled. pthread_sigmask and sigprocmask
// leave it out of what they block, and report it as the program set it:
// each thread keeps the program's view of it, which a new thread takes
// from its creator. A program that installs its own disposition for the
// signal (it uses it) gets its masks as they are.
//
// The program's view of the sample signal in the calling thread's mask:
// pass it to begin_thread_sample_mask in the threads it creates.
bool program_blocks_sample_signal();
// In the attaching thread (the program's main one), once the sampler owns
// the signal: an exec keeps the mask, so a program started with every
// signal blocked (by a parent that blocked them all) would never be
// sampled. Its view is what it inherited; the signal is unblocked.
void adopt_initial_sample_mask();
// Around an exec: the kernel's mask takes the program's view of the
// signal, so that the new image (which adopts what it inherits) sees its
// mask as the program set it. Returns whether it blocked the signal;
// after a failed exec, pass that back to open it again.
bool block_sample_signal_for_exec();
void unblock_sample_signal_after_exec_failed(bool blocked);
// In a new thread, before its start routine: the program's view inherited
// from its creator, and the signal unblocked for real (a thread created by
// a path the hooks do not see may have it blocked).
void begin_thread_sample_mask(bool program_blocks);

}  // namespace spoor::preload

#endif  // SPOOR_PRELOAD_SIGNAL_HOOKS_H
