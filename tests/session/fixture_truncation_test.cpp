// A trace from the real writer, cut at every byte: the reader never fails
// on a cut past the file header, recovers more events the more it is given,
// and always knows the file is incomplete: damage inside a block, or (a cut
// on a block boundary) streams without their STREAM_END block.
#include <gtest/gtest.h>

#include <fstream>
#include <iterator>

#include "session_test_util.h"
#include "spoor/reader/stream_stats.h"

namespace {

namespace reader = spoor::reader;

TEST(FixtureTruncation, EveryCutRecoversWhatPrecedesIt) {
  std::ifstream in(SPOOR_FIXTURE_BASIC, std::ios::binary);
  const std::vector<uint8_t> whole((std::istreambuf_iterator<char>(in)), {});
  ASSERT_GT(whole.size(), 1000u);
  size_t previous = 0;
  for (size_t cut = 0; cut <= whole.size(); ++cut) {
    auto trace = reader::Trace::from_bytes(std::vector<uint8_t>(whole.begin(), whole.begin() + cut));
    if (cut < 32) {
      EXPECT_FALSE(trace) << "a cut inside the file header is not a trace: " << cut;
      continue;
    }
    ASSERT_TRUE(trace) << "cut " << cut << ": " << trace.error();
    bool every_stream_ended = !trace->streams().empty();
    for (const auto& st : reader::stream_stats(trace.value())) every_stream_ended &= st.ended;
    const bool incomplete = trace->damage().has_value() || !every_stream_ended;
    EXPECT_EQ(incomplete, cut < whole.size()) << "cut " << cut;
    if (trace->damage()) {
      EXPECT_LE(trace->damage()->offset, cut);
    }
    const size_t events = spoor::test::read_all(trace.value()).events.size();
    EXPECT_GE(events, previous) << "cut " << cut;
    previous = events;
  }
  EXPECT_EQ(previous, 7u);
}

TEST(FixtureCorruption, AFlippedBytePastTheHeaderIsFoundByItsBlock) {
  std::ifstream in(SPOOR_FIXTURE_BASIC, std::ios::binary);
  const std::vector<uint8_t> whole((std::istreambuf_iterator<char>(in)), {});
  for (size_t at = 32; at < whole.size(); ++at) {
    std::vector<uint8_t> bytes = whole;
    bytes[at] ^= 0x40;
    auto trace = reader::Trace::from_bytes(std::move(bytes));
    ASSERT_TRUE(trace) << at;
    ASSERT_TRUE(trace->damage()) << "byte " << at << " changed and nothing noticed";
    EXPECT_LE(trace->damage()->offset, at);
  }
}

}  // namespace
