// The k-way merge: one head per stream in a min-heap on (ticks, stream
// index). Each next() pops one head and decodes that stream's next record,
// so the cost is O(log streams) per event plus the decoding. A stream about
// to enter a packet is not decoded: its head is the packet's first time
// stamp until the merge gets there, so a packet's COMPRESSED block is
// expanded only when its time comes. (Decoding every stream's first event
// up front expanded, and held, the block of every process's first packet:
// most of a long multi-process trace.)
#include "spoor/reader/event_reader.h"

#include <queue>
#include <unordered_map>
#include <utility>

#include "stream_decoder.h"
#include "trace_data.h"

namespace spoor::reader {

struct EventReader::State {
  std::vector<StreamDecoder> decoders;
  std::vector<Event> heads;
  std::vector<uint64_t> counts;
  std::unordered_map<uint32_t, size_t> index_by_id;
  using Entry = std::pair<uint64_t, size_t>;  // ticks, stream index
  std::priority_queue<Entry, std::vector<Entry>, std::greater<Entry>> heap;
  std::vector<Damage> damages;
  uint64_t total = 0;
  // What the event last handed out points into: its stream may move on to
  // another COMPRESSED block before the caller is done with it.
  std::shared_ptr<const Expansion> handed_out;
  // Stream i's heap entry is its next packet's first time stamp, no event.
  std::vector<bool> pending;

  void decode(size_t i) {
    switch (decoders[i].next(heads[i])) {
      case StreamDecoder::Step::kEvent: heap.emplace(heads[i].ticks, i); break;
      case StreamDecoder::Step::kDamage:
        damages.push_back(decoders[i].damage());
        decoders[i].release();  // a stream that is done holds no block
        break;
      case StreamDecoder::Step::kEnd: decoders[i].release(); break;
    }
  }

  void refill(size_t i) {
    uint64_t begin_ticks = 0;
    if (!decoders[i].between_packets(begin_ticks)) return decode(i);
    decoders[i].release();  // the event handed out is held by handed_out
    pending[i] = true;
    heap.emplace(begin_ticks, i);
  }
};

EventReader::EventReader(const Trace& trace) : state_(std::make_unique<State>()) {
  State& s = *state_;
  const auto& streams = trace.streams();
  s.decoders.reserve(streams.size());
  s.heads.resize(streams.size());
  s.counts.assign(streams.size(), 0);
  s.pending.assign(streams.size(), false);
  for (size_t i = 0; i < streams.size(); ++i) {
    s.decoders.emplace_back(trace, streams[i]);
    s.index_by_id.emplace(streams[i].id, i);
  }
  for (size_t i = 0; i < streams.size(); ++i) s.refill(i);
}

EventReader::EventReader(EventReader&&) noexcept = default;
EventReader& EventReader::operator=(EventReader&&) noexcept = default;
EventReader::~EventReader() = default;

bool EventReader::next(Event& out) {
  State& s = *state_;
  size_t i = 0;
  for (;;) {
    if (s.heap.empty()) return false;
    i = s.heap.top().second;
    s.heap.pop();
    if (!s.pending[i]) break;
    s.pending[i] = false;
    s.decode(i);  // its packet's time has come
  }
  // Swapping hands the caller the head and gives the stream the caller's
  // old event to decode into, so field vectors are reused, not reallocated.
  std::swap(out, s.heads[i]);
  if (s.handed_out != s.decoders[i].holding()) s.handed_out = s.decoders[i].holding();
  ++s.counts[i];
  ++s.total;
  s.refill(i);
  return true;
}

const std::vector<Damage>& EventReader::damages() const { return state_->damages; }
uint64_t EventReader::events_read() const { return state_->total; }

uint64_t EventReader::events_read(uint32_t stream_id) const {
  auto it = state_->index_by_id.find(stream_id);
  return it == state_->index_by_id.end() ? 0 : state_->counts[it->second];
}

}  // namespace spoor::reader
