// A model with known content for the writers' tests: one process (pid 100,
// "app") with two threads, three slices that nest and one that overlaps
// them, an instant, a heap-size counter, five locations (one with an
// inlined function, one without a symbol, one outside every module), three
// stacks, ten CPU samples and two allocation sites.
#ifndef SPOOR_TESTS_EXPORT_KNOWN_MODEL_H
#define SPOOR_TESTS_EXPORT_KNOWN_MODEL_H

#include "spoor/export/export_model.h"

namespace spoor::test {

inline exporter::ExportModel known_model() {
  using namespace spoor::exporter;
  ExportModel m;
  m.processes = {{.pid = 100, .name = "app", .cmdline = {"app", "--run"}, .exe = {}}};
  m.threads = {{.pid = 100, .tid = 100, .name = "app"}, {.pid = 100, .tid = 101, .name = "worker"}};
  m.slices = {
      {.pid = 100, .tid = 100, .begin_ns = 1000, .end_ns = 9000, .name = "outer", .category = "activity", .args = {}},
      {.pid = 100, .tid = 100, .begin_ns = 2000, .end_ns = 3000, .name = "read", .category = "io",
       .args = {{"fd", "3"}, {"bytes", "4096"}}},
      {.pid = 100, .tid = 100, .begin_ns = 4000, .end_ns = 5000, .name = "write", .category = "io", .args = {}},
      // Begins inside "outer" and ends after it: cannot nest there.
      {.pid = 100, .tid = 100, .begin_ns = 8000, .end_ns = 12000, .name = "overlap", .category = "activity",
       .args = {}},
      {.pid = 100, .tid = 101, .begin_ns = 1500, .end_ns = 2500, .name = "read", .category = "io", .args = {}},
  };
  m.instants = {{.pid = 100, .tid = 101, .time_ns = 6000, .name = "fork", .category = "process"}};
  m.counters = {{.name = "heap size",
                 .unit = "bytes",
                 .values = {{.pid = 100, .time_ns = 1000, .value = 400}, {.pid = 100, .time_ns = 7000, .value = 2148}}}};
  m.modules = {{.pid = 100, .path = "/usr/bin/app", .build_id = "abcd01", .start = 0x1000, .limit = 0x5000, .bias = 0}};
  m.locations = {
      {.module = 0, .address = 0x1100, .frames = {{"inner_helper", "a.c", 10}, {"compute", "a.c", 20}}},
      {.module = 0, .address = 0x1200, .frames = {{"main", "a.c", 30}}},
      {.module = 0, .address = 0x1300, .frames = {{"spin;loop", "a.c", 40}}},
      {.module = 0, .address = 0x1400, .frames = {}},
      {.module = kNoModule, .address = 0xdead, .frames = {}},
  };
  m.stacks = {{.locations = {0, 1}}, {.locations = {2, 1}}, {.locations = {3, 4}}};
  for (int i = 0; i < 6; ++i) m.cpu_samples.push_back({.pid = 100, .tid = 100, .time_ns = 1000 + i * 1000, .stack = 0});
  for (int i = 0; i < 3; ++i) m.cpu_samples.push_back({.pid = 100, .tid = 101, .time_ns = 1500 + i * 1000, .stack = 1});
  m.cpu_samples.push_back({.pid = 100, .tid = 101, .time_ns = 9500, .stack = 2});
  m.allocations = {{.stack = 0, .alloc_calls = 4, .alloc_bytes = 400, .live_blocks = 1, .live_bytes = 100},
                   {.stack = 1, .alloc_calls = 2, .alloc_bytes = 2048, .live_blocks = 2, .live_bytes = 2048}};
  m.sample_period_ns = 1'000'000;
  m.first_ns = 1000;
  m.last_ns = 12000;
  return m;
}

}  // namespace spoor::test

#endif  // SPOOR_TESTS_EXPORT_KNOWN_MODEL_H
