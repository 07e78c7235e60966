// One event of a trace as a line of text, JSON or CSV, for the processes
// asked for: what spoor dump prints, whole or following a recording.
#ifndef SPOOR_CLI_EVENT_LINES_H
#define SPOOR_CLI_EVENT_LINES_H

#include <algorithm>
#include <cstdint>
#include <string>
#include <utility>
#include <variant>
#include <vector>

#include "event_json.h"
#include "event_text.h"
#include "spoor/reader/event.h"
#include "spoor/reader/trace.h"

namespace spoor::cli {

// The process an event is about: a kernel record's `pid` field (the
// recorder's stream writes them for every traced process), else the
// stream's process.
inline uint32_t process_of(const reader::Event& e) {
  if (e.provider != nullptr && e.provider->name == "Spoor.Kernel")
    if (const reader::Value* pid = e.field("pid"); pid != nullptr && std::holds_alternative<uint64_t>(*pid))
      return static_cast<uint32_t>(std::get<uint64_t>(*pid));
  return e.pid;
}

// One event as a line of the chosen format, for the chosen processes.
class EventLines {
 public:
  EventLines(std::string format, std::vector<uint32_t> only_pids)
      : format_(std::move(format)), only_pids_(std::move(only_pids)) {}

  void header(const TextLayout& layout, std::string& out) const {
    if (format_ == "text") layout.header(out);
    if (format_ == "csv") csv_header(out);
  }

  void line(const TextLayout& layout, const reader::Event& e, std::string& out) const {
    if (!only_pids_.empty() && std::find(only_pids_.begin(), only_pids_.end(), process_of(e)) == only_pids_.end())
      return;
    if (format_ == "text") layout.line(e, out);
    else if (format_ == "jsonl") json_line(e, out);
    else csv_line(e, out);
  }

 private:
  std::string format_;
  std::vector<uint32_t> only_pids_;
};

}  // namespace spoor::cli

#endif  // SPOOR_CLI_EVENT_LINES_H
