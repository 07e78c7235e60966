// The stack table: open addressing over 2^20 slots of {hash, id}, claimed
// with one CAS on the hash. A thread that finds a slot claimed but its ID
// not yet published does not wait: it writes the stack again under a new
// ID (the reader keeps both). A full probe run does the same.
#include "stack_table.h"

#define UNW_LOCAL_ONLY
#include <libunwind.h>
#include <sys/mman.h>

#include <atomic>
#include <cstdlib>
#include <cstring>

#include "fast_unwind.h"

namespace spoor::preload {

constinit Provider g_stacks{"Spoor.Stack"};

namespace {

constexpr uint64_t kSlots = 1u << 20;  // 16 MiB of address space, touched as used
constexpr int kProbes = 32;
constexpr int kMaxDepth = 128;

struct Slot {
  std::atomic<uint64_t> hash;  // 0: free
  std::atomic<uint32_t> id;    // 0: claimed, not yet published
  uint32_t pad;
};

Slot* g_slots = nullptr;
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

}  // namespace

bool init_stack_table(int depth) {
  g_depth = depth < 1 ? 1 : (depth > kMaxDepth ? kMaxDepth : depth);
  void* p = mmap(nullptr, kSlots * sizeof(Slot), PROT_READ | PROT_WRITE,
                 MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  if (p == MAP_FAILED) return false;
  // libunwind takes the captures the fast unwinder cannot do (and all of
  // them with SPOOR_UNWIND=libunwind, or where it is not built).
  unw_set_caching_policy(unw_local_addr_space, UNW_CACHE_PER_THREAD);
  const char* unwinder = std::getenv("SPOOR_UNWIND");
  if (unwinder == nullptr || std::strcmp(unwinder, "libunwind") != 0) g_fast_unwind = init_fast_unwind();
  g_slots = static_cast<Slot*>(p);  // zero pages: every slot free
  return true;
}

void reset_stack_table_after_fork() {
  if (g_slots == nullptr) return;
  // Fresh zero pages over the old table: every slot free again.
  void* p = mmap(g_slots, kSlots * sizeof(Slot), PROT_READ | PROT_WRITE,
                 MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE | MAP_FIXED, -1, 0);
  if (p == MAP_FAILED) g_slots = nullptr;
  g_generation++;
}

int stack_depth() { return g_depth; }

// A slot claimed by an interrupted writer on the same thread (a signal
// handler calling in) looks like one being published by another thread:
// the stack is written again under a new ID, never waited for.
uint32_t stack_id_of(void* const* stack, int n) {
  if (g_slots == nullptr || n <= 0) return 0;
  if (n > g_depth) n = g_depth;
  const uint64_t h = hash_frames(stack, n);
  for (int probe = 0; probe < kProbes; ++probe) {
    Slot& s = g_slots[(h + static_cast<uint64_t>(probe)) & (kSlots - 1)];
    uint64_t seen = s.hash.load(std::memory_order_acquire);
    if (seen == 0) {
      if (s.hash.compare_exchange_strong(seen, h, std::memory_order_acq_rel)) {
        // Ours: write the stack, then publish its ID to other threads.
        const uint32_t id = publish(stack, n);
        s.id.store(id, std::memory_order_release);
        return id;
      }
      // Another thread claimed it meanwhile; `seen` is its hash.
    }
    if (seen == h) {
      const uint32_t id = s.id.load(std::memory_order_acquire);
      return id != 0 ? id : publish(stack, n);  // being published: do not wait
    }
  }
  return publish(stack, n);  // table crowded here: an uncached duplicate
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
