#include "region.h"

#include <sys/mman.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <new>

#include "spoor/control.h"

namespace spoor::record {
namespace {

constexpr uint64_t kMetadataCapacity = 1u << 20;

}  // namespace

Region::~Region() {
  if (base_ != nullptr) munmap(base_, size_);
  if (fd_ >= 0) close(fd_);
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
    *error = std::string("cannot create a shared region: ") + std::strerror(errno);
    return false;
  }
  void* p = mmap(nullptr, size_, PROT_READ | PROT_WRITE, MAP_SHARED, fd_, 0);
  if (p == MAP_FAILED) {
    *error = std::string("cannot map a shared region: ") + std::strerror(errno);
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
  if (ring_init(base_ + ring_off, ring_size, layout.cpus, layout.packet_bytes, &ring_,
                /*memory_is_zero=*/true) != Status::ok) {
    *error = "cannot lay out the ring buffers";
    return false;
  }
  return true;
}

void Region::copy_new_metadata(Sink sink) {
  const uint64_t len = header_->metadata_length.load(std::memory_order_acquire);
  if (len <= metadata_copied_ || len > header_->metadata_capacity) return;
  sink.write(sink.context, base_ + header_->metadata_offset + metadata_copied_, len - metadata_copied_);
  metadata_copied_ = len;
}

}  // namespace spoor::record
