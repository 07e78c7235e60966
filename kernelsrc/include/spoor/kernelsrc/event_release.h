// Closing a recording's perf events without making the user wait for the
// kernel's tracepoint teardown.
//
// The last close of a tracepoint event unregisters the tracepoint and then
// waits for an RCU grace period so that no CPU still runs its probe, under
// the kernel's event_mutex: one tracepoint after another, ~28 ms each on
// the 2-vCPU benchmark machine. The five tracepoints of --kernel-all kept
// `spoor record --kernel-all -- true` ~140 ms past its finished trace
// (bench/RESULTS.md). Closing them on other threads does not help (the
// mutex), and neither does exiting (the exiting task pays it). So a child
// process takes the descriptors and closes them after spoor has gone.
#ifndef SPOOR_KERNELSRC_EVENT_RELEASE_H
#define SPOOR_KERNELSRC_EVENT_RELEASE_H

#include <sys/types.h>

#include <vector>

namespace spoor::kernelsrc {

// Disables every event of `fds` (nothing more is recorded from here on),
// then closes them: at once when none is a tracepoint's (`tracepoints`
// false), else in a forked child that holds the last references and
// closes them once this process has closed its own copies. The child
// keeps no other descriptor (not the caller's stdout, stderr or output
// file, whose readers would wait for it) and is named spoor-release. Call
// it last: after the fork a waitpid(-1) of the caller would reap the
// child. Where fork fails the events are closed here, slowly. Returns the
// child's pid, or 0 when the events were closed here.
pid_t release_events(std::vector<int> fds, bool tracepoints);

// Closes every descriptor of this process but those of `keep` (sorted):
// system calls only, no allocation, as in the child of a process that had
// other threads.
void close_all_but(const std::vector<int>& keep);

}  // namespace spoor::kernelsrc

#endif  // SPOOR_KERNELSRC_EVENT_RELEASE_H
