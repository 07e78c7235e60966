// A small, complete trace the reader tests share: one process, two streams
// (cpu 0 and 1), one provider, three events, four packets in file order
// s1p0, s2p0, s1p1, s2p1, then both STREAM_END blocks. Ticks are ns.
#ifndef SPOOR_TESTS_SAMPLE_TRACE_H
#define SPOOR_TESTS_SAMPLE_TRACE_H

#include "trace_builder.h"

namespace spoor::testing {

inline constexpr uint32_t kSamplePid = 100;
inline constexpr uint16_t kKeyHello = 1;      // Hello(u32 n, string msg)
inline constexpr uint16_t kKeyReadStart = 2;  // ReadStart, opcode start
inline constexpr uint16_t kKeyReadStop = 3;   // ReadStop, opcode stop (u64 bytes)
inline constexpr int kSampleEvents = 8;

inline void add_sample_metadata(TraceBuilder& t) {
  t.clock_ns();
  t.process(kSamplePid, "demo", {"demo", "--fast"});
  t.stream(1, kSamplePid, 0);
  t.stream(2, kSamplePid, 1);
  t.provider(kSamplePid, 0, "Demo.Provider", guid_from_seed(0x10));
  t.event({.pid = kSamplePid, .key = kKeyHello, .id = 1, .level = 4, .keywords = 0x5,
           .name = "Hello", .fields = {{format::kFieldU32, "n"}, {format::kFieldString, "msg"}}});
  t.event({.pid = kSamplePid, .key = kKeyReadStart, .id = 2, .level = 5,
           .opcode = format::kOpStart, .name = "ReadStart", .fields = {}});
  t.event({.pid = kSamplePid, .key = kKeyReadStop, .id = 3, .level = 5,
           .opcode = format::kOpStop, .name = "ReadStop",
           .fields = {{format::kFieldU64, "bytes"}}});
}

inline RecordBuilder hello(uint64_t ticks, uint32_t n, std::string_view msg) {
  return RecordBuilder(kKeyHello, ticks).u32(n).string(msg);
}

inline TraceBuilder sample_trace() {
  TraceBuilder t;
  add_sample_metadata(t);
  const Guid16 read1 = guid_from_seed(0x40);
  t.packet(PacketBuilder(1, 0, 0)
               .add(hello(1000, 1, "one").tid(11))
               .add(RecordBuilder(kKeyReadStart, 1500).activity(read1)));
  t.packet(PacketBuilder(2, 1, 0).add(hello(1200, 2, "two").tid(21)).add(hello(2500, 3, "")));
  t.packet(PacketBuilder(1, 0, 1)
               .lost_total(4)
               .add(RecordBuilder(kKeyReadStop, 3000).tid(11).activity(read1).u64(4096))
               .add(hello(3100, 4, "four").tid(12)));
  t.packet(PacketBuilder(2, 1, 1).add(hello(2600, 5, "five").tid(21)).add(hello(4000, 6, "six")));
  t.stream_end(1, 4, 0, 2);
  t.stream_end(2, 0, 0, 2);
  return t;
}

}  // namespace spoor::testing

#endif  // SPOOR_TESTS_SAMPLE_TRACE_H
