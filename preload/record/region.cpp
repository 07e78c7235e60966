#include "region.h"

#include <sys/mman.h>
#include <sys/resource.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstring>
#include <new>

#include "region_slots.h"
#include "spoor/control.h"

namespace spoor::record {
namespace {

constexpr uint64_t kMetadataCapacity = 1u << 20;
// A process that has written little is most likely a short one (a shell's
// subshell, a compiler driver): 32 KiB ahead covers what it writes before
// it ends. Allocating 256 KiB per CPU for each of them, and freeing it at
// their end, was half of the recorder's CPU time in fork/exec-heavy runs;
// a writer that keeps going is given as much ahead as it has written.
constexpr uint64_t kMinAhead = 32u << 10;
constexpr uint64_t kMaxAhead = 4u << 20;
// At most this much per CPU and call (~0.3 ms of the drainer here): a
// drain is never held up long enough for a busy ring to fill.
constexpr uint64_t kMaxStep = 1u << 20;
constexpr uintptr_t kPage = 4096;  // madvise's unit; larger pages are multiples

// The slots regions are mapped in (region_slots.h): 256 of them, released
// 8 at a time, with at most 64 MiB of finished regions waiting. Address
// space only (17 GiB for the default 2-CPU layout). More live processes
// than slots, or a region larger than the first one, map where the kernel
// chooses. Regions are made and ended on the drain thread alone.
constexpr size_t kSlots = 256;
constexpr size_t kSlotsPerChunk = 8;
constexpr size_t kMostDeferred = 64u << 20;

RegionSlots& region_slots() {
  static RegionSlots slots;
  return slots;
}

}  // namespace

Region::~Region() {
  if (base_ != nullptr) {
    if (in_slot_) region_slots().give_back(base_, touched_bytes());
    else munmap(base_, size_);
  }
  if (fd_ >= 0) close(fd_);
}

uint64_t Region::writers_reach(uint32_t cpu) const {
  // Relaxed: a stale value only makes populate_ahead do less.
  const uint64_t ring_bytes = uint64_t{1} << ring_.ring_shift;
  const uint64_t head = ring_.cpus[cpu].head.load(std::memory_order_relaxed) & kPosMask;
  if (head < ring_bytes) return head;  // the first lap: exactly where they are
  // Past it, because they went round or went back to the start
  // (ring.cpp's rewind_target): as far as any packet they opened.
  const uint64_t furthest = __atomic_load_n(&ring_.cpus[cpu].furthest, __ATOMIC_RELAXED);
  return furthest < ring_bytes ? furthest : ring_bytes;
}

size_t Region::touched_bytes() const {
  // The header, control block and metadata log's pages written, then each
  // CPU's ring as far as its writers or populate_ahead went.
  if (header_ == nullptr) return size_;
  uint64_t bytes = kPage + header_->control_size + header_->metadata_length.load(std::memory_order_relaxed);
  for (uint32_t cpu = 0; cpu < ring_.cpu_count && cpu < populated_.size(); ++cpu) {
    const uint64_t written = writers_reach(cpu);
    bytes += written > populated_[cpu] ? written : populated_[cpu];
  }
  return static_cast<size_t>(bytes < size_ ? bytes : size_);
}

bool Region::create(const RegionLayout& layout, std::string* error) {
  const uint64_t ring_size = ring_bytes_needed(
      layout.cpus, layout.packet_bytes, packets_per_cpu(layout.buffer_bytes_per_cpu, layout.packet_bytes));
  const uint64_t control_size = ControlBlock::bytes_for(SPOOR_MAX_PROVIDERS);
  const uint64_t ring_off = preload::align_region(sizeof(preload::RegionHeader));
  const uint64_t control_off = preload::align_region(ring_off + ring_size);
  const uint64_t meta_off = preload::align_region(control_off + control_size);
  size_ = static_cast<size_t>(meta_off + kMetadataCapacity);
  // memfds are created with mode 0600; close-on-exec, since the process
  // gets the descriptor over the socket, never by inheritance.
  fd_ = memfd_create("spoor-region", MFD_CLOEXEC);
  if (fd_ < 0 || ftruncate(fd_, static_cast<off_t>(size_)) != 0) {
    const int err = errno;
    *error = std::string("cannot create a shared region: ") + std::strerror(err);
    if (err == EFBIG)
      *error += " (the file size limit, ulimit -f, is below the rings' " + std::to_string(size_ >> 20) +
                " MiB: raise it, or record with a smaller --buffer-size)";
    return false;
  }
  RegionSlots& slots = region_slots();
  static bool tried = false;  // once: a failed reservation (a tight ulimit -v) is not retried
  if (!tried) {
    tried = true;
    slots.reserve(size_, kSlots, kSlotsPerChunk, kMostDeferred);
  }
  void* const slot = slots.take(size_);
  void* p = mmap(slot, size_, PROT_READ | PROT_WRITE, MAP_SHARED | (slot != nullptr ? MAP_FIXED : 0), fd_, 0);
  if (p == MAP_FAILED && slot != nullptr) slots.give_back(slot, 0);
  in_slot_ = p != MAP_FAILED && slot != nullptr;
  if (p == MAP_FAILED) {
    const int err = errno;
    *error = std::string("cannot map a shared region: ") + std::strerror(err);
    rlimit limit{};
    if (err == ENOMEM && getrlimit(RLIMIT_AS, &limit) == 0 && limit.rlim_cur != RLIM_INFINITY)
      *error += " (the address space limit, ulimit -v, is " + std::to_string(limit.rlim_cur >> 20) +
                " MiB, and the recorder maps every live process's " + std::to_string(size_ >> 20) +
                " MiB region: record with a smaller --buffer-size, like 1M)";
    return false;
  }
  base_ = static_cast<uint8_t*>(p);
  header_ = new (base_) preload::RegionHeader{};
  header_->magic = preload::kRegionMagic;
  header_->version = preload::kRegionVersion;
  header_->total_size = size_;
  header_->ring_offset = ring_off;
  header_->ring_size = ring_size;
  header_->control_offset = control_off;
  header_->control_size = control_size;
  header_->metadata_offset = meta_off;
  header_->metadata_capacity = kMetadataCapacity;
  header_->time_grain_ticks = layout.time_grain_ticks;
  if (ring_init(base_ + ring_off, ring_size, layout.cpus, layout.packet_bytes, &ring_,
                /*memory_is_zero=*/true) != Status::ok) {
    *error = "cannot lay out the ring buffers";
    return false;
  }
  populated_.assign(ring_.cpu_count, 0);
  return true;
}

void Region::populate_ahead() {
  const uint64_t ring_bytes = uint64_t{1} << ring_.ring_shift;
  for (uint32_t cpu = 0; cpu < ring_.cpu_count; ++cpu) {
    uint64_t& done = populated_[cpu];
    if (done >= ring_bytes) continue;  // past the first lap: every page exists
    const uint64_t pos = writers_reach(cpu);
    if (pos == 0) continue;  // nothing written on this CPU yet
    if (pos >= ring_bytes) {  // the writers went round: they faulted the rest
      done = ring_bytes;
      continue;
    }
    const uint64_t ahead = pos < kMinAhead ? kMinAhead : (pos > kMaxAhead ? kMaxAhead : pos);
    uint64_t want = pos + ahead < ring_bytes ? pos + ahead : ring_bytes;
    // While the drainer keeps up, the writers go back to the ring's start
    // one packet past kRingRewindAfter: pages beyond it would be zeroed on
    // the recorder's CPU for nothing. Past it (a drainer that fell
    // behind), as far ahead as they went.
    const uint64_t stays_within = ring_reach_while_drained(ring_bytes, ring_.subbuf_size);
    if (pos <= stays_within && want > stays_within) want = stays_within;
    // Pages behind the writers are there already (they faulted them).
    const uint64_t start = done > pos ? done : pos;
    if (start >= want) continue;
    const uint64_t end = want - start > kMaxStep ? start + kMaxStep : want;
    uint8_t* const cpu_data = ring_.data + (uint64_t{cpu} << ring_.ring_shift);
    const uintptr_t from = reinterpret_cast<uintptr_t>(cpu_data + start) & ~(kPage - 1);
    const uintptr_t to = reinterpret_cast<uintptr_t>(cpu_data + end);
    // MADV_POPULATE_WRITE (Linux 5.14): allocates and maps without a fault
    // per page. Where it is missing, a read per page does the same for
    // shared memory (a hole read through a shared mapping is allocated).
    if (madvise(reinterpret_cast<void*>(from), to - from, MADV_POPULATE_WRITE) != 0) {
      for (uintptr_t p = from; p < to; p += kPage) (void)*reinterpret_cast<volatile const uint8_t*>(p);
    }
    done = end;
  }
}

void Region::copy_new_metadata(Sink sink) {
  const uint64_t len = header_->metadata_length.load(std::memory_order_acquire);
  if (len <= metadata_copied_ || len > header_->metadata_capacity) return;
  sink.write(sink.context, base_ + header_->metadata_offset + metadata_copied_, len - metadata_copied_);
  metadata_copied_ = len;
}

void Region::switch_tracing_off() {
  if (header_ == nullptr) return;
  header_->tracing_off.store(1, std::memory_order_seq_cst);
  auto* block = reinterpret_cast<ControlBlock*>(base_ + header_->control_offset);
  // The slots the process has not registered are off already.
  for (uint32_t i = 0; i < SPOOR_MAX_PROVIDERS; ++i) apply_enable_state(block->slots()[i], EnableState{});
  std::atomic_thread_fence(std::memory_order_seq_cst);
}

}  // namespace spoor::record
