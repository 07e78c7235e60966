// Converting perf records into Spoor.Kernel records, written into a real
// trace and read back with the reader: the explicit timestamps, the Lost
// event and lost count, records refused for their layout.
#include "spoor/kernelsrc/kernel_convert.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdio>
#include <cstring>
#include <filesystem>
#include <unordered_set>

#include "perf_record_builder.h"
#include "spoor/kernelsrc/kernel_events.h"
#include "spoor/kernelsrc/kernel_stream.h"
#include "spoor/reader/event_reader.h"
#include "spoor/reader/trace.h"

namespace spoor::kernelsrc {
namespace {

bool file_write(void* f, const void* data, size_t n) { return std::fwrite(data, 1, n, static_cast<FILE*>(f)) == n; }

class KernelConvertTest : public ::testing::Test {
 protected:
  void SetUp() override {
    path_ = (std::filesystem::temp_directory_path() / ("spoor-kconv-" + std::to_string(getpid()) + ".spoor")).string();
    file_ = std::fopen(path_.c_str(), "wb");
    writer_ = std::make_unique<TraceWriter>(Sink{file_, file_write});
    writer_->file_header();
    format::ClockBlock clock{};
    clock.source = format::kClockMonotonicNs;
    clock.freq_millihz = 1000000000ull * 1000;
    writer_->clock(clock);
    writer_->process(1, 0, "spoor", "spoor", 5);
    register_kernel_events();
    writer_->new_metadata(1);
    writer_->stream(7, 1, 0);
    convert_.add_event(3, EventMeta{Role::sideband, "switches", "", kSampleIdBits, 0, {}});
  }
  void TearDown() override { std::filesystem::remove(path_); }

  // Ends the stream, closes the file, reads every event back.
  std::vector<reader::Event> finish() {
    stream_.end(*writer_);
    std::fclose(file_);
    auto trace = reader::Trace::open(path_);
    EXPECT_TRUE(trace) << trace.error();
    std::vector<reader::Event> out;
    if (!trace) return out;
    trace_ = std::make_unique<reader::Trace>(std::move(trace.value()));
    reader::EventReader events(*trace_);
    reader::Event e;
    while (events.next(e)) out.push_back(e);
    lost_ = trace_->streams().empty() ? 0 : trace_->streams()[0].end ? trace_->streams()[0].end->lost_total : 0;
    return out;
  }

  std::string path_;
  FILE* file_ = nullptr;
  std::unique_ptr<TraceWriter> writer_;
  std::unique_ptr<reader::Trace> trace_;
  KernelStream stream_{7, 0, 1, 256};
  KernelConvert convert_;
  uint64_t lost_ = 0;
  std::function<uint64_t(uint64_t)> identity_ = [](uint64_t ns) { return ns; };
};

TEST_F(KernelConvertTest, SwitchesCarryTheKernelsTimeAndDirection) {
  RecordBuilder out(PERF_RECORD_SWITCH, PERF_RECORD_MISC_SWITCH_OUT | PERF_RECORD_MISC_SWITCH_OUT_PREEMPT);
  out.trailer(40, 41, 1000, 0, 3);
  RecordBuilder in(PERF_RECORD_SWITCH);
  in.trailer(40, 41, 2500, 0, 3);
  ASSERT_TRUE(convert_.convert(out.done(), 0, identity_, *writer_, stream_));
  ASSERT_TRUE(convert_.convert(in.done(), 0, identity_, *writer_, stream_));
  const auto events = finish();
  ASSERT_EQ(events.size(), 2u);
  EXPECT_EQ(events[0].descriptor->name, "ContextSwitch");
  EXPECT_EQ(events[0].time_ns, 1000) << "the record's own time, not the drain's";
  EXPECT_EQ(events[1].time_ns, 2500);
  EXPECT_EQ(std::get<uint64_t>(*events[0].field("tid")), 41u);
  EXPECT_EQ(std::get<bool>(*events[0].field("out")), true);
  EXPECT_EQ(std::get<bool>(*events[0].field("preempted")), true);
  EXPECT_EQ(std::get<bool>(*events[1].field("out")), false);
}

TEST_F(KernelConvertTest, LostRecordsBecomeALostEventAndTheStreamsLostCount) {
  RecordBuilder lost(PERF_RECORD_LOST);
  lost.u64(3).u64(25).trailer(0, 0, 700, 0, 3);
  ASSERT_TRUE(convert_.convert(lost.done(), 0, identity_, *writer_, stream_));
  const auto events = finish();
  ASSERT_EQ(events.size(), 1u);
  EXPECT_EQ(events[0].descriptor->name, "Lost");
  EXPECT_EQ(std::get<std::string_view>(*events[0].field("source")), "switches");
  EXPECT_EQ(std::get<uint64_t>(*events[0].field("count")), 25u);
  EXPECT_EQ(lost_, 25u) << "counted like the core's drops";
}

TEST_F(KernelConvertTest, ARecordOfTheWrongSizeIsCountedNotWritten) {
  RecordBuilder bad(PERF_RECORD_SWITCH);
  bad.u64(0).trailer(40, 41, 1000, 0, 3);  // 8 bytes a SWITCH never has
  EXPECT_FALSE(convert_.convert(bad.done(), 0, identity_, *writer_, stream_));
  RecordBuilder unknown(PERF_RECORD_SWITCH);
  unknown.trailer(40, 41, 1000, 0, 999);  // no event of ours has id 999
  EXPECT_FALSE(convert_.convert(unknown.done(), 0, identity_, *writer_, stream_));
  EXPECT_EQ(convert_.corrupt(), 2u);
  const auto events = finish();
  EXPECT_TRUE(events.empty());
  EXPECT_EQ(lost_, 2u);
}

TEST_F(KernelConvertTest, ARecordsTimeIsKnownForItsEventsOnly) {
  RecordBuilder ours(PERF_RECORD_SWITCH);
  ours.trailer(40, 41, 1234, 0, 3);
  uint64_t time = 0;
  ASSERT_TRUE(convert_.time_of(ours.done(), &time));
  EXPECT_EQ(time, 1234u);
  RecordBuilder theirs(PERF_RECORD_SWITCH);
  theirs.trailer(40, 41, 99, 0, 999);  // no event of ours has id 999
  EXPECT_FALSE(convert_.time_of(theirs.done(), &time));
  EXPECT_EQ(time, 1234u);
}

TEST_F(KernelConvertTest, ManyRecordsSpanPacketsAndAllComeBack) {
  for (uint64_t i = 0; i < 100; ++i) {
    RecordBuilder r(PERF_RECORD_SWITCH, i % 2 ? 0 : PERF_RECORD_MISC_SWITCH_OUT);
    r.trailer(40, 41, 1000 + i * 10, 0, 3);
    ASSERT_TRUE(convert_.convert(r.done(), 0, identity_, *writer_, stream_));
  }
  const auto events = finish();
  ASSERT_EQ(events.size(), 100u);
  for (size_t i = 0; i < events.size(); ++i) EXPECT_EQ(events[i].time_ns, static_cast<int64_t>(1000 + i * 10));
}

#if defined(__x86_64__)
// A stack copy longer than one Blob holds: `stack` takes the first
// kStackChunkBytes, stack_2.. the rest in order, and joined they are the
// kernel's copy byte for byte.
TEST_F(KernelConvertTest, AStackCopyLongerThanOneBlobIsSplitInOrder) {
  constexpr uint64_t kBits = kSampleIdBits | PERF_SAMPLE_IP | PERF_SAMPLE_CALLCHAIN | PERF_SAMPLE_REGS_USER |
                             PERF_SAMPLE_STACK_USER;
  convert_.add_event(77, EventMeta{Role::cpu_sample, "samples", "", kBits, 0x7, {}});
  constexpr size_t kCopy = 40000;  // 2 full chunks and 7248 bytes
  RecordBuilder b(PERF_RECORD_SAMPLE);
  b.u64(77).u64(0x401000).u32x2(10, 11).u64(5000).u32x2(1, 0);  // id, ip, pid/tid, time, cpu
  b.u64(2).u64(static_cast<uint64_t>(PERF_CONTEXT_USER)).u64(0x401000);  // callchain
  b.u64(PERF_SAMPLE_REGS_ABI_64).u64(1).u64(2).u64(3);
  b.u64(kCopy);
  std::vector<uint8_t> copy(kCopy);
  for (size_t i = 0; i < kCopy; ++i) copy[i] = static_cast<uint8_t>(i * 7 + i / 251);
  b.put(copy.data(), copy.size()).u64(kCopy);  // dyn_size: all of it copied
  ASSERT_TRUE(convert_.convert(b.done(), 0, identity_, *writer_, stream_));
  const auto events = finish();
  ASSERT_EQ(events.size(), 1u);
  ASSERT_EQ(events[0].descriptor->name, "CpuSample");
  std::vector<uint8_t> joined;
  std::vector<size_t> sizes;
  for (const char* name : {"stack", "stack_2", "stack_3", "stack_4"}) {
    const auto* v = events[0].field(name);
    ASSERT_NE(v, nullptr) << name;
    const auto& blob = std::get<reader::Blob>(*v);
    sizes.push_back(blob.bytes.size());
    joined.insert(joined.end(), blob.bytes.begin(), blob.bytes.end());
  }
  EXPECT_EQ(sizes, (std::vector<size_t>{kStackChunkBytes, kStackChunkBytes, kCopy - 2 * kStackChunkBytes, 0}));
  EXPECT_TRUE(joined == copy) << "the chunks, in order, are the copy";
}

// The kernel frames a sample's callchain carries, and a page fault's
// instruction in the kernel, are kept for KernelSymbol (kernel_symbols.h);
// user addresses are not.
TEST_F(KernelConvertTest, KernelAddressesOfSamplesAndFaultsAreKept) {
  constexpr uint64_t kBits = kSampleIdBits | PERF_SAMPLE_IP | PERF_SAMPLE_CALLCHAIN;
  convert_.add_event(77, EventMeta{Role::cpu_sample, "samples", "", kBits, 0, {}});
  RecordBuilder b(PERF_RECORD_SAMPLE);
  b.u64(77).u64(0xffffffff81004010).u32x2(10, 11).u64(5000).u32x2(1, 0);  // id, ip, pid/tid, time, cpu
  b.u64(5).u64(static_cast<uint64_t>(PERF_CONTEXT_KERNEL)).u64(0xffffffff81004010).u64(0xffffffff81001234);
  b.u64(static_cast<uint64_t>(PERF_CONTEXT_USER)).u64(0x401000);
  ASSERT_TRUE(convert_.convert(b.done(), 0, identity_, *writer_, stream_));
  constexpr uint64_t kFaultBits = kSampleIdBits | PERF_SAMPLE_IP | PERF_SAMPLE_ADDR | PERF_SAMPLE_CALLCHAIN;
  convert_.add_event(78, EventMeta{Role::fault_minor, "faults", "", kFaultBits, 0, {}});
  for (const uint64_t ip : {uint64_t{0xffffffff81baf6b0}, uint64_t{0x402000}}) {
    RecordBuilder f(PERF_RECORD_SAMPLE);
    f.u64(78).u64(ip).u32x2(10, 11).u64(5001).u64(0x7f0000001000).u32x2(1, 0);  // id, ip, pid/tid, time, addr, cpu
    f.u64(2).u64(static_cast<uint64_t>(PERF_CONTEXT_USER)).u64(0x402000);
    ASSERT_TRUE(convert_.convert(f.done(), 0, identity_, *writer_, stream_));
  }
  const std::unordered_set<uint64_t> expected{0xffffffff81004010, 0xffffffff81001234, 0xffffffff81baf6b0};
  EXPECT_EQ(convert_.kernel_addresses(), expected);
  EXPECT_EQ(finish().size(), 3u);
}

TEST(SyscallNames, KnowsTheCommonOnes) {
  EXPECT_STREQ(syscall_name(0), "read");
  EXPECT_STREQ(syscall_name(1), "write");
  EXPECT_STREQ(syscall_name(1u << 20), "");
}
#endif

}  // namespace
}  // namespace spoor::kernelsrc
