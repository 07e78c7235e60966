// The step of a key word's time differences (docs/FORMAT.md, layout 3):
// the largest number every one of them is a multiple of. A clock that
// advances in steps wastes bits in each difference; on the virtual machines
// Spoor is tested on every TSC difference is a multiple of 21 ticks, and
// coding the differences divided by it packs a heap trace's times 17%
// smaller (bench/RESULTS.md). On a machine whose clock moves by single
// ticks the step is 1 after a handful of records and costs nothing more.
//
// The writer's side works on a group's zigzag varints in place (the
// divided ones are never longer), without a division per record: a
// difference's divisibility by the step, and the exact quotient, come from
// the step's odd part's inverse mod 2^64 (one multiply each).
#ifndef SPOOR_COMPRESS_TIME_STEPS_H
#define SPOOR_COMPRESS_TIME_STEPS_H

#include <bit>
#include <cstddef>
#include <cstdint>
#include <numeric>
#include <span>

namespace spoor::compress {

// A zigzag code (0, 1, 2, 3 ... for 0, -1, 1, -2 ...) and back.
inline uint64_t zigzag(int64_t v) { return (static_cast<uint64_t>(v) << 1) ^ static_cast<uint64_t>(v >> 63); }
inline int64_t unzigzag(uint64_t code) { return static_cast<int64_t>((code >> 1) ^ (~(code & 1) + 1)); }

// Exact division by a fixed step: 2^shift times an odd number.
class ExactDivisor {
 public:
  explicit ExactDivisor(uint64_t step)
      : shift_(static_cast<uint32_t>(std::countr_zero(step))), odd_(step >> shift_), inverse_(odd_) {
    // Newton's iteration doubles the correct low bits: 3, 6 .. 96.
    for (int i = 0; i < 5; ++i) inverse_ *= 2 - odd_ * inverse_;
    limit_ = UINT64_MAX / odd_;
  }
  // Whether `magnitude` is a multiple of the step.
  bool divides(uint64_t magnitude) const {
    if ((magnitude & ((uint64_t{1} << shift_) - 1)) != 0) return false;
    return (magnitude >> shift_) * inverse_ <= limit_;
  }
  // v / step, for a v the step divides.
  int64_t quotient(int64_t v) const { return static_cast<int64_t>(static_cast<uint64_t>(v >> shift_) * inverse_); }

 private:
  uint32_t shift_;
  uint64_t odd_;
  uint64_t inverse_;
  uint64_t limit_ = 0;
};

// Reads the varint at `at` (the writer's own bytes: well formed).
inline uint64_t take_varint(const uint8_t*& at) {
  uint64_t v = 0;
  for (uint32_t shift = 0;; shift += 7) {
    const uint8_t b = *at++;
    v |= uint64_t{b & 0x7Fu} << shift;
    if ((b & 0x80) == 0) return v;
  }
}

inline uint8_t* put_varint(uint8_t* at, uint64_t v) {
  while (v >= 0x80) {
    *at++ = static_cast<uint8_t>(v | 0x80);
    v >>= 7;
  }
  *at++ = static_cast<uint8_t>(v);
  return at;
}

// The step of the `count` zigzag varints at `codes`, but for those at the
// (ascending) indexes in `undivided`: the first record of each stream,
// whose difference is its whole time, which a clock's offset makes no
// multiple of anything. 1 when the differences share no step (or are all
// 0); stops reading at the first difference that brings it to 1.
inline uint64_t common_step(const uint8_t* codes, size_t count, std::span<const uint32_t> undivided) {
  uint64_t step = 0;
  ExactDivisor divisor(1);
  const uint32_t* skip = undivided.data();
  const uint32_t* const skip_end = skip + undivided.size();
  for (size_t i = 0; i < count; ++i) {
    const int64_t v = unzigzag(take_varint(codes));
    if (skip != skip_end && *skip == i) {
      ++skip;
      continue;
    }
    const uint64_t magnitude = v < 0 ? 0 - static_cast<uint64_t>(v) : static_cast<uint64_t>(v);
    if (magnitude == 0 || (step != 0 && divisor.divides(magnitude))) continue;
    step = std::gcd(step, magnitude);
    if (step == 1) return 1;
    divisor = ExactDivisor(step);
  }
  return step == 0 ? 1 : step;
}

// Rewrites the `count` zigzag varints at `codes`, but for those at the
// indexes in `undivided`, as the codes of their differences divided by
// `step` (which divides every one of them), in place. Returns the bytes
// they take now.
inline size_t divide_steps(uint8_t* codes, size_t count, std::span<const uint32_t> undivided, uint64_t step) {
  const ExactDivisor divisor(step);
  const uint32_t* skip = undivided.data();
  const uint32_t* const skip_end = skip + undivided.size();
  const uint8_t* from = codes;
  uint8_t* to = codes;
  for (size_t i = 0; i < count; ++i) {
    const uint64_t code = take_varint(from);
    if (skip != skip_end && *skip == i) {
      ++skip;
      to = put_varint(to, code);
    } else {
      to = put_varint(to, zigzag(divisor.quotient(unzigzag(code))));
    }
  }
  return static_cast<size_t>(to - codes);
}

}  // namespace spoor::compress

#endif  // SPOOR_COMPRESS_TIME_STEPS_H
