// Record parsers: exact layouts pass; a byte short or a byte long fails.
#include "spoor/kernelsrc/perf_record.h"

#include <gtest/gtest.h>

#include <cstring>
#include <string>
#include <vector>

#include "perf_record_builder.h"
#include "spoor/kernelsrc/attr_plan.h"

namespace spoor::kernelsrc {
namespace {

constexpr uint64_t kSampleBits = kSampleIdBits | PERF_SAMPLE_IP | PERF_SAMPLE_CALLCHAIN | PERF_SAMPLE_REGS_USER |
                                 PERF_SAMPLE_STACK_USER;
constexpr uint64_t kRegs = 0x7;  // three registers

RecordBuilder cpu_sample(size_t stack_size, size_t dyn) {
  RecordBuilder b(PERF_RECORD_SAMPLE);
  b.u64(77).u64(0x401000).u32x2(10, 11).u64(5000).u32x2(1, 0);  // id, ip, pid/tid, time, cpu
  b.u64(3).u64(static_cast<uint64_t>(PERF_CONTEXT_USER)).u64(0x401000).u64(0x402000);  // callchain
  b.u64(PERF_SAMPLE_REGS_ABI_64).u64(1).u64(2).u64(3);
  b.u64(stack_size);
  for (size_t i = 0; i < stack_size; ++i) b.bytes.push_back(static_cast<uint8_t>(i));
  if (stack_size) b.u64(dyn);
  return b;
}

TEST(PerfRecord, ASampleParsesExactlyWithEveryField) {
  RecordBuilder b = cpu_sample(64, 40);
  Sample s;
  ASSERT_TRUE(parse_sample(b.done(), kSampleBits, kRegs, &s));
  EXPECT_EQ(s.id, 77u);
  EXPECT_EQ(s.ip, 0x401000u);
  EXPECT_EQ(s.pid, 10u);
  EXPECT_EQ(s.tid, 11u);
  EXPECT_EQ(s.time, 5000u);
  EXPECT_EQ(s.cpu, 1u);
  EXPECT_EQ(s.callchain_nr, 3u);
  EXPECT_EQ(s.regs_abi, static_cast<uint64_t>(PERF_SAMPLE_REGS_ABI_64));
  EXPECT_EQ(s.regs.size(), 24u);
  EXPECT_EQ(s.stack.size(), 40u) << "dyn_size: the bytes actually copied";
  EXPECT_EQ(s.stack[39], 39);
  uint64_t id = 0;
  ASSERT_TRUE(record_identifier(b.done(), &id));
  EXPECT_EQ(id, 77u);
}

// The time the ring is sorted by: in a SAMPLE's body after the fields
// before it, in any other record's trailer.
TEST(PerfRecord, ARecordsTimeIsFoundInASampleAndInATrailer) {
  uint64_t time = 0;
  ASSERT_TRUE(record_time(cpu_sample(64, 40).done(), kSampleBits, &time));
  EXPECT_EQ(time, 5000u);
  RecordBuilder without_ip(PERF_RECORD_SAMPLE);
  without_ip.u64(77).u32x2(10, 11).u64(6000).u32x2(1, 0);  // id, pid/tid, time, cpu
  ASSERT_TRUE(record_time(without_ip.done(), kSampleIdBits, &time));
  EXPECT_EQ(time, 6000u) << "no IP: the time is one word earlier";
  RecordBuilder lost(PERF_RECORD_LOST);
  lost.u64(3).u64(17).trailer(0, 0, 7000, 1, 3);
  ASSERT_TRUE(record_time(lost.done(), kSampleIdBits, &time));
  EXPECT_EQ(time, 7000u);

  EXPECT_FALSE(record_time(lost.done(), kSampleIdBits & ~uint64_t{PERF_SAMPLE_TIME}, &time)) << "no time asked for";
  RecordBuilder short_sample(PERF_RECORD_SAMPLE);
  short_sample.u64(77).u64(0x401000).u32x2(10, 11);  // ends before its time
  EXPECT_FALSE(record_time(short_sample.done(), kSampleBits, &time));
  RecordBuilder short_trailer(PERF_RECORD_SWITCH);
  short_trailer.u64(1);
  EXPECT_FALSE(record_time(short_trailer.done(), kSampleIdBits, &time));
  EXPECT_EQ(time, 7000u) << "left as it was when there is no time";
}

TEST(PerfRecord, ASampleAByteShortOrEightLongIsRefused) {
  RecordBuilder shorter = cpu_sample(64, 64);
  shorter.bytes.resize(shorter.bytes.size() - 8);
  Sample s;
  EXPECT_FALSE(parse_sample(shorter.done(), kSampleBits, kRegs, &s));
  RecordBuilder longer = cpu_sample(64, 64);
  longer.u64(0);
  EXPECT_FALSE(parse_sample(longer.done(), kSampleBits, kRegs, &s)) << "the cursor must land on the end";
  RecordBuilder ok = cpu_sample(64, 64);
  EXPECT_FALSE(parse_sample(ok.done(), kSampleBits, 0xF, &s)) << "one register more than the record holds";
  EXPECT_FALSE(parse_sample(ok.done(), kSampleBits | PERF_SAMPLE_PERIOD, kRegs, &s)) << "a bit it does not know";
}

TEST(PerfRecord, AStackLargerThanItsSizeIsRefused) {
  RecordBuilder b = cpu_sample(16, 24);  // dyn_size above size
  Sample s;
  EXPECT_FALSE(parse_sample(b.done(), kSampleBits, kRegs, &s));
}

TEST(PerfRecord, RawDataIsTheBytesAfterItsSize) {
  RecordBuilder b(PERF_RECORD_SAMPLE);
  b.u64(5).u32x2(1, 2).u64(99).u32x2(0, 0);
  const uint32_t raw_size = 12;
  b.put(&raw_size, 4);
  for (int i = 0; i < 12; ++i) b.bytes.push_back(static_cast<uint8_t>(0xA0 + i));
  Sample s;
  ASSERT_TRUE(parse_sample(b.done(), kSampleIdBits | PERF_SAMPLE_RAW, 0, &s));
  ASSERT_EQ(s.raw.size(), 12u);
  EXPECT_EQ(s.raw[0], 0xA0);
  EXPECT_EQ(s.time, 99u);
}

TEST(PerfRecord, Mmap2WithABuildIdAndItsFileName) {
  RecordBuilder b(PERF_RECORD_MMAP2, PERF_RECORD_MISC_MMAP_BUILD_ID);
  b.u32x2(100, 101).u64(0x7000).u64(0x2000).u64(0x1000);
  uint8_t middle[24] = {20};
  for (int i = 0; i < 20; ++i) middle[4 + i] = static_cast<uint8_t>(i + 1);
  b.put(middle, sizeof middle).u32x2(5, 2);
  const std::string name = "/usr/lib/libc.so.6";
  b.put(name.c_str(), name.size() + 1).pad8();
  b.trailer(100, 101, 7, 0, 42);
  Mmap2 m;
  ASSERT_TRUE(parse_mmap2(b.done(), kSampleIdBits, &m));
  EXPECT_EQ(m.addr, 0x7000u);
  EXPECT_EQ(m.len, 0x2000u);
  EXPECT_EQ(m.pgoff, 0x1000u);
  EXPECT_EQ(m.prot, 5u);
  EXPECT_EQ(m.filename, name);
  ASSERT_EQ(m.build_id.size(), 20u);
  EXPECT_EQ(m.build_id[19], 20);
  SampleId id;
  ASSERT_TRUE(parse_sample_id(b.done(), kSampleIdBits, &id));
  EXPECT_EQ(id.id, 42u);
  EXPECT_EQ(id.time, 7u);
  uint64_t ident = 0;
  ASSERT_TRUE(record_identifier(b.done(), &ident));
  EXPECT_EQ(ident, 42u) << "the last u64 of a side-band record";
}

TEST(PerfRecord, AFileNameWithoutItsTerminatorIsRefused) {
  RecordBuilder b(PERF_RECORD_MMAP2);
  b.u32x2(1, 1).u64(0).u64(0).u64(0);
  uint8_t middle[24] = {};
  b.put(middle, sizeof middle).u32x2(0, 0);
  b.put("abcdefgh", 8);  // no NUL
  b.trailer(1, 1, 1, 0, 1);
  Mmap2 m;
  EXPECT_FALSE(parse_mmap2(b.done(), kSampleIdBits, &m));
}

TEST(PerfRecord, CommTaskAndLost) {
  RecordBuilder comm(PERF_RECORD_COMM, PERF_RECORD_MISC_COMM_EXEC);
  comm.u32x2(9, 9).put("prog", 5).pad8().trailer(9, 9, 1, 0, 3);
  Comm c;
  ASSERT_TRUE(parse_comm(comm.done(), kSampleIdBits, &c));
  EXPECT_EQ(c.comm, "prog");
  EXPECT_TRUE(c.exec);

  RecordBuilder fork(PERF_RECORD_FORK);
  fork.u32x2(20, 10).u32x2(21, 11).u64(123).trailer(20, 21, 123, 0, 3);
  Task t;
  ASSERT_TRUE(parse_task(fork.done(), kSampleIdBits, &t));
  EXPECT_EQ(t.pid, 20u);
  EXPECT_EQ(t.ppid, 10u);
  EXPECT_EQ(t.tid, 21u);
  EXPECT_EQ(t.ptid, 11u);

  RecordBuilder lost(PERF_RECORD_LOST);
  lost.u64(3).u64(17).trailer(0, 0, 5, 1, 3);
  Lost l;
  ASSERT_TRUE(parse_lost(lost.done(), kSampleIdBits, &l));
  EXPECT_EQ(l.lost, 17u);
  lost.u64(0);
  EXPECT_FALSE(parse_lost(lost.done(), kSampleIdBits, &l)) << "8 bytes too many";
}

}  // namespace
}  // namespace spoor::kernelsrc
