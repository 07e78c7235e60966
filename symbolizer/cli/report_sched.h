// The scheduler and block I/O parts of `spoor report --kernel` (from
// `spoor record --kernel=sched,block`), as JSON (inside the kernel section
// of report_data.h's document) and as text printed from that JSON.
#ifndef SPOOR_CLI_REPORT_SCHED_H
#define SPOOR_CLI_REPORT_SCHED_H

#include <cstddef>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "spoor/analysis/kernel_block.h"
#include "spoor/analysis/kernel_sched.h"
#include "spoor/analysis/model.h"

namespace spoor::cli {

// Per traced thread: off-CPU time by reason, wakeups and their wakers, time
// waiting to run and what ran instead; `top` rows of wakers / tasks each.
nlohmann::json sched_json(const analysis::TraceModel& model, const analysis::SchedAnalysis& sched, size_t top);
// Requests, bytes and latency per device and per issuing task; tasks are
// named by the scheduler's records when `sched` has them.
nlohmann::json block_json(const analysis::TraceModel& model, const analysis::BlockAnalysis& block,
                          const analysis::SchedAnalysis& sched, size_t top);

// The names a thread went by, one per image of its process when it is a
// main thread that exec'd (the exe's base name: "dash", "prog"), else its
// names in order from `names` (comm, renames). The model has a thread per
// image; the kernel tables show one row for them.
std::vector<std::string> thread_images(const analysis::TraceModel& model, uint32_t pid, uint32_t tid,
                                       const std::vector<std::string>& names);
// "dash -> exec -> prog"; the one name when there is one.
std::string images_text(const std::vector<std::string>& images);

void print_sched(const nlohmann::json& sched, std::string& out);
void print_block(const nlohmann::json& block, std::string& out);

}  // namespace spoor::cli

#endif  // SPOOR_CLI_REPORT_SCHED_H
