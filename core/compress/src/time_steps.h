// The step of a key word's time differences (docs/FORMAT.md, layout 3):
// the largest number every one of them is a multiple of. A clock that
// advances in steps wastes bits in each difference; on the virtual machines
// Spoor is tested on every TSC difference is a multiple of 21 ticks, and
// coding the differences divided by it packs a heap trace's times 17%
// smaller (bench/RESULTS.md). On a machine whose clock moves by single
// ticks the step is 1 after a handful of records and costs nothing more.
//
// The writer divides each difference as it writes it (RunningStep), without
// a division per record: a difference's divisibility by the step, and the
// exact quotient, come from the step's odd part's inverse mod 2^64 (one
// multiply each).
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

// The step of a group's time differences so far, found as they come: the
// largest number that divides every one met, 0 before the first that is
// not 0. The writer divides each difference by it as it writes it (a
// multiply and a compare when the step divides it, the usual case); a
// difference it does not divide narrows the step, and the codes written so
// far are multiplied up to the new one (multiply_codes). The step of a
// clock that moves in steps settles within a group's first few records;
// one that moves by single ticks reaches 1 as soon, and divides by 1 after.
class RunningStep {
 public:
  // What the group's codes are divided by: 1 when no difference but 0 came.
  uint64_t step() const { return step_ == 0 ? 1 : step_; }
  // `difference` over the step, narrowed first when it does not divide
  // `difference`. `factor`: what the codes written before are to be
  // multiplied by (multiply_codes), 1 when the step kept.
  int64_t divide(int64_t difference, uint64_t& factor) {
    const uint64_t magnitude = difference < 0 ? 0 - static_cast<uint64_t>(difference) : static_cast<uint64_t>(difference);
    factor = keeps(magnitude) ? 1 : narrow(magnitude);
    return divisor_.quotient(difference);  // `difference` itself, 0, before a step
  }

 private:
  // Whether a difference of `magnitude` leaves the step as it is.
  bool keeps(uint64_t magnitude) const { return magnitude == 0 || (step_ != 0 && divisor_.divides(magnitude)); }
  // Makes the step take `magnitude` (one keeps() refused) and returns the
  // old step over the new, 1 when there was none (every code so far is 0
  // or not divided).
  __attribute__((noinline)) uint64_t narrow(uint64_t magnitude) {
    const uint64_t old = step_;
    step_ = std::gcd(step_, magnitude);
    divisor_ = ExactDivisor(step_);
    return old == 0 ? 1 : old / step_;
  }

  uint64_t step_ = 0;
  ExactDivisor divisor_{1};
};

// Writes the `count` zigzag varints at `codes` to `out` (room for 10 bytes
// each), those not at the (ascending) indexes in `undivided` multiplied by
// `factor`: codes divided by a step become codes divided by a step
// `factor` times smaller. Returns the bytes written.
inline size_t multiply_codes(const uint8_t* codes, size_t count, std::span<const uint32_t> undivided, uint64_t factor,
                             uint8_t* out) {
  const uint32_t* skip = undivided.data();
  const uint32_t* const skip_end = skip + undivided.size();
  uint8_t* to = out;
  for (size_t i = 0; i < count; ++i) {
    const uint64_t code = take_varint(codes);
    if (skip != skip_end && *skip == i) {
      ++skip;
      to = put_varint(to, code);
    } else {
      to = put_varint(to, zigzag(unzigzag(code) * static_cast<int64_t>(factor)));
    }
  }
  return static_cast<size_t>(to - out);
}

}  // namespace spoor::compress

#endif  // SPOOR_COMPRESS_TIME_STEPS_H
