// How long the recorder's drain loop waits in poll() between turns.
#ifndef SPOOR_RECORD_DRAIN_PACE_H
#define SPOOR_RECORD_DRAIN_PACE_H

namespace spoor::record {

// Every millisecond while events come (a 16 MiB ring filling at 250 MB/s
// lasts 64 ms); after a turn that found nothing, twice as long, up to
// kMostIdleWaitMs: a program that sleeps or waits on the network then
// costs ~60 wake-ups a second instead of 1,000 (recording `sleep 10` took
// 0.15 s of the drain's CPU at 1 ms, 0.04 s so: bench/RESULTS.md). A
// connection, or one closing, wakes the poll at once. Kernel sources keep
// the loop at 1 ms: their rings are smaller, and their records are not
// counted in the turn.
inline constexpr int kMostIdleWaitMs = 16;

// The next wait, after a turn with `wait_ms`: `busy` when it drained
// something or served a connection.
constexpr int next_poll_wait_ms(int wait_ms, bool busy) {
  if (busy || wait_ms < 1) return 1;
  return wait_ms * 2 < kMostIdleWaitMs ? wait_ms * 2 : kMostIdleWaitMs;
}

}  // namespace spoor::record

#endif  // SPOOR_RECORD_DRAIN_PACE_H
