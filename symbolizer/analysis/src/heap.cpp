// The heap replay. A site's bytes live at the peak are kept without copying
// every site at each new peak: the peak has an epoch number, and a site
// records its live bytes the first time it changes after a new epoch began
// (until then they are what they were at the peak). O(1) per event.
#include "spoor/analysis/heap.h"

#include <bit>
#include <unordered_map>

#include "address_map.h"

namespace spoor::analysis {

size_t size_bucket(uint64_t size) { return static_cast<size_t>(std::bit_width(size)); }

namespace {

namespace f = field;

struct Block {
  uint64_t size = 0;
  uint32_t site = 0;
};

struct SiteState {
  uint64_t live = 0;
  uint64_t at_peak = 0;
  uint64_t epoch = 0;  // of the peak at_peak was taken for
};

struct ProcessHeap {
  HeapProfile profile;
  std::vector<SiteState> site_state;  // beside profile.sites
  std::unordered_map<StackKey, uint32_t> site_by_stack;
  AddressMap<Block> live;
  uint64_t live_bytes = 0;
  uint64_t peak_epoch = 0;
  uint64_t last_alloc = 0;  // address of the latest allocation, 0 after a free
  ImageIndex image = kNone;

  // Before a site's live bytes change: keep what they were at the peak.
  void touch(uint32_t site) {
    SiteState& s = site_state[site];
    if (s.epoch != peak_epoch) {
      s.at_peak = s.live;
      s.epoch = peak_epoch;
    }
  }

  uint32_t site_of(StackKey stack) {
    auto [it, inserted] = site_by_stack.emplace(stack, static_cast<uint32_t>(profile.sites.size()));
    if (inserted) {
      profile.sites.emplace_back();
      profile.sites.back().stack = stack;
      site_state.emplace_back();
    }
    return it->second;
  }

  void allocate(uint64_t address, uint64_t size, StackKey stack, int64_t time_ns) {
    const uint32_t site = site_of(stack);
    HeapSite& s = profile.sites[site];
    s.calls++;
    s.allocated_bytes += size;
    profile.allocated_bytes += size;
    profile.size_histogram[size_bucket(size)]++;
    // The same address still live means its free was lost: forget it.
    Block old;
    if (live.take(address, &old)) release(old);
    live.put(address, Block{size, site});
    touch(site);
    site_state[site].live += size;
    live_bytes += size;
    last_alloc = address;
    if (live_bytes > profile.peak_bytes) {
      profile.peak_bytes = live_bytes;
      profile.peak_ns = time_ns;
      ++peak_epoch;
      site_state[site].at_peak = site_state[site].live;
      site_state[site].epoch = peak_epoch;
    }
  }

  void release(const Block& b) {
    touch(b.site);
    site_state[b.site].live -= b.size;
    live_bytes -= b.size;
  }

  void free_block(uint64_t address) {
    Block b;
    if (!live.take(address, &b)) {
      profile.unknown_frees++;
      return;
    }
    if (address == last_alloc) {
      profile.temporary++;
      profile.sites[b.site].temporary++;
    }
    last_alloc = 0;
    release(b);
  }

  // Every block still live is leaked: the process ended or replaced its image.
  void leak_all() {
    live.for_each([&](uint64_t, const Block& b) {
      HeapSite& s = profile.sites[b.site];
      s.leaked_bytes += b.size;
      s.leaked_blocks++;
      profile.leaked_bytes += b.size;
      profile.leaked_blocks++;
      release(b);
    });
    live.clear();
    last_alloc = 0;
  }

  void finish() {
    leak_all();
    for (size_t i = 0; i < site_state.size(); ++i) {
      const SiteState& s = site_state[i];
      // Untouched since the last peak: what it had then is what it had
      // before leak_all (at_peak was taken at the first change after it).
      profile.sites[i].peak_bytes = s.epoch == peak_epoch ? s.at_peak : s.live;
    }
  }
};

}  // namespace

struct HeapAnalysis::State {
  std::vector<ProcessHeap> heaps;
  std::vector<uint32_t> heap_of_process;  // ProcessIndex -> index in heaps, or kNone
  std::vector<HeapProfile> profiles;

  ProcessHeap& heap(const EventContext& c) {
    if (c.process >= heap_of_process.size()) heap_of_process.resize(c.process + 1, kNone);
    uint32_t& i = heap_of_process[c.process];
    if (i == kNone) {
      i = static_cast<uint32_t>(heaps.size());
      heaps.emplace_back();
      heaps.back().profile.process = c.process;
    }
    ProcessHeap& h = heaps[i];
    if (h.image != c.image) {
      if (h.image != kNone) h.leak_all();  // an exec: the old image's heap is gone
      h.image = c.image;
    }
    return h;
  }
};

HeapAnalysis::HeapAnalysis() : state_(std::make_unique<State>()) {}
HeapAnalysis::HeapAnalysis(HeapAnalysis&&) noexcept = default;
HeapAnalysis& HeapAnalysis::operator=(HeapAnalysis&&) noexcept = default;
HeapAnalysis::~HeapAnalysis() = default;

void HeapAnalysis::on_event(const reader::Event& e, const EventContext& c) {
  const KnownEvent& k = *c.known;
  switch (k.kind) {
    case EventKind::heap_alloc: {
      ProcessHeap& h = state_->heap(c);
      h.profile.alloc_calls++;
      const uint64_t ptr = field_u64(e, k, f::kPtr);
      if (ptr == 0) return;  // the allocator failed
      h.allocate(ptr, field_u64(e, k, f::kAllocSize), c.stack(static_cast<uint32_t>(field_u64(e, k, f::kAllocStack))),
                 e.time_ns);
      return;
    }
    case EventKind::heap_free: {
      ProcessHeap& h = state_->heap(c);
      h.profile.free_calls++;
      const uint64_t ptr = field_u64(e, k, f::kPtr);
      if (ptr != 0) h.free_block(ptr);
      return;
    }
    case EventKind::heap_realloc: {
      ProcessHeap& h = state_->heap(c);
      h.profile.realloc_calls++;
      const uint64_t old_ptr = field_u64(e, k, f::kReallocOld);
      const uint64_t ptr = field_u64(e, k, f::kReallocPtr);
      const uint64_t size = field_u64(e, k, f::kReallocSize);
      if (ptr != 0) {
        if (old_ptr != 0) h.free_block(old_ptr);
        h.allocate(ptr, size, c.stack(static_cast<uint32_t>(field_u64(e, k, f::kReallocStack))), e.time_ns);
      } else if (size == 0 && old_ptr != 0) {
        h.free_block(old_ptr);  // realloc(p, 0) freed p
      }
      return;
    }
    case EventKind::heap_mmap: {
      ProcessHeap& h = state_->heap(c);
      h.profile.mmap_calls++;
      h.profile.mmap_bytes += field_u64(e, k, f::kMmapSize);
      return;
    }
    case EventKind::heap_munmap:
      state_->heap(c).profile.munmap_calls++;
      return;
    default:
      return;
  }
}

void HeapAnalysis::on_end(const TraceModel&) {
  state_->profiles.clear();
  for (ProcessHeap& h : state_->heaps) {
    h.finish();
    state_->profiles.push_back(h.profile);
  }
}

const std::vector<HeapProfile>& HeapAnalysis::profiles() const { return state_->profiles; }

}  // namespace spoor::analysis
