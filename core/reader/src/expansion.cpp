// COMPRESSED blocks expanded when a reader reaches one of their packets,
// and kept while the Trace's limit allows. Opening a trace read only each
// block's section of headers: expanding rebuilds the records and checks
// every packet's CRC, which opening could not.
#include <algorithm>
#include <cstring>
#include <system_error>
#include <thread>

#include "spoor/compress/packed_blocks.h"
#include "spoor/crc32c.h"
#include "spoor/format.h"
#include "text.h"
#include "trace_data.h"

namespace spoor::reader {
namespace {

namespace fmt = spoor::format;

// Checks what `e` holds: the size opening found, blocks that follow each
// other to its end, and each packet's CRC.
void check(Expansion& e, uint32_t raw_size) {
  if (e.bytes.size() != raw_size) {
    e.problem = "it expands to " + num(e.bytes.size()) + " bytes where its block section adds up to " +
                num(raw_size);
    return;
  }
  uint64_t at = 0;
  while (at < e.bytes.size()) {
    fmt::BlockHeader h{};
    if (e.bytes.size() - at < sizeof h) break;
    std::memcpy(&h, e.bytes.data() + at, sizeof h);
    const uint64_t total = sizeof h + uint64_t{h.size};
    if (h.magic != fmt::kBlockMagic || total > e.bytes.size() - at) {
      e.problem = "its blocks do not follow each other at byte " + num(at) + " of what it expands to";
      return;
    }
    if (h.type == fmt::kBlockPacket &&
        spoor::block_checksum(&h, e.bytes.data() + at + sizeof h, h.size) != h.crc32c)
      e.bad_packets.push_back(at);
    at += total;
  }
}

}  // namespace

compress::ExpandedBytes SpareBuffers::take() {
  std::lock_guard lock(mutex);
  if (buffers.empty()) return {};
  compress::ExpandedBytes b = std::move(buffers.back());
  buffers.pop_back();
  return b;
}

void SpareBuffers::give(compress::ExpandedBytes&& buffer) {
  std::lock_guard lock(mutex);
  if (buffers.size() < kMost && buffer.capacity() > 0) buffers.push_back(std::move(buffer));
}

bool Expansion::bad(uint64_t block_at) const {
  return std::binary_search(bad_packets.begin(), bad_packets.end(), block_at);
}

namespace {

// Expands container `index` into a new Expansion whose buffer goes back to
// the spares when its last holder lets go. Needs no lock but the spares'.
std::shared_ptr<const Expansion> make_expansion(const Trace::Data& d, uint32_t index,
                                                compress::ExpandedBytes& scratch) {
  const Trace::Data::Container& c = d.containers[index];
  auto* made = new Expansion;
  std::shared_ptr<Expansion> e(made, [spare = d.expansions.spare](Expansion* x) {
    spare->give(std::move(x->bytes));
    delete x;
  });
  e->bytes = d.expansions.spare->take();
  if (compress::unpack(c.payload, e->bytes, e->problem, &scratch)) check(*e, c.raw_size);
  if (!e->problem.empty()) e->bytes.clear();
  return e;
}

// Records a new expansion: live for the container, kept within the limit,
// counted. With the cache's lock held.
//
// Past the limit, the kept expansion whose packets begin the earliest goes
// first: a reader merging by time is done with it soonest. Dropping the
// oldest instead dropped blocks that another stream still had to read (on
// a 22 M-event trace, 3 of 32 blocks expanded twice, by the thread the
// report waits on).
void enter(const Trace::Data& d, uint32_t index, const std::shared_ptr<const Expansion>& e) {
  ExpansionCache& cache = d.expansions;
  ++cache.expansions;
  d.containers[index].live = e;
  cache.kept.push_back(ExpansionCache::Kept{index, e});
  cache.kept_bytes += e->bytes.size();
  // What the readers hold stays alive whatever is dropped here.
  auto last_need = [&](const ExpansionCache::Kept& k) {
    return k.container < cache.last_need.size() ? cache.last_need[k.container] : 0;
  };
  while (cache.kept_bytes > cache.limit && !cache.kept.empty()) {
    auto done_soonest = std::min_element(
        cache.kept.begin(), cache.kept.end(),
        [&](const ExpansionCache::Kept& a, const ExpansionCache::Kept& b) { return last_need(a) < last_need(b); });
    cache.kept_bytes -= done_soonest->expansion->bytes.size();
    cache.kept.erase(done_soonest);
  }
  uint64_t held = 0;
  for (const Trace::Data::Container& other : d.containers)
    if (std::shared_ptr<const Expansion> live = other.live.lock()) held += live->bytes.size();
  cache.peak_bytes = std::max(cache.peak_bytes, held);
}

// The worker: expands the container needed next (prefetch_after) while
// the reader decodes the one it asked for. Expanding is half of a
// reader's work: on a second CPU it overlaps.
void prefetch_loop(const Trace::Data& d) {
  ExpansionCache& cache = d.expansions;
  compress::ExpandedBytes scratch;  // its own: the reader's may be in use
  std::unique_lock lock(cache.mutex);
  for (;;) {
    cache.work.wait(lock, [&] { return cache.stopping || cache.prefetching != kNoContainer; });
    if (cache.stopping) return;
    const uint32_t index = cache.prefetching;
    lock.unlock();
    std::shared_ptr<const Expansion> e = make_expansion(d, index, scratch);
    lock.lock();
    enter(d, index, e);
    cache.prefetched = std::move(e);  // held, whatever the limit, until asked for
    cache.prefetched_index = index;
    cache.prefetching = kNoContainer;
    cache.done.notify_all();
  }
}

// Starts expanding container `next` ahead, if it is not live or on its way.
void prefetch(const Trace::Data& d, uint32_t next) {
  ExpansionCache& cache = d.expansions;
  if (!cache.prefetch_enabled || next >= d.containers.size() || cache.prefetching != kNoContainer ||
      cache.prefetched_index == next || !d.containers[next].live.expired())
    return;
  cache.prefetching = next;
  if (!cache.worker.joinable()) {
    try {
      cache.worker = std::thread([&d] { prefetch_loop(d); });
    } catch (const std::system_error&) {
      // No thread to spare (a cgroup's pids.max): the reader expands each
      // block itself, as on one CPU.
      cache.prefetch_enabled = false;
      cache.prefetching = kNoContainer;
      return;
    }
  }
  cache.work.notify_one();
}

// The containers in the order a reader that merges its streams by time
// first needs them: a stream enters a packet when the merge reaches the
// packet's begin time. Packets are written in drain order, not time
// order (a process's first packet on another CPU may be in the tenth
// block), so the next block in the file was often not the next one
// needed, and the reader expanded it itself: 7 of 32 blocks of a
// 22 M-event trace, on the thread the report waits on.
void plan_prefetch(const Trace::Data& d) {
  ExpansionCache& cache = d.expansions;
  if (cache.asked.size() == d.containers.size()) return;
  std::vector<std::pair<uint64_t, uint32_t>> first(d.containers.size());
  for (uint32_t i = 0; i < first.size(); ++i) first[i] = {UINT64_MAX, i};
  cache.last_need.assign(d.containers.size(), 0);
  for (const Stream& s : d.streams)
    for (const Packet& p : s.packets)
      if (p.compressed() && p.container < first.size()) {
        first[p.container].first = std::min(first[p.container].first, p.begin_ticks);
        cache.last_need[p.container] = std::max(cache.last_need[p.container], p.begin_ticks);
      }
  std::sort(first.begin(), first.end());
  cache.need_order.clear();
  for (const auto& [ticks, index] : first) cache.need_order.push_back(index);
  cache.asked.assign(d.containers.size(), false);
  cache.need_cursor = 0;
}

// After container `index` was asked for: starts the first container not
// asked for yet, in the order they are needed (planned: expand_container
// plans first).
void prefetch_after(const Trace::Data& d, uint32_t index) {
  ExpansionCache& cache = d.expansions;
  if (index < cache.asked.size()) cache.asked[index] = true;
  while (cache.need_cursor < cache.need_order.size() && cache.asked[cache.need_order[cache.need_cursor]])
    ++cache.need_cursor;
  if (cache.need_cursor < cache.need_order.size()) prefetch(d, cache.need_order[cache.need_cursor]);
}

}  // namespace

ExpansionCache::~ExpansionCache() {
  {
    std::lock_guard lock(mutex);
    stopping = true;
  }
  work.notify_all();
  if (worker.joinable()) worker.join();
}

std::shared_ptr<const Expansion> expand_container(const Trace::Data& d, uint32_t index) {
  ExpansionCache& cache = d.expansions;
  std::unique_lock lock(cache.mutex);
  plan_prefetch(d);
  cache.done.wait(lock, [&] { return cache.prefetching != index; });
  std::shared_ptr<const Expansion> e = d.containers[index].live.lock();
  if (e == nullptr) {
    // The worker starts on the next block meanwhile, and the lock is let
    // go while this one expands: held, it kept the worker from handing
    // over what it had expanded and from starting the next.
    prefetch_after(d, index);
    compress::ExpandedBytes scratch = std::move(cache.scratch_frame);  // a second reader makes its own
    lock.unlock();
    e = make_expansion(d, index, scratch);
    lock.lock();
    cache.scratch_frame = std::move(scratch);
    enter(d, index, e);
    ++cache.by_readers;
  }
  if (cache.prefetched_index == index) {  // the caller holds it now
    cache.prefetched.reset();
    cache.prefetched_index = kNoContainer;
  }
  prefetch_after(d, index);
  return e;
}

}  // namespace spoor::reader
