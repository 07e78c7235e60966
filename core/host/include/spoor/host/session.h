// A hosted tracing session: per-CPU rings in mmap'ed memory, providers
// enabled by an ETW-style spec, and a writer thread that drains full packets
// to a trace file while the program runs.
//
//   std::string error;
//   auto session = spoor::host::Session::start({.output_path = "app.spoor",
//                                               .providers = "Contoso.App:0x1:info"}, &error);
//   ... events ...
//   spoor::host::SessionStats stats = session->stop();
//
// One session per process at a time: its rings are where every event goes.
#ifndef SPOOR_HOST_SESSION_H
#define SPOOR_HOST_SESSION_H

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "spoor/host/block_compressor.h"

namespace spoor::host {

struct SessionOptions {
  std::string output_path;
  std::string providers = "*";            // enable spec (enable_spec.h)
  size_t buffer_bytes_per_cpu = 4u << 20; // ring size per CPU
  uint32_t packet_bytes = 128u << 10;     // sub-buffer size, a power of two
  uint32_t cpu_count = 0;                 // 0: every configured CPU
  uint32_t drain_interval_us = 1000;      // how often the writer thread looks
  uint32_t flush_interval_ms = 250;       // partly filled packets are closed this often
  // Off by default: a compressed file holds drained events in memory (up
  // to compression.max_delay_ms, one run) before they reach the kernel.
  CompressionOptions compression{};
};

struct SessionStats {
  uint64_t events = 0;           // records written to the file
  uint64_t lost = 0;             // events dropped (ring full, too large, no key)
  uint64_t packets = 0;
  uint64_t bytes = 0;            // file size
  CompressionStats compression{};  // all zero unless options.compression.enabled
  uint64_t abandoned_bytes = 0;  // reserved but never committed
  std::vector<uint64_t> lost_per_cpu;
  double seconds = 0;
  // Empty, or why the trace file is incomplete ("writing 'x.spoor' failed:
  // No space left on device"): events drained after the failure are gone.
  std::string write_error;
};

class Session {
 public:
  // Starts a session writing to options.output_path. Returns null with
  // *error set ("cannot create 'x.spoor': Permission denied", "a session is
  // already running in this process", a bad provider spec, ...).
  static std::unique_ptr<Session> start(const SessionOptions& options, std::string* error);

  // Stops the session if it still runs.
  ~Session();

  // Replaces the enable rules while the session runs; every registered
  // provider gets its new state before this returns. Returns false with
  // *error set for a bad spec (the old rules stay).
  bool enable(std::string_view spec, std::string* error);

  // Disables the providers, drains every ring (partly filled packets too),
  // writes the lost counts and the final clock calibration, closes the file.
  // Idempotent: a second call returns the same stats.
  SessionStats stop();

  // The shared-memory file descriptor holding the control block (every
  // provider's enable state), for a controller in another process.
  int control_fd() const;

  struct Impl;

 private:
  explicit Session(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace spoor::host

#endif  // SPOOR_HOST_SESSION_H
