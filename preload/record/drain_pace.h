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

// While no traced image is open (the program could not be traced, or
// only untraced processes are left running after it: a daemon, say),
// nothing should fill a ring: the idle waits go on doubling up to a
// second, and a connection, a child's end or Ctrl-C (recorder_wake.h)
// still wakes the poll at once. Held at kMostIdleWaitMs, such a wait cost
// the recorder ~5 ms of CPU a second (bench/RESULTS.md). A turn that
// drains anything (an image whose connection was closed behind the shim's
// back, still writing) goes back to 1 ms as always.
inline constexpr int kMostIdleWaitNothingOpenMs = 1024;

// The next wait, after a turn with `wait_ms`: `busy` when it drained
// something or served a connection; `images_open` while any traced image
// has its connection open.
constexpr int next_poll_wait_ms(int wait_ms, bool busy, bool images_open = true) {
  if (busy || wait_ms < 1) return 1;
  const int most = images_open ? kMostIdleWaitMs : kMostIdleWaitNothingOpenMs;
  return wait_ms * 2 < most ? wait_ms * 2 : most;
}

// Whether one pass of the drain loop that took `turns` turns (each up to
// kDrainTurnPackets packets of a CPU's ring, 512 KiB at the default
// 128 KiB) found it behind: 3 turns is over 1 MiB waiting in one ring,
// ~3 ms of a thread allocating as fast as malloc_heavy, where the drain
// comes back every millisecond. A drain that keeps up takes one or two.
// Behind once, the recorder has its next run buffers made ahead
// (FileSink::make_spares_ahead): their page faults, its own otherwise,
// are what kept it away where fresh pages are dear. At 8 turns (4 MiB)
// the spares came too late to spare a ring (bench/RESULTS.md).
inline constexpr int kBehindTurns = 3;
constexpr bool drain_fell_behind(int turns) { return turns >= kBehindTurns; }

}  // namespace spoor::record

#endif  // SPOOR_RECORD_DRAIN_PACE_H
