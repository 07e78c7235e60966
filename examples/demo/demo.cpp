// spoor-demo: a tiny "web server" that handles requests on two threads and
// traces them with a provider of its own. Every request is a start/stop
// pair sharing an activity ID, so `spoor info` can report their durations.
// It also does what `spoor record` looks at: it renders pages into heap
// strings, keeps a page cache, writes an access log, burns CPU on misses,
// and leaks one session object in a hundred, so `spoor report` has heap,
// I/O, CPU and leaks of known origin to show.
//
//   spoor-demo [TRACE_FILE] [REQUESTS] [ACCESS_LOG]
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <map>
#include <mutex>
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

// What the server shares between its workers.
struct Server {
  std::mutex mutex;
  std::map<std::string, std::string> page_cache;  // path -> rendered page
  FILE* access_log = nullptr;
};

// A client session. One request in a hundred forgets to free its session:
// the leak `spoor report` finds.
struct ClientSession {
  uint32_t worker;
  uint32_t request;
  char cookie[48];
};

// The expensive part of a miss: a checksum over the page, many times.
__attribute__((noinline)) uint64_t checksum(const std::string& page, uint32_t rounds) {
  uint64_t sum = 0;
  for (uint32_t r = 0; r < rounds; ++r)
    for (char c : page) {
      sum = sum * 31 + static_cast<unsigned char>(c);
      __asm__ volatile("" : "+r"(sum));  // keep the loop
    }
  return sum;
}

// Builds the page in a heap string that grows as it is appended to.
__attribute__((noinline)) std::string render_page(const char* path, uint32_t n) {
  std::string page = "<html><body><h1>";
  page += path;
  page += "</h1>";
  for (uint32_t i = 0; i < 40 + n % 60; ++i) page += "<p>row " + std::to_string(i) + "</p>";
  page += "</body></html>";
  return page;
}

__attribute__((noinline)) ClientSession* open_session(uint32_t worker, uint32_t n) {
  auto* s = new ClientSession{worker, n, {}};
  std::snprintf(s->cookie, sizeof s->cookie, "sid-%u-%u", worker, n);
  return s;
}

__attribute__((noinline)) void log_request(Server& server, const char* path, unsigned status, size_t bytes) {
  if (server.access_log == nullptr) return;
  std::lock_guard<std::mutex> lock(server.mutex);
  std::fprintf(server.access_log, "GET %s %u %zu\n", path, status, bytes);
}

void worker(Server& server, uint32_t index, uint32_t requests) {
  unsigned seed = index * 7919u + 1;
  for (uint32_t n = 0; n < requests; ++n) {
    const char* path = kPaths[rand_r(&seed) % 5];
    const spoor::ActivityId activity = make_activity(index, n);
    kRequestStart.write_activity(activity, nullptr, index, path);
    ClientSession* session = open_session(index, n);
    const bool hit = rand_r(&seed) % 4 != 0;
    kCacheLookup.write_activity(activity, nullptr, path, hit, 0.75);
    std::string page;
    if (hit) {
      std::lock_guard<std::mutex> lock(server.mutex);
      auto it = server.page_cache.find(path);
      page = it != server.page_cache.end() ? it->second : render_page(path, n);
    } else {
      // A miss renders the page again and checks it: it costs more.
      page = render_page(path, n);
      const uint64_t sum = checksum(page, 20);
      page += "<!-- " + std::to_string(sum) + " -->";
      std::lock_guard<std::mutex> lock(server.mutex);
      server.page_cache[path] = page;
    }
    if (!hit && n % 50 == 0) kSlowRequest.write(path, 120);
    const unsigned status = hit ? 200u : 404u;
    log_request(server, path, status, page.size());
    kRequestStop.write_activity(activity, nullptr, status, static_cast<uint64_t>(page.size()));
    if (n % 100 != 99) delete session;
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
  Server server;
  const std::string log_path = argc > 3 ? argv[3] : path + ".access.log";
  server.access_log = std::fopen(log_path.c_str(), "w");
  if (server.access_log == nullptr) {
    std::fprintf(stderr, "spoor-demo: cannot write the access log '%s'\n", log_path.c_str());
    return 1;
  }
  std::vector<std::thread> threads;
  for (uint32_t i = 0; i < 2; ++i) threads.emplace_back(worker, std::ref(server), i, requests);
  for (auto& t : threads) t.join();
  std::fclose(server.access_log);
  const spoor::host::SessionStats stats = session->stop();
  std::fprintf(stderr, "spoor-demo: wrote %llu events (%llu lost) to %s, %llu bytes\n",
               static_cast<unsigned long long>(stats.events), static_cast<unsigned long long>(stats.lost),
               path.c_str(), static_cast<unsigned long long>(stats.bytes));
  return 0;
}
