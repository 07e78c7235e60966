// spoor-demo: a tiny "web server" that handles requests on two threads and
// traces them with a provider of its own. Every request is a start/stop
// pair sharing an activity ID, so `spoor info` can report their durations.
//
//   spoor-demo [TRACE_FILE] [REQUESTS]
#include <cstdio>
#include <cstdlib>
#include <string>
#include <thread>
#include <vector>

#include "spoor/event.h"
#include "spoor/host/session.h"

namespace {

SPOOR_DEFINE_PROVIDER(g_demo, "Spoor.Demo");

constexpr uint64_t kKeywordRequests = 0x1;
constexpr uint64_t kKeywordCache = 0x2;

SPOOR_EVENT(kRequestStart, g_demo,
            (spoor::EventInfo{.name = "Request", .id = 1, .level = spoor::Level::info,
                              .keywords = kKeywordRequests, .opcode = spoor::Opcode::start, .task = 1}),
            spoor::Field<uint32_t>{"worker"}, spoor::Field<spoor::Str>{"path"});
SPOOR_EVENT(kRequestStop, g_demo,
            (spoor::EventInfo{.name = "Request", .id = 2, .level = spoor::Level::info,
                              .keywords = kKeywordRequests, .opcode = spoor::Opcode::stop, .task = 1}),
            spoor::Field<uint32_t>{"status"}, spoor::Field<uint64_t>{"bytes"});
SPOOR_EVENT(kCacheLookup, g_demo,
            (spoor::EventInfo{.name = "CacheLookup", .id = 3, .level = spoor::Level::verbose,
                              .keywords = kKeywordCache}),
            spoor::Field<spoor::Str>{"key"}, spoor::Field<bool>{"hit"}, spoor::Field<double>{"load_factor"});
SPOOR_EVENT(kSlowRequest, g_demo,
            (spoor::EventInfo{.name = "SlowRequest", .id = 4, .level = spoor::Level::warning,
                              .keywords = kKeywordRequests}),
            spoor::Field<spoor::Str>{"path"}, spoor::Field<int64_t>{"micros"});

const char* const kPaths[] = {"/", "/index.html", "/api/users", "/api/orders", "/static/app.js"};

// Reads as "0000000W-0000-0000-8000-0000NNNNNNNN": worker W, request N
// (the 8 keeps request 0 of worker 0 from being the all-zero "no activity").
spoor::ActivityId make_activity(uint32_t worker, uint32_t n) {
  spoor::ActivityId id;
  id.bytes[8] = 0x80;
  for (int i = 0; i < 4; ++i) id.bytes[3 - i] = static_cast<uint8_t>(worker >> (8 * i));
  for (int i = 0; i < 4; ++i) id.bytes[15 - i] = static_cast<uint8_t>(n >> (8 * i));
  return id;
}

void worker(uint32_t index, uint32_t requests) {
  unsigned seed = index * 7919u + 1;
  for (uint32_t n = 0; n < requests; ++n) {
    const char* path = kPaths[rand_r(&seed) % 5];
    const spoor::ActivityId activity = make_activity(index, n);
    kRequestStart.write_activity(activity, nullptr, index, path);
    const bool hit = rand_r(&seed) % 4 != 0;
    kCacheLookup.write_activity(activity, nullptr, path, hit, 0.75);
    // "Work": a miss costs more.
    uint64_t sink = 0;
    const uint32_t spins = hit ? 2000 : 20000;
    for (uint32_t i = 0; i < spins; ++i) {
      sink += i;
      __asm__ volatile("" : "+r"(sink));  // keep the loop
    }
    if (!hit && n % 50 == 0) kSlowRequest.write(path, 120);
    kRequestStop.write_activity(activity, nullptr, hit ? 200u : 404u,
                                static_cast<uint64_t>(hit ? 5120 : 310));
  }
}

}  // namespace

int main(int argc, char** argv) {
  const std::string path = argc > 1 ? argv[1] : "spoor-demo.spoor";
  const uint32_t requests = argc > 2 ? static_cast<uint32_t>(std::strtoul(argv[2], nullptr, 10)) : 2000;
  std::string error;
  auto session = spoor::host::Session::start({.output_path = path, .providers = "Spoor.Demo"}, &error);
  if (!session) {
    std::fprintf(stderr, "spoor-demo: %s\n", error.c_str());
    return 1;
  }
  std::vector<std::thread> threads;
  for (uint32_t i = 0; i < 2; ++i) threads.emplace_back(worker, i, requests);
  for (auto& t : threads) t.join();
  const spoor::host::SessionStats stats = session->stop();
  std::fprintf(stderr, "spoor-demo: wrote %llu events (%llu lost) to %s, %llu bytes\n",
               static_cast<unsigned long long>(stats.events), static_cast<unsigned long long>(stats.lost),
               path.c_str(), static_cast<unsigned long long>(stats.bytes));
  return 0;
}
