// time_steps.h: the step of a key word's time differences (COMPRESSED
// layout 3), found and divided out without a division per record.
#include "time_steps.h"

#include <gtest/gtest.h>

#include <cstdint>
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

TEST(TimeSteps, TheStepIsTheLargestDivisorOfEveryDifferenceButTheSkippedOnes) {
  const std::vector<int64_t> d = {19 + 21 * 1000, 42, -63, 0, 210, 21 * 4096};
  const std::vector<uint8_t> codes = codes_of(d);
  EXPECT_EQ(common_step(codes.data(), d.size(), std::vector<uint32_t>{0}), 21u);
  EXPECT_EQ(common_step(codes.data(), d.size(), {}), 1u);  // 21019 shares nothing with 42
  const std::vector<int64_t> even = {6, 24, -12, 48};
  EXPECT_EQ(common_step(codes_of(even).data(), even.size(), {}), 6u);
  const std::vector<int64_t> zeros = {0, 0, 0};
  EXPECT_EQ(common_step(codes_of(zeros).data(), zeros.size(), {}), 1u);
  EXPECT_EQ(common_step(nullptr, 0, {}), 1u);
  const std::vector<int64_t> one = {-(1ll << 46)};
  EXPECT_EQ(common_step(codes_of(one).data(), one.size(), {}), 1ull << 46);
}

TEST(TimeSteps, DividedCodesMultiplyBackToTheDifferences) {
  const std::vector<int64_t> d = {5, 42, -63, 0, 210, 21 * 4096, -21 * 100000, 77};
  std::vector<uint8_t> codes = codes_of(d);
  const std::vector<uint32_t> undivided = {0, 7};
  ASSERT_EQ(common_step(codes.data(), d.size(), undivided), 21u);
  const size_t before = codes.size();
  codes.resize(divide_steps(codes.data(), d.size(), undivided, 21));
  EXPECT_LT(codes.size(), before);
  const std::vector<int64_t> divided = differences_of(codes, d.size());
  EXPECT_EQ(divided, (std::vector<int64_t>{5, 2, -3, 0, 10, 4096, -100000, 77}));
}

}  // namespace
}  // namespace spoor::compress
