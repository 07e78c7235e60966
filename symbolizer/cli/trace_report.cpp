#include "trace_report.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>

#include "command.h"

namespace spoor::cli {

namespace {

// kKeptExpandedMiB, or what SPOOR_READ_MEMORY_MIB says.
void limit_reading_memory(reader::Trace& trace) {
  uint64_t mib = kKeptExpandedMiB;
  if (const char* v = std::getenv("SPOOR_READ_MEMORY_MIB"); v != nullptr && *v != '\0') {
    char* end = nullptr;
    const unsigned long long n = std::strtoull(v, &end, 10);
    if (*end == '\0' && n < (uint64_t{1} << 40)) mib = n;
    else std::fprintf(stderr, "spoor: ignoring SPOOR_READ_MEMORY_MIB='%s': not a number of MiB\n", v);
  }
  trace.limit_expanded_bytes(mib << 20);
}

std::optional<reader::Trace> opened(reader::Result<reader::Trace> trace, const std::string& name) {
  if (!trace) {
    std::fprintf(stderr, "spoor: cannot read trace '%s': %s\n", name.c_str(), trace.error().c_str());
    return std::nullopt;
  }
  limit_reading_memory(*trace);
  return std::move(trace).value();
}

}  // namespace

std::optional<reader::Trace> open_trace(const std::string& path) {
  // "-" is standard input; the reader reads pipes into memory.
  return opened(reader::Trace::open(path == "-" ? "/dev/stdin" : path), path);
}

std::optional<reader::Trace> trace_from_bytes(std::vector<uint8_t> bytes, const std::string& name) {
  return opened(reader::Trace::from_bytes(std::move(bytes)), name);
}

std::vector<reader::Damage> all_damage(const reader::Trace& trace,
                                       const reader::EventReader& events) {
  std::vector<reader::Damage> all = events.damages();
  if (trace.damage()) all.push_back(*trace.damage());
  std::stable_sort(all.begin(), all.end(), [](const reader::Damage& a, const reader::Damage& b) {
    return a.offset < b.offset;
  });
  return all;
}

int report_damage(const std::string& path, const std::vector<reader::Damage>& damage,
                  uint64_t events_recovered) {
  if (damage.empty()) return kExitOk;
  std::fflush(stdout);  // what was recovered comes before the verdict
  std::fprintf(stderr, "spoor: trace '%s' is damaged at byte %llu: %s; %llu events recovered\n",
               path.c_str(), static_cast<unsigned long long>(damage[0].offset),
               damage[0].message.c_str(), static_cast<unsigned long long>(events_recovered));
  for (size_t i = 1; i < damage.size(); ++i)
    std::fprintf(stderr, "spoor: trace '%s' is also damaged at byte %llu: %s\n", path.c_str(),
                 static_cast<unsigned long long>(damage[i].offset), damage[i].message.c_str());
  return kExitTrace;
}

void Output::flush() {
  if (!buffer_.empty()) std::fwrite(buffer_.data(), 1, buffer_.size(), stdout);
  buffer_.clear();
}

}  // namespace spoor::cli
