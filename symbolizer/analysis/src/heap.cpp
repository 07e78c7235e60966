// The heap replay. A site's bytes live at the peak are kept without copying
// every site at each new peak: the peak has an epoch number, and a site
// records its live bytes the first time it changes after a new epoch began
// (until then they are what they were at the peak). O(1) per event.
// One ImageHeap per image: an exec ends one and starts the next; a Fork
// copies the parent's live blocks (address and size) for the child's first.
#include "spoor/analysis/heap.h"

#include <algorithm>
#include <array>
#include <bit>
#include <cstdint>
#include <unordered_map>
#include <utility>
#include <vector>

#include "address_map.h"
#include "live_bytes_over_time.h"

namespace spoor::analysis {

size_t size_bucket(uint64_t size) { return static_cast<size_t>(std::bit_width(size)); }

namespace {

namespace f = field;

// A block the image did not allocate: a fork child's copy of a parent's.
constexpr uint32_t kInherited = kNone;

struct Block {
  uint64_t size = 0;
  uint32_t site = 0;  // kInherited: not one of the image's sites
};

struct SiteState {
  uint64_t live = 0;
  uint64_t at_peak = 0;
  uint64_t epoch = 0;  // of the peak at_peak was taken for
};

// The parent's live blocks when it forked: what the child starts with.
using ForkCopy = std::vector<std::pair<uint64_t, uint64_t>>;  // address, size

struct ImageHeap {
  explicit ImageHeap(int64_t start_ns) : over_time(start_ns) {}
  HeapProfile profile;
  LiveBytesOverTime over_time;
  std::vector<SiteState> site_state;  // beside profile.sites
  std::unordered_map<StackKey, uint32_t> site_by_stack;
  static constexpr int kSiteCacheBits = 6;
  static constexpr uint32_t kNoSite = UINT32_MAX;
  struct SiteSlot {
    StackKey stack = 0;
    uint32_t site = kNoSite;
  };
  std::array<SiteSlot, 1 << kSiteCacheBits> site_cache{};
  AddressMap<Block> live;
  uint64_t live_bytes = 0;  // the image's own blocks
  uint64_t peak_epoch = 0;
  uint64_t last_alloc = 0;  // address of the latest allocation, 0 after a free
  bool ended = false;
  // A fork child's first image whose parent's Fork is not in yet (the
  // child's events may come first): the unknown frees' addresses, to be
  // matched when it comes. Emptied once no Fork can apply.
  bool may_inherit = false;
  std::vector<uint64_t> unknown_free_addresses;

  // Before a site's live bytes change: keep what they were at the peak.
  void touch(uint32_t site) {
    SiteState& s = site_state[site];
    if (s.epoch != peak_epoch) {
      s.at_peak = s.live;
      s.epoch = peak_epoch;
    }
  }

  // Behind a small direct-mapped cache: the map's hash costs a division,
  // once per allocation, and a program allocates from few stacks.
  uint32_t site_of(StackKey stack) {
    SiteSlot& slot = site_cache[(stack * 0x9E3779B97F4A7C15ull) >> (64 - kSiteCacheBits)];
    if (slot.site != kNoSite && slot.stack == stack) return slot.site;
    auto [it, inserted] = site_by_stack.try_emplace(stack, static_cast<uint32_t>(profile.sites.size()));
    if (inserted) {
      profile.sites.emplace_back();
      profile.sites.back().stack = stack;
      site_state.emplace_back();
    }
    slot = SiteSlot{stack, it->second};
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
    if (live.take(address, &old)) release(old, time_ns);
    live.put(address, Block{size, site});
    touch(site);
    site_state[site].live += size;
    live_bytes += size;
    over_time.note(time_ns, live_bytes);
    last_alloc = address;
    if (live_bytes > profile.peak_bytes) {
      profile.peak_bytes = live_bytes;
      profile.peak_ns = time_ns;
      ++peak_epoch;
      site_state[site].at_peak = site_state[site].live;
      site_state[site].epoch = peak_epoch;
    }
  }

  // A block leaves the live set (freed, or its free was lost).
  void release(const Block& b, int64_t time_ns) {
    if (b.site == kInherited) {
      profile.inherited_freed_blocks++;
      profile.inherited_freed_bytes += b.size;
      return;
    }
    touch(b.site);
    site_state[b.site].live -= b.size;
    live_bytes -= b.size;
    over_time.note(time_ns, live_bytes);
  }

  void free_block(uint64_t address, int64_t time_ns) {
    Block b;
    if (!live.take(address, &b)) {
      profile.unknown_frees++;
      if (may_inherit) unknown_free_addresses.push_back(address);
      return;
    }
    if (address == last_alloc) {
      profile.temporary++;
      profile.sites[b.site].temporary++;
    }
    last_alloc = 0;
    release(b, time_ns);
  }

  // The parent's blocks at the fork. Frees the image made before the Fork
  // event came in were unknown then: those of inherited blocks are known
  // frees now.
  void inherit(const ForkCopy& blocks) {
    may_inherit = false;
    std::unordered_map<uint64_t, uint32_t> freed_early;
    for (uint64_t a : unknown_free_addresses) freed_early[a]++;
    unknown_free_addresses = {};
    for (const auto& [address, size] : blocks) {
      profile.inherited_blocks++;
      profile.inherited_bytes += size;
      auto it = freed_early.find(address);
      if (it != freed_early.end() && it->second > 0) {
        it->second--;
        profile.unknown_frees--;
        profile.inherited_freed_blocks++;
        profile.inherited_freed_bytes += size;
      } else if (live.find(address) == nullptr) {
        live.put(address, Block{size, kInherited});
      }
      // else: the image allocated at that address already, so it freed the
      // parent's block first (a free the trace lost): freed, uncounted.
    }
  }

  // The image is over: what is still live was leaked (the process ended)
  // or released by an exec; inherited blocks are neither.
  void end(bool by_exec, int64_t end_ns) {
    if (ended) return;
    ended = true;
    profile.timeline = over_time.timeline(end_ns);
    may_inherit = false;
    unknown_free_addresses = {};
    profile.ended_by_exec = by_exec;
    live.for_each([&](uint64_t, const Block& b) {
      if (b.site == kInherited) {
        profile.inherited_kept_blocks++;
        profile.inherited_kept_bytes += b.size;
        return;
      }
      if (by_exec) {
        profile.released_by_exec_bytes += b.size;
        profile.released_by_exec_blocks++;
      } else {
        HeapSite& s = profile.sites[b.site];
        s.leaked_bytes += b.size;
        s.leaked_blocks++;
        profile.leaked_bytes += b.size;
        profile.leaked_blocks++;
      }
      touch(b.site);
      site_state[b.site].live -= b.size;
      live_bytes -= b.size;
    });
    live.clear();
    last_alloc = 0;
    for (size_t i = 0; i < site_state.size(); ++i) {
      const SiteState& s = site_state[i];
      // Untouched since the last peak: what it had then is what it had
      // before the loop above (at_peak was taken at the first change after it).
      profile.sites[i].peak_bytes = s.epoch == peak_epoch ? s.at_peak : s.live;
    }
  }
};

}  // namespace

struct HeapAnalysis::State {
  std::vector<ImageHeap> heaps;           // one per image, in order of first heap call
  std::vector<uint32_t> heap_of_process;  // ProcessIndex -> its latest in heaps, or kNone
  std::vector<ImageIndex> exec_from;      // ProcessIndex -> the image that called exec (no ExecFailed yet)
  std::unordered_map<uint32_t, ForkCopy> fork_copies;  // child pid -> what it inherits
  std::vector<HeapProfile> profiles;

  template <class T>
  static T& at(std::vector<T>& v, ProcessIndex p) {
    if (p >= v.size()) v.resize(p + 1, T(kNone));
    return v[p];
  }

  // A fork child's first image (the process's first, exec_count 0).
  static bool first_image(const EventContext& c) {
    const ProcessInfo& p = c.model->processes[c.process];
    return !p.images.empty() && p.images.front() == c.image && c.model->images[c.image].exec_count == 0;
  }

  // The heap of the event's image; the process's previous image's ends
  // here (by exec, unless the pid was reused by a new process).
  ImageHeap& heap(const EventContext& c) {
    uint32_t& i = at(heap_of_process, c.process);
    if (i != kNone && heaps[i].profile.image == c.image) return heaps[i];
    if (i != kNone) {
      const ImageIndex ended = heaps[i].profile.image;
      heaps[i].end(c.model->images[c.image].exec_count > 0, c.model->images[ended].end_ns);
    }
    i = static_cast<uint32_t>(heaps.size());
    heaps.emplace_back(c.model->images[c.image].start_ns);
    ImageHeap& h = heaps.back();
    h.profile.process = c.process;
    h.profile.image = c.image;
    if (first_image(c)) {
      const uint32_t pid = c.model->processes[c.process].pid;
      auto copy = fork_copies.find(pid);
      if (copy != fork_copies.end()) {
        h.inherit(copy->second);
        fork_copies.erase(copy);
      } else {
        h.may_inherit = true;  // its Fork may come later
      }
    }
    return h;
  }

  // The parent's live blocks go to the child: at its first heap event, or
  // now if that came first.
  void fork(const reader::Event& e, const KnownEvent& k, const EventContext& c) {
    if (!has_field(k, f::kForkSpawn) || field_u64(e, k, f::kForkSpawn) != 0) return;  // spawned, or not said
    const auto child_pid = static_cast<uint32_t>(field_u64(e, k, f::kChildPid));
    const uint32_t pi = c.process < heap_of_process.size() ? heap_of_process[c.process] : kNone;
    if (pi == kNone || heaps[pi].profile.image != c.image || heaps[pi].live.size() == 0) return;
    ForkCopy copy;
    copy.reserve(heaps[pi].live.size());
    heaps[pi].live.for_each([&](uint64_t address, const Block& b) { copy.emplace_back(address, b.size); });
    auto child = c.model->process_by_pid.find(child_pid);
    if (child != c.model->process_by_pid.end() && child->second < heap_of_process.size() &&
        heap_of_process[child->second] != kNone) {
      ImageHeap& ch = heaps[heap_of_process[child->second]];
      if (ch.may_inherit) ch.inherit(copy);
      return;  // else the child is past its first image: nothing to inherit
    }
    fork_copies[child_pid] = std::move(copy);
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
      ImageHeap& h = state_->heap(c);
      h.profile.alloc_calls++;
      const uint64_t ptr = field_u64(e, k, f::kPtr);
      if (ptr == 0) return;  // the allocator failed
      h.allocate(ptr, field_u64(e, k, f::kAllocSize), c.stack(static_cast<uint32_t>(field_u64(e, k, f::kAllocStack))),
                 e.time_ns);
      return;
    }
    case EventKind::heap_free: {
      ImageHeap& h = state_->heap(c);
      h.profile.free_calls++;
      const uint64_t ptr = field_u64(e, k, f::kPtr);
      if (ptr != 0) h.free_block(ptr, e.time_ns);
      return;
    }
    case EventKind::heap_realloc: {
      ImageHeap& h = state_->heap(c);
      h.profile.realloc_calls++;
      const uint64_t old_ptr = field_u64(e, k, f::kReallocOld);
      const uint64_t ptr = field_u64(e, k, f::kReallocPtr);
      const uint64_t size = field_u64(e, k, f::kReallocSize);
      if (ptr != 0) {
        if (old_ptr != 0) h.free_block(old_ptr, e.time_ns);
        h.allocate(ptr, size, c.stack(static_cast<uint32_t>(field_u64(e, k, f::kReallocStack))), e.time_ns);
      } else if (size == 0 && old_ptr != 0) {
        h.free_block(old_ptr, e.time_ns);  // realloc(p, 0) freed p
      }
      return;
    }
    case EventKind::heap_mmap: {
      ImageHeap& h = state_->heap(c);
      h.profile.mmap_calls++;
      h.profile.mmap_bytes += field_u64(e, k, f::kMmapSize);
      return;
    }
    case EventKind::heap_munmap:
      state_->heap(c).profile.munmap_calls++;
      return;
    case EventKind::heap_own_allocator:
      state_->heap(c).profile.own_allocator = field_str(e, k, f::kOwnAllocatorPath);
      return;
    case EventKind::process_fork:
      state_->fork(e, k, c);
      return;
    case EventKind::process_exec:
      State::at(state_->exec_from, c.process) = c.image;
      return;
    case EventKind::process_exec_failed:
      State::at(state_->exec_from, c.process) = kNone;
      return;
    case EventKind::process_exit:  // a child that never made a heap call
      state_->fork_copies.erase(static_cast<uint32_t>(field_u64(e, k, f::kExitPid)));
      return;
    case EventKind::process_start:
      // A child past its first image (it exec'd) inherits nothing.
      if (!State::first_image(c)) state_->fork_copies.erase(c.model->processes[c.process].pid);
      return;
    default:
      return;
  }
}

void HeapAnalysis::on_end(const TraceModel& model) {
  state_->profiles.clear();
  state_->fork_copies.clear();
  for (ImageHeap& h : state_->heaps) {
    // Replaced by a later image of the process, or by one the trace does
    // not have (an exec into an untraced program, with no ExecFailed). A
    // later image with exec_count 0 is a new process that reused the pid.
    const ProcessInfo& p = model.processes[h.profile.process];
    auto next = std::find(p.images.begin(), p.images.end(), h.profile.image);
    if (next != p.images.end()) ++next;
    const bool replaced = next != p.images.end() && model.images[*next].exec_count > 0;
    const bool execd = h.profile.process < state_->exec_from.size() &&
                       state_->exec_from[h.profile.process] == h.profile.image;
    h.end(replaced || execd, model.images[h.profile.image].end_ns);
    state_->profiles.push_back(h.profile);
  }
}

const std::vector<HeapProfile>& HeapAnalysis::profiles() const { return state_->profiles; }

}  // namespace spoor::analysis
