// The memory limit of the cgroup spoor record runs in (a container's, a
// systemd unit's, a batch job's), which the traced program shares: what
// the recorder's packing may take of it is sized from it (packing_budget.h).
//
// Both hierarchies are read. cgroup v2: memory.max and memory.high of the
// process's cgroup and of each ancestor up to the mount ("max": none).
// cgroup v1: memory.limit_in_bytes of the memory controller's cgroup and
// its ancestors (a value near 2^63: none). The smallest is the limit. The
// cgroup paths of /proc/self/cgroup are relative to the hierarchy's root,
// which a container may not see: the mount's own root (mountinfo's fourth
// field) is taken off them first, and a path outside it means the mount
// is the process's own cgroup.
#ifndef SPOOR_PRELOAD_RECORD_CGROUP_MEMORY_H
#define SPOOR_PRELOAD_RECORD_CGROUP_MEMORY_H

#include <cstdint>
#include <string>

namespace spoor::record {

// What cgroup_memory_limit reads: the texts of /proc/self/cgroup and
// /proc/self/mountinfo, and a prefix put before every path mountinfo names
// ("" on a live system; a test's directory tree otherwise).
struct CgroupSources {
  std::string proc_cgroup;
  std::string mountinfo;
  std::string root_prefix;
};

// The smallest memory limit over the process's cgroups and their
// ancestors, in bytes; UINT64_MAX when none is set or none can be read.
uint64_t cgroup_memory_limit(const CgroupSources& sources);

// The same for this process.
uint64_t cgroup_memory_limit();

}  // namespace spoor::record

#endif  // SPOOR_PRELOAD_RECORD_CGROUP_MEMORY_H
