#include "spoor/analysis/kernel_block.h"

#include <algorithm>

namespace spoor::analysis {
namespace {

namespace f = field;

void count_issue(BlockTally& t, std::string_view rwbs, uint32_t bytes) {
  ++t.requests;
  if (rwbs.find('R') != std::string_view::npos) {
    ++t.reads;
    t.read_bytes += bytes;
  } else if (rwbs.find('W') != std::string_view::npos) {
    ++t.writes;
    t.write_bytes += bytes;
  } else {
    t.other_bytes += bytes;
  }
}

void count_latency(BlockTally& t, int64_t ns) {
  ++t.completed;
  t.total_ns += ns;
  t.max_ns = std::max(t.max_ns, ns);
}

template <class T>
std::vector<T> by_bytes(const std::map<uint32_t, BlockTally>& m, uint32_t T::*key) {
  std::vector<T> v;
  for (const auto& [k, tally] : m) {
    T x;
    x.*key = k;
    x.tally = tally;
    v.push_back(x);
  }
  auto bytes = [](const BlockTally& t) { return t.read_bytes + t.write_bytes + t.other_bytes; };
  std::stable_sort(v.begin(), v.end(), [&](const T& a, const T& b) {
    return bytes(a.tally) != bytes(b.tally) ? bytes(a.tally) > bytes(b.tally) : a.tally.requests > b.tally.requests;
  });
  return v;
}

}  // namespace

std::string device_name(uint32_t dev) { return std::to_string(dev >> 20) + ":" + std::to_string(dev & 0xfffff); }

std::string device_label(uint32_t dev, std::string_view name) {
  return name.empty() ? device_name(dev) : std::string(name) + " (" + device_name(dev) + ")";
}

std::string_view BlockAnalysis::name(uint32_t dev) const {
  auto it = names_.find(dev);
  return it == names_.end() ? std::string_view{} : std::string_view(it->second);
}

bool BlockAnalysis::wants(EventKind kind) const {
  return kind == EventKind::kernel_block_device || kind == EventKind::kernel_block;
}

void BlockAnalysis::on_event(const reader::Event& e, const EventContext& c) {
  const KnownEvent& k = *c.known;
  if (k.kind == EventKind::kernel_block_device) {
    names_[static_cast<uint32_t>(field_u64(e, k, f::kKDeviceDev))] = field_str(e, k, f::kKDeviceName);
    return;
  }
  if (k.kind != EventKind::kernel_block) return;
  ++events_;
  const auto dev = static_cast<uint32_t>(field_u64(e, k, f::kKDev));
  const uint64_t sector = field_u64(e, k, f::kKSector);
  if (field_u64(e, k, f::kKIssue) != 0) {
    const auto tid = static_cast<uint32_t>(field_u64(e, k, f::kKBlockPid));
    const auto bytes = static_cast<uint32_t>(field_u64(e, k, f::kKBytes));
    const std::string_view rwbs = field_str(e, k, f::kKRwbs);
    count_issue(devices_[dev], rwbs, bytes);
    count_issue(issuers_[tid], rwbs, bytes);
    in_flight_[{dev, sector}] = Issued{e.time_ns, tid, bytes, std::string(rwbs)};
    return;
  }
  auto it = in_flight_.find({dev, sector});
  if (it == in_flight_.end()) return;
  const Issued& i = it->second;
  const int64_t ns = std::max<int64_t>(0, e.time_ns - i.time_ns);
  count_latency(devices_[dev], ns);
  count_latency(issuers_[i.tid], ns);
  spans_.push_back({i.tid, dev, sector, i.bytes, i.rwbs, i.time_ns, e.time_ns});
  in_flight_.erase(it);
}

std::vector<BlockDevice> BlockAnalysis::devices() const { return by_bytes<BlockDevice>(devices_, &BlockDevice::dev); }
std::vector<BlockIssuer> BlockAnalysis::issuers() const { return by_bytes<BlockIssuer>(issuers_, &BlockIssuer::tid); }

}  // namespace spoor::analysis
