// COMPRESSED blocks expanded when a reader reaches one of their packets,
// and kept while the Trace's limit allows. Opening a trace read only each
// block's section of headers: expanding rebuilds the records and checks
// every packet's CRC, which opening could not.
#include <algorithm>
#include <cstring>

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

std::vector<uint8_t> SpareBuffers::take() {
  std::lock_guard lock(mutex);
  if (buffers.empty()) return {};
  std::vector<uint8_t> b = std::move(buffers.back());
  buffers.pop_back();
  return b;
}

void SpareBuffers::give(std::vector<uint8_t>&& buffer) {
  std::lock_guard lock(mutex);
  if (buffers.size() < kMost && buffer.capacity() > 0) buffers.push_back(std::move(buffer));
}

bool Expansion::bad(uint64_t block_at) const {
  return std::binary_search(bad_packets.begin(), bad_packets.end(), block_at);
}

std::shared_ptr<const Expansion> expand_container(const Trace::Data& d, uint32_t index) {
  const Trace::Data::Container& c = d.containers[index];
  ExpansionCache& cache = d.expansions;
  std::lock_guard lock(cache.mutex);
  if (std::shared_ptr<const Expansion> live = c.live.lock()) return live;
  // Its buffer goes back to the spares when the last holder lets go.
  auto* made = new Expansion;
  std::shared_ptr<Expansion> e(made, [spare = cache.spare](Expansion* x) {
    spare->give(std::move(x->bytes));
    delete x;
  });
  e->bytes = cache.spare->take();
  if (compress::unpack(c.payload, e->bytes, e->problem, &cache.scratch_frame))
    check(*e, c.raw_size);
  if (!e->problem.empty()) e->bytes.clear();
  ++cache.expansions;
  c.live = e;
  cache.kept.push_back(e);
  cache.kept_bytes += e->bytes.size();
  // What the readers hold stays alive whatever is dropped here.
  while (cache.kept_bytes > cache.limit && !cache.kept.empty()) {
    cache.kept_bytes -= cache.kept.front()->bytes.size();
    cache.kept.pop_front();
  }
  uint64_t held = 0;
  for (const Trace::Data::Container& other : d.containers)
    if (std::shared_ptr<const Expansion> live = other.live.lock()) held += live->bytes.size();
  cache.peak_bytes = std::max(cache.peak_bytes, held);
  return e;
}

}  // namespace spoor::reader
