// The stack table: open addressing over slots of {hash, id}, claimed with
// one CAS on the hash. A thread that finds a slot claimed but its ID not
// yet published does not wait: it writes the stack again under a new ID
// (the reader keeps both). A full probe run in the last level does the
// same.
//
// It starts small and grows (table_levels.h): levels of 2^8 to 2^20 slots
// (4 KiB to 16 MiB) in one mapping, reserved at init and touched as used.
// A short process's few dozen stacks fill the first level's one page
// rather than one page of a 16 MiB table each. New stacks go to the
// newest level; when it is half full the next one becomes the newest, by
// one CAS (nothing to map: growing stays lock-free and async-signal-safe).
// A stack that misses in the newest level is looked for in the older ones,
// and found there, copied into the newest under the same ID: a stack keeps
// its ID, and a long-running process's lookups find theirs in the newest
// level again after one miss each.
#include "stack_table.h"

#define UNW_LOCAL_ONLY
#include <libunwind.h>
#include <sys/mman.h>

#include <atomic>
#include <cstdlib>
#include <cstring>

#include "fast_unwind.h"
#include "table_levels.h"

namespace spoor::preload {

constinit Provider g_stacks{"Spoor.Stack"};

namespace {

using Levels = TableLevels<8, 7>;  // 2^8 .. 2^20 slots; 21 MiB of address space
constexpr int kProbes = 32;
constexpr int kMaxDepth = 128;

struct Slot {
  std::atomic<uint64_t> hash;  // 0: free
  std::atomic<uint32_t> id;    // 0: claimed, not yet published (or copied)
  uint32_t pad;
};
static_assert(sizeof(Slot) == 16);

Slot* g_slots = nullptr;  // the mapping: every level
// The newest level (Levels::pack): read once per lookup. Swapped for the
// next by one CAS; the slots it points to need no ordering (zero pages, or
// claimed with their own CAS), so its loads are relaxed.
std::atomic<uintptr_t> g_newest{0};
// Slots claimed in each level; the one that reaches half a level's slots
// makes the next level the newest.
std::atomic<uint32_t> g_claimed[Levels::kLevels];
int g_depth = 0;
bool g_fast_unwind = false;  // else unw_backtrace does every capture
std::atomic<uint32_t> g_next_id{1};
// Bumped when a fork child forgets the parent's stacks: IDs a thread
// memoized before then (current_stack_id) no longer count.
uint32_t g_generation = 0;

// Each frame is mixed with its position on its own and the mixes are
// summed, so the multiplies do not wait for one another: about a cycle per
// frame instead of a multiply's latency. The mix is a bijection, so two
// stacks that differ in one frame never collide.
uint64_t mix(uint64_t x) {
  x ^= x >> 32;
  x *= 0xD6E8FEB86659FD93ull;
  return x ^ (x >> 32);
}

uint64_t hash_frames(void* const* frames, int n) {
  uint64_t sum = 0;
  for (int i = 0; i < n; ++i)
    sum += mix(reinterpret_cast<uintptr_t>(frames[i]) + static_cast<uint64_t>(i) * 0x9E3779B97F4A7C15ull);
  const uint64_t h = mix(sum ^ static_cast<uint64_t>(n));
  return h != 0 ? h : 1;  // never 0, the free marker
}

uint32_t publish(void* const* frames, int n) {
  const uint32_t id = g_next_id.fetch_add(1, std::memory_order_relaxed);
  uint64_t words[kMaxDepth];
  for (int i = 0; i < n; ++i) words[i] = reinterpret_cast<uintptr_t>(frames[i]);
  kStack.write(id, Blob{words, static_cast<uint32_t>(n * sizeof(uint64_t))});
  return id;
}

Slot* level_slots(int level) { return g_slots + Levels::first_slot(level); }

void start_at_first_level() {
  for (std::atomic<uint32_t>& c : g_claimed) c.store(0, std::memory_order_relaxed);
  g_newest.store(Levels::pack(level_slots(0), 0), std::memory_order_relaxed);
}

// The level after `level` takes new stacks from now on (unless it does
// already: the CAS keeps a late caller from moving it back).
void grow_past(int level) {
  if (level + 1 >= Levels::kLevels) return;
  uintptr_t expected = Levels::pack(level_slots(level), level);
  g_newest.compare_exchange_strong(expected, Levels::pack(level_slots(level + 1), level + 1),
                                   std::memory_order_relaxed);
}

// A slot of `level` was claimed: the claim that fills half its slots grows
// the table.
void count_claim(int level) {
  if (g_claimed[level].fetch_add(1, std::memory_order_relaxed) + 1 == Levels::slots(level) / 2) grow_past(level);
}

// The ID `h` has in a level older than `newest`, newest first; 0 when none
// has it published (never written there, or claimed and not yet published:
// the caller then writes the stack again, as for a claimed slot in the
// newest level).
uint32_t id_in_older_levels(uint64_t h, int newest) {
  for (int level = newest - 1; level >= 0; --level) {
    Slot* const slots = level_slots(level);
    const uint64_t mask = Levels::slots(level) - 1;
    for (int probe = 0; probe < kProbes; ++probe) {
      Slot& s = slots[(h + static_cast<uint64_t>(probe)) & mask];
      const uint64_t seen = s.hash.load(std::memory_order_acquire);
      if (seen == h) {
        const uint32_t id = s.id.load(std::memory_order_acquire);
        if (id != 0) return id;
        break;
      }
      if (seen == 0) break;
    }
  }
  return 0;
}

// The stack missed in the newest level: `probe` is where its probe run
// stopped there (a free slot, or one with `h` still unpublished:
// `pending`; kProbes: the run was full). From an older level it is copied
// into the newest under its ID; else it is new, written and given one. A
// full run grows the table and goes on in the next level, so a stack is
// left out (written again each time it is met) only when the last level
// is crowded.
__attribute__((noinline)) uint32_t id_beyond_newest(void* const* stack, int n, uint64_t h, uintptr_t newest,
                                                    int probe, bool pending) {
  int level = Levels::level_of(newest);
  const uint32_t old_id = level > 0 ? id_in_older_levels(h, level) : 0;
  if (pending) return old_id != 0 ? old_id : publish(stack, n);  // being copied, or published: do not wait
  for (;;) {
    Slot* const slots = Levels::base_of<Slot>(newest);
    const uint64_t mask = Levels::slots(level) - 1;
    for (; probe < kProbes; ++probe) {
      Slot& s = slots[(h + static_cast<uint64_t>(probe)) & mask];
      uint64_t seen = 0;
      if (s.hash.compare_exchange_strong(seen, h, std::memory_order_acq_rel)) {
        // Ours: write the stack (unless it has an ID already), then publish
        // its ID to other threads.
        const uint32_t id = old_id != 0 ? old_id : publish(stack, n);
        s.id.store(id, std::memory_order_release);
        count_claim(level);
        return id;
      }
      // Another thread claimed it meanwhile; `seen` is its hash.
      if (seen == h) {
        const uint32_t id = s.id.load(std::memory_order_acquire);
        if (id != 0) return id;
        return old_id != 0 ? old_id : publish(stack, n);  // being published: do not wait
      }
    }
    if (level + 1 >= Levels::kLevels) return old_id != 0 ? old_id : publish(stack, n);
    // Crowded here: on to the next level (which another thread may have
    // made the newest already).
    grow_past(level);
    newest = g_newest.load(std::memory_order_relaxed);
    level = Levels::level_of(newest);
    probe = 0;
  }
}

}  // namespace

bool fast_unwinder_in_use() { return g_fast_unwind; }

bool init_stack_table(int depth, void (*libdw_loaded)()) {
  g_depth = depth < 1 ? 1 : (depth > kMaxDepth ? kMaxDepth : depth);
  void* p = mmap(nullptr, Levels::total_slots() * sizeof(Slot), PROT_READ | PROT_WRITE,
                 MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  if (p == MAP_FAILED) return false;
  // libunwind takes the captures the fast unwinder cannot do (and all of
  // them with SPOOR_UNWIND=libunwind, or where it is not built).
  unw_set_caching_policy(unw_local_addr_space, UNW_CACHE_PER_THREAD);
  const char* unwinder = std::getenv("SPOOR_UNWIND");
  if (unwinder == nullptr || std::strcmp(unwinder, "libunwind") != 0) g_fast_unwind = init_fast_unwind(libdw_loaded);
  g_slots = static_cast<Slot*>(p);  // zero pages: every slot free
  start_at_first_level();
  // The first level's page written at once: a lookup's read of an
  // untouched page would map the zero page, and its claim fault again to
  // replace it. (Not after a fork: a child that execs would not use it.)
  level_slots(0)->pad = 0;
  return true;
}

void reset_stack_table_after_fork() {
  if (g_slots == nullptr) return;
  // Fresh zero pages over the old table: every slot free again.
  void* p = mmap(g_slots, Levels::total_slots() * sizeof(Slot), PROT_READ | PROT_WRITE,
                 MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE | MAP_FIXED, -1, 0);
  if (p == MAP_FAILED) {
    g_slots = nullptr;
  } else {
    start_at_first_level();
  }
  g_generation++;
}

int stack_depth() { return g_depth; }

// A slot claimed by an interrupted writer on the same thread (a signal
// handler calling in) looks like one being published by another thread:
// the stack is written again under a new ID, never waited for.
//
// Cost when the stack is in the newest level: the hash, one load of the
// newest level's word, and the probe run (usually one slot), as with a
// table of one level; the rest is out of line.
uint32_t stack_id_of(void* const* stack, int n) {
  if (g_slots == nullptr || n <= 0) return 0;
  if (n > g_depth) n = g_depth;
  const uint64_t h = hash_frames(stack, n);
  const uintptr_t newest = g_newest.load(std::memory_order_relaxed);
  Slot* const slots = Levels::base_of<Slot>(newest);
  const uint64_t mask = Levels::slots(Levels::level_of(newest)) - 1;
  int probe = 0;
  for (; probe < kProbes; ++probe) {
    Slot& s = slots[(h + static_cast<uint64_t>(probe)) & mask];
    const uint64_t seen = s.hash.load(std::memory_order_acquire);
    if (seen == h) {
      const uint32_t id = s.id.load(std::memory_order_acquire);
      if (id != 0) return id;
      return id_beyond_newest(stack, n, h, newest, probe, true);
    }
    if (seen == 0) break;
  }
  return id_beyond_newest(stack, n, h, newest, probe, false);
}

__attribute__((noinline)) uint32_t current_stack_id(int skip) {
  if (g_slots == nullptr) return 0;
  void* frames[kMaxDepth + 8];
  uint64_t* memo = nullptr;
  const int max = g_depth + skip + 1;
  int n = g_fast_unwind ? fast_backtrace(frames, max, &memo) : unw_backtrace(frames, max);
  // The same frames as an earlier capture of this thread's: the ID found
  // then, without hashing or probing. Tagged (bit 63, the table's
  // generation, and skip, which picks the frames kept) so a cleared word
  // never reads as an ID, nor one from before a fork.
  const uint64_t tag = (uint64_t{1} << 63) | (static_cast<uint64_t>(g_generation & 0x7FFFFF) << 40) |
                       (static_cast<uint64_t>(skip & 0xFF) << 32);
  if (memo != nullptr && (*memo & ~uint64_t{0xFFFFFFFF}) == tag) return static_cast<uint32_t>(*memo);
  // Frame 0 is this function; then the `skip` frames of the shim.
  const int drop = skip + 1;
  if (n <= drop) return 0;
  n -= drop;
  if (n > g_depth) n = g_depth;
  const uint32_t id = stack_id_of(frames + drop, n);
  if (memo != nullptr && id != 0) *memo = tag | id;
  return id;
}

}  // namespace spoor::preload
