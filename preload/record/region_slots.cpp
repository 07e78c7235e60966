#include "region_slots.h"

#include <sys/mman.h>

namespace spoor::record {
namespace {

// Address space only: no memory, no commit charge.
constexpr int kReserveFlags = MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE;

}  // namespace

RegionSlots::~RegionSlots() {
  if (base_ != nullptr) munmap(base_, slot_bytes_ * state_.size());
}

bool RegionSlots::reserve(size_t slot_bytes, size_t slots, size_t chunk, size_t most_deferred) {
  if (base_ != nullptr || slot_bytes == 0 || slot_bytes % 4096 != 0 || chunk == 0 || slots % chunk != 0) return false;
  void* p = mmap(nullptr, slot_bytes * slots, PROT_NONE, kReserveFlags, -1, 0);
  if (p == MAP_FAILED) return false;
  base_ = static_cast<uint8_t*>(p);
  slot_bytes_ = slot_bytes;
  chunk_ = chunk;
  most_deferred_ = most_deferred;
  state_.assign(slots, State::free);
  touched_.assign(slots, 0);
  return true;
}

void* RegionSlots::take(size_t bytes) {
  if (base_ == nullptr || bytes != slot_bytes_) return nullptr;
  // Round the range: a chunk is left alone until its finished regions
  // have been released, most often by the time the cursor comes back.
  for (size_t n = 0; n < state_.size(); ++n) {
    const size_t i = (cursor_ + n) % state_.size();
    if (state_[i] != State::free) continue;
    state_[i] = State::live;
    const size_t left = cursor_ / chunk_;
    cursor_ = (i + 1) % state_.size();
    // Leaving a chunk whose regions all finished while the cursor was in it.
    if (cursor_ / chunk_ != left) release_if_done(left);
    return base_ + i * slot_bytes_;
  }
  return nullptr;
}

bool RegionSlots::release(size_t first, size_t count) {
  ++unmappings_;
  // MAP_FIXED over the slots: the regions' mappings go in one unmapping
  // (one TLB flush), and the range stays reserved.
  return mmap(base_ + first * slot_bytes_, count * slot_bytes_, PROT_NONE, kReserveFlags | MAP_FIXED, -1, 0) !=
         MAP_FAILED;
}

void RegionSlots::give_back(void* slot, size_t touched_bytes) {
  const auto at = static_cast<uint8_t*>(slot);
  if (base_ == nullptr || at < base_ || at >= base_ + slot_bytes_ * state_.size()) return;
  const size_t i = static_cast<size_t>(at - base_) / slot_bytes_;
  if (state_[i] != State::live) return;
  if (deferred_ + touched_bytes > most_deferred_) {
    release(i, 1);
    state_[i] = State::free;
    return;
  }
  state_[i] = State::finished;
  touched_[i] = touched_bytes;
  deferred_ += touched_bytes;
  release_if_done(i / chunk_);
}

void RegionSlots::release_if_done(size_t chunk) {
  // A chunk goes once none of its regions is in use and the cursor is not
  // inside it (it would take the chunk's free slots next, each for a
  // region that would have to finish before the chunk could go).
  const size_t first = chunk * chunk_;
  if (cursor_ > first && cursor_ < first + chunk_) return;
  bool finished = false;
  for (size_t k = first; k < first + chunk_; ++k) {
    if (state_[k] == State::live) return;  // a region still in use: later
    finished = finished || state_[k] == State::finished;
  }
  if (!finished) return;
  release(first, chunk_);
  for (size_t k = first; k < first + chunk_; ++k) {
    if (state_[k] == State::finished) deferred_ -= touched_[k];
    state_[k] = State::free;
    touched_[k] = 0;
  }
}

}  // namespace spoor::record
