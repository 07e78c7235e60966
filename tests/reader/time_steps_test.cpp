// time_steps.h: the step of a key word's time differences (COMPRESSED
// layout 3), found and divided out as they come, without a division per
// record.
#include "time_steps.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <span>
#include <vector>

namespace spoor::compress {
namespace {

std::vector<uint8_t> codes_of(const std::vector<int64_t>& differences) {
  std::vector<uint8_t> out(differences.size() * 10);
  uint8_t* at = out.data();
  for (int64_t d : differences) at = put_varint(at, zigzag(d));
  out.resize(static_cast<size_t>(at - out.data()));
  return out;
}

std::vector<int64_t> differences_of(const std::vector<uint8_t>& codes, size_t count) {
  std::vector<int64_t> out;
  const uint8_t* at = codes.data();
  for (size_t i = 0; i < count; ++i) out.push_back(unzigzag(take_varint(at)));
  EXPECT_EQ(at, codes.data() + codes.size());
  return out;
}

// Odd, even, a power of two and steps near the 48-bit differences' limit.
TEST(TimeSteps, ExactDivisorTellsMultiplesAndTheirQuotients) {
  for (uint64_t step : {1ull, 2ull, 3ull, 21ull, 24ull, 64ull, 1000003ull, (1ull << 40) + 12, (1ull << 47) - 1}) {
    SCOPED_TRACE("step " + std::to_string(step));
    const ExactDivisor divisor(step);
    for (int64_t k = -40; k <= 40; ++k) {
      const int64_t v = k * static_cast<int64_t>(step);
      const uint64_t magnitude = k < 0 ? static_cast<uint64_t>(-v) : static_cast<uint64_t>(v);
      EXPECT_TRUE(divisor.divides(magnitude)) << v;
      EXPECT_EQ(divisor.quotient(v), k);
      if (step > 1) {
        EXPECT_FALSE(divisor.divides(magnitude + 1)) << v;
        EXPECT_FALSE(divisor.divides(magnitude + step - 1)) << v;
        if (step % 2 == 0) {
          EXPECT_FALSE(divisor.divides(magnitude + step / 2)) << v;
        }
      }
    }
  }
}

// Codes of `differences` as the writer makes them (reference_split.cpp):
// each divided by the step so far, but those at the indexes in
// `undivided`; the codes so far multiplied up whenever the step narrows.
struct Stepped {
  uint64_t step;
  std::vector<uint8_t> codes;
  int multiplications = 0;
};
Stepped write_stepped(const std::vector<int64_t>& differences, const std::vector<uint32_t>& undivided) {
  Stepped out;
  RunningStep step;
  out.codes.resize(differences.size() * 10);
  size_t used = 0;
  size_t skip = 0;
  for (size_t i = 0; i < differences.size(); ++i) {
    int64_t code = differences[i];
    if (skip < undivided.size() && undivided[skip] == i) {
      ++skip;
    } else {
      uint64_t factor = 1;
      code = step.divide(code, factor);
      if (factor != 1) {
        std::vector<uint8_t> multiplied(i * 10);
        multiplied.resize(multiply_codes(out.codes.data(), i, std::span(undivided.data(), skip), factor,
                                         multiplied.data()));
        std::copy(multiplied.begin(), multiplied.end(), out.codes.begin());
        used = multiplied.size();
        ++out.multiplications;
      }
    }
    used = static_cast<size_t>(put_varint(out.codes.data() + used, zigzag(code)) - out.codes.data());
  }
  out.codes.resize(used);
  out.step = step.step();
  return out;
}

TEST(TimeSteps, TheStepIsTheLargestDivisorOfEveryDifferenceButTheSkippedOnes) {
  const std::vector<int64_t> d = {19 + 21 * 1000, 42, -63, 0, 210, 21 * 4096};
  EXPECT_EQ(write_stepped(d, {0}).step, 21u);
  EXPECT_EQ(write_stepped(d, {}).step, 1u);  // 21019 shares nothing with 42
  EXPECT_EQ(write_stepped({6, 24, -12, 48}, {}).step, 6u);
  EXPECT_EQ(write_stepped({0, 0, 0}, {}).step, 1u);
  EXPECT_EQ(write_stepped({}, {}).step, 1u);
  EXPECT_EQ(write_stepped({-(1ll << 46)}, {}).step, 1ull << 46);
  EXPECT_EQ(write_stepped({0, 0, 12}, {}).step, 12u);
}

TEST(TimeSteps, DividedCodesMultiplyBackToTheDifferences) {
  const std::vector<int64_t> d = {5, 42, -63, 0, 210, 21 * 4096, -21 * 100000, 77};
  const Stepped s = write_stepped(d, {0, 7});
  ASSERT_EQ(s.step, 21u);
  EXPECT_LT(s.codes.size(), codes_of(d).size());
  EXPECT_EQ(differences_of(s.codes, d.size()), (std::vector<int64_t>{5, 2, -3, 0, 10, 4096, -100000, 77}));
}

// A step that narrows late: 300 differences of 42 written as 1 each, then
// -21 halves the step, then 7 takes it to 7: the codes written before are
// multiplied up each time, to what dividing them all by 7 at the end gives.
// Then one difference no step divides brings every code to the difference.
TEST(TimeSteps, CodesWrittenBeforeTheStepNarrowsAreMultipliedUpToIt) {
  std::vector<int64_t> d(300, 42);
  d.push_back(-21);
  d.push_back(7);
  d.push_back(0);
  d.push_back(-7 * 5000);
  const Stepped s = write_stepped(d, {});
  ASSERT_EQ(s.step, 7u);
  EXPECT_EQ(s.multiplications, 2);
  std::vector<int64_t> expected;
  for (int64_t v : d) expected.push_back(v / 7);
  EXPECT_EQ(differences_of(s.codes, d.size()), expected);

  d.push_back(3 * 7 * 11 + 1);
  const Stepped unstepped = write_stepped(d, {});
  EXPECT_EQ(unstepped.step, 1u);
  EXPECT_EQ(unstepped.codes, codes_of(d));
}

// The multiplication leaves the undivided codes as they are.
TEST(TimeSteps, MultipliedCodesKeepTheUndividedOnes) {
  const std::vector<int64_t> divided = {123457, 2, -3, 1, 99};
  const std::vector<uint8_t> codes = codes_of(divided);
  std::vector<uint8_t> out(divided.size() * 10);
  const std::vector<uint32_t> undivided = {0, 4};
  out.resize(multiply_codes(codes.data(), divided.size(), undivided, 6, out.data()));
  EXPECT_EQ(differences_of(out, divided.size()), (std::vector<int64_t>{123457, 12, -18, 6, 99}));
}

}  // namespace
}  // namespace spoor::compress
