// drain_ring: CPUs are drained in turns, so a writer who keeps one CPU's
// ring busy cannot hold the drainer there while another CPU's ring fills.
#include <gtest/gtest.h>

#include <sched.h>
#include <unistd.h>

#include <cstring>
#include <vector>

#include "ring_test_util.h"
#include "spoor/drain.h"
#include "spoor/event.h"
#include "spoor/format.h"
#include "spoor/trace_writer.h"

namespace {

namespace fmt = spoor::format;

SPOOR_DEFINE_PROVIDER(g_drain_test, "Spoor.Test.Drain");
SPOOR_EVENT(kFill, g_drain_test, (spoor::EventInfo{.name = "Fill", .id = 1}), spoor::Field<spoor::Blob>{"data"});

constexpr uint32_t kPacketBytes = 256;
// Over half a packet: each one closes the packet the one before it opened.
void write_packet_filler() {
  static const uint8_t bytes[160] = {};
  kFill.write(spoor::Blob(bytes, sizeof bytes));
}

// Runs the calling thread on `cpu` only, until destroyed.
class OnCpu {
 public:
  explicit OnCpu(int cpu) {
    ok_ = sched_getaffinity(0, sizeof before_, &before_) == 0;
    cpu_set_t one;
    CPU_ZERO(&one);
    CPU_SET(cpu, &one);
    ok_ = ok_ && sched_setaffinity(0, sizeof one, &one) == 0 && sched_getcpu() == cpu;
  }
  ~OnCpu() { sched_setaffinity(0, sizeof before_, &before_); }
  bool ok() const { return ok_; }

 private:
  cpu_set_t before_;
  bool ok_ = false;
};

// The stream IDs of the PACKET blocks in a trace written to memory, in
// the order they were written.
std::vector<uint32_t> packet_streams(const std::vector<uint8_t>& trace) {
  std::vector<uint32_t> streams;
  size_t at = 0;
  while (trace.size() - at >= sizeof(fmt::BlockHeader)) {
    fmt::BlockHeader h{};
    std::memcpy(&h, trace.data() + at, sizeof h);
    if (h.magic != fmt::kBlockMagic || trace.size() - at - sizeof h < h.size) break;
    if (h.type == fmt::kBlockPacket && h.size >= sizeof(fmt::PacketBlock)) {
      fmt::PacketBlock p{};
      std::memcpy(&p, trace.data() + at + sizeof h, sizeof p);
      streams.push_back(p.stream_id);
    }
    at += sizeof h + h.size;
  }
  return streams;
}

TEST(DrainRing, AWriterKeepingOneCpuBusyDoesNotHoldTheDrainerThere) {
  cpu_set_t allowed;
  ASSERT_EQ(sched_getaffinity(0, sizeof allowed, &allowed), 0);
  std::vector<int> cpus;
  for (int c = 0; c < CPU_SETSIZE; ++c)
    if (CPU_ISSET(c, &allowed)) cpus.push_back(c);
  if (cpus.size() < 2) GTEST_SKIP() << "needs two CPUs to run on";
  // The busy CPU is drained first (the lower number): the other one's
  // packet is reached only after the chase unless the drainer takes turns.
  const int busy = cpus.front(), quiet = cpus.back();
  spoor::test::enable_all(g_drain_test);
  const spoor::test::TestRing ring(static_cast<uint32_t>(sysconf(_SC_NPROCESSORS_CONF)), kPacketBytes, 64);
  {
    const OnCpu on(quiet);
    ASSERT_TRUE(on.ok());
    write_packet_filler();
    ASSERT_EQ(spoor::ring_flush(ring.view(), static_cast<uint32_t>(quiet)), spoor::Status::ok);
  }

  const OnCpu on(busy);
  ASSERT_TRUE(on.ok());
  for (int i = 0; i < 8; ++i) write_packet_filler();
  std::vector<uint8_t> trace;
  spoor::TraceWriter writer(spoor::test::vector_sink(&trace));
  // The writer on the busy CPU closes another packet for each one drained,
  // 200 times: a chase the drainer cannot win while it lasts.
  int refills = 0;
  spoor::DrainTotals totals;
  spoor::drain_ring(ring.view(), writer, false, totals, [&] {
    if (refills < 200) {
      ++refills;
      write_packet_filler();
    }
  });
  spoor::apply_enable_state(*const_cast<spoor::ProviderControl*>(g_drain_test.control()), {});

  const std::vector<uint32_t> streams = packet_streams(trace);
  ASSERT_EQ(totals.status, spoor::Status::ok);
  ASSERT_EQ(refills, 200) << "the busy CPU was chased";
  size_t first_quiet = streams.size();
  for (size_t i = 0; i < streams.size(); ++i)
    if (streams[i] == static_cast<uint32_t>(quiet)) {
      first_quiet = i;
      break;
    }
  ASSERT_LT(first_quiet, streams.size()) << "the quiet CPU's packet was drained";
  // At most one turn of the busy CPU, and a turn is short.
  static_assert(spoor::kDrainTurnPackets <= 16);
  EXPECT_LE(first_quiet, spoor::kDrainTurnPackets)
      << "the quiet CPU waited for " << first_quiet << " packets of the busy one";
  EXPECT_GT(streams.size(), 200u);
}

}  // namespace
