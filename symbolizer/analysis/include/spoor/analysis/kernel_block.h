// Block I/O requests, from the privileged tier's machine-wide block
// tracepoints (Spoor.Kernel BlockRequest, `spoor record --kernel=block`):
// how many, how many bytes and how long from issue to completion, per
// device and per issuing task.
//
// Definitions:
// - a request: a BlockRequest issue; its completion is the next complete
//   of the same device and sector. Completions without an issue (issued
//   before the recording) and issues never completed count as requests
//   without a latency.
// - the issuing task: the task running when the request went to the
//   driver (the program itself, or a kernel worker flushing for it).
// - read / write: rwbs holds R / W (D discards, F flushes count as other).
// - a device's name: the BlockDevice event the recorder wrote for it from
//   sysfs ("sda"); traces before that event, and devices not there when
//   the recording started, have none.
#ifndef SPOOR_ANALYSIS_KERNEL_BLOCK_H
#define SPOOR_ANALYSIS_KERNEL_BLOCK_H

#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "spoor/analysis/load.h"

namespace spoor::analysis {

struct BlockTally {
  uint64_t requests = 0;
  uint64_t reads = 0, writes = 0;
  uint64_t read_bytes = 0, write_bytes = 0, other_bytes = 0;
  uint64_t completed = 0;  // requests with a latency
  int64_t total_ns = 0;    // issue to complete, over the completed ones
  int64_t max_ns = 0;
};

struct BlockDevice {
  uint32_t dev = 0;  // the kernel's dev_t: major << 20 | minor
  BlockTally tally;
};

struct BlockIssuer {
  uint32_t tid = 0;
  BlockTally tally;
};

// One completed request, for the timeline.
struct BlockRequestSpan {
  uint32_t tid = 0;  // the issuing task
  uint32_t dev = 0;
  uint64_t sector = 0;
  uint32_t bytes = 0;
  std::string rwbs;
  int64_t issue_ns = 0;
  int64_t complete_ns = 0;
};

// "8:16": a dev_t as major:minor.
std::string device_name(uint32_t dev);
// "sda (8:0)", as iostat names devices; "8:0" when `name` is empty.
std::string device_label(uint32_t dev, std::string_view name);

class BlockAnalysis final : public EventVisitor {
 public:
  // Cost per BlockRequest: one map insert or lookup.
  void on_event(const reader::Event& event, const EventContext& context) override;
  // BlockRequest and BlockDevice only.
  bool wants(EventKind kind) const override;

  bool any() const { return events_ > 0; }
  // Most bytes first.
  std::vector<BlockDevice> devices() const;
  std::vector<BlockIssuer> issuers() const;
  const std::vector<BlockRequestSpan>& requests() const { return spans_; }
  // The device's name from its BlockDevice event, or "".
  std::string_view name(uint32_t dev) const;
  // device_label() with that name: "sda (8:0)", else "8:0".
  std::string label(uint32_t dev) const { return device_label(dev, name(dev)); }

 private:
  struct Issued {
    int64_t time_ns;
    uint32_t tid;
    uint32_t bytes;
    std::string rwbs;
  };
  uint64_t events_ = 0;
  std::map<std::pair<uint32_t, uint64_t>, Issued> in_flight_;  // by (dev, sector)
  std::map<uint32_t, BlockTally> devices_, issuers_;
  std::map<uint32_t, std::string> names_;  // by dev
  std::vector<BlockRequestSpan> spans_;
};

}  // namespace spoor::analysis

#endif  // SPOOR_ANALYSIS_KERNEL_BLOCK_H
