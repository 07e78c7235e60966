// The names of the machine's block devices ("sda", "nvme0n1p2"), read at
// record time from sysfs, so a report can say "sda (8:0)" as iostat does
// where the block tracepoints only give a dev_t. Written into the trace as
// Spoor.Kernel BlockDevice events, once per device, at the session's start.
#ifndef SPOOR_KERNELSRC_BLOCK_DEVICES_H
#define SPOOR_KERNELSRC_BLOCK_DEVICES_H

#include <cstdint>
#include <string>
#include <vector>

namespace spoor::kernelsrc {

struct BlockDeviceName {
  uint32_t dev = 0;  // as the block tracepoints give it: major << 20 | minor
  std::string name;  // "sda"
};

// The kernel's internal dev_t (MKDEV: major << 20 | minor), which the
// block_rq_* tracepoints record.
inline uint32_t kernel_dev(uint32_t major, uint32_t minor) { return major << 20 | (minor & 0xfffff); }

// Every entry "MAJ:MIN" of `dir` (/sys/dev/block), named by the DEVNAME
// line of its uevent file, else by the base name of the link's target
// (../../devices/.../sda). Sorted by dev; entries with neither are left
// out; empty when `dir` cannot be read (no sysfs in a container).
std::vector<BlockDeviceName> block_device_names(const std::string& dir = "/sys/dev/block");

}  // namespace spoor::kernelsrc

#endif  // SPOOR_KERNELSRC_BLOCK_DEVICES_H
