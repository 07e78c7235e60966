// Atomics the core can use on every target it runs on.
//
// Hosted (and any multi-core target), spoor::Atomic<T> is std::atomic<T>.
// On a single-core microcontroller (SPOOR_SINGLE_CORE) some widths have no
// lock-free instructions: a Cortex-M has no 64-bit exclusive loads and an
// M0+ none at all. There std::atomic would call libatomic, which firmware
// does not have; IrqAtomic<T> instead runs each operation with interrupts
// masked through the port's irq_save/irq_restore hooks. With one core, the
// only thing that can interleave with the program is an interrupt, so that
// is atomic, and the CPU sees its own accesses in program order: a compiler
// barrier is all the memory ordering needed.
#ifndef SPOOR_ATOMIC_H
#define SPOOR_ATOMIC_H

#include <stdint.h>

#include <atomic>
#include <type_traits>

#include "spoor/config.h"
#include "spoor/port.h"

namespace spoor {

#if SPOOR_SINGLE_CORE

// Interrupts masked for the lifetime of the object.
class IrqMask {
 public:
  SPOOR_ALWAYS_INLINE IrqMask() : state_(spoor_port_irq_save()) {}
  SPOOR_ALWAYS_INLINE ~IrqMask() { spoor_port_irq_restore(state_); }
  IrqMask(const IrqMask&) = delete;
  IrqMask& operator=(const IrqMask&) = delete;

 private:
  uint32_t state_;
};

// The std::atomic operations the core uses, for a one-core target. Loads and
// stores no wider than a word are single instructions and need no mask.
// Layout-compatible with std::atomic<T> (same size and alignment), so
// structures shared with a drainer keep their layout.
template <class T>
class alignas(sizeof(T)) IrqAtomic {
  static constexpr bool kWordAccess = sizeof(T) <= sizeof(void*);

 public:
  constexpr IrqAtomic() : value_{} {}
  constexpr IrqAtomic(T v) : value_(v) {}  // NOLINT: implicit, like std::atomic
  IrqAtomic(const IrqAtomic&) = delete;
  IrqAtomic& operator=(const IrqAtomic&) = delete;

  SPOOR_ALWAYS_INLINE T load(std::memory_order = std::memory_order_seq_cst) const {
    if constexpr (kWordAccess) {
      return barriered([&] { return raw_load(); });
    } else {
      IrqMask m;
      return barriered([&] { return raw_load(); });
    }
  }
  SPOOR_ALWAYS_INLINE void store(T v, std::memory_order = std::memory_order_seq_cst) {
    if constexpr (kWordAccess) {
      barriered([&] { raw_store(v); return 0; });
    } else {
      IrqMask m;
      barriered([&] { raw_store(v); return 0; });
    }
  }
  SPOOR_ALWAYS_INLINE T fetch_add(T d, std::memory_order = std::memory_order_seq_cst) {
    IrqMask m;
    return barriered([&] {
      const T old = raw_load();
      raw_store(static_cast<T>(old + d));
      return old;
    });
  }
  SPOOR_ALWAYS_INLINE T fetch_sub(T d, std::memory_order = std::memory_order_seq_cst) {
    IrqMask m;
    return barriered([&] {
      const T old = raw_load();
      raw_store(static_cast<T>(old - d));
      return old;
    });
  }
  // Never fails spuriously; the weak form is the same.
  SPOOR_ALWAYS_INLINE bool compare_exchange_strong(T& expected, T desired,
                                                   std::memory_order = std::memory_order_seq_cst,
                                                   std::memory_order = std::memory_order_seq_cst) {
    IrqMask m;
    return barriered([&] {
      const T old = raw_load();
      if (old != expected) {
        expected = old;
        return false;
      }
      raw_store(desired);
      return true;
    });
  }
  SPOOR_ALWAYS_INLINE bool compare_exchange_weak(T& expected, T desired,
                                                 std::memory_order s = std::memory_order_seq_cst,
                                                 std::memory_order f = std::memory_order_seq_cst) {
    return compare_exchange_strong(expected, desired, s, f);
  }

  // The value itself, for code that already holds the interrupt mask (the
  // ring's masked reservation): no second mask, no barrier.
  SPOOR_ALWAYS_INLINE T& under_mask() { return value_; }
  SPOOR_ALWAYS_INLINE const T& under_mask() const { return value_; }

 private:
  // Volatile: the compiler may neither split, merge nor drop the access.
  SPOOR_ALWAYS_INLINE T raw_load() const { return *const_cast<const volatile T*>(&value_); }
  SPOOR_ALWAYS_INLINE void raw_store(T v) { *const_cast<volatile T*>(&value_) = v; }
  template <class F>
  SPOOR_ALWAYS_INLINE static auto barriered(F f) {
    std::atomic_signal_fence(std::memory_order_seq_cst);
    auto r = f();
    std::atomic_signal_fence(std::memory_order_seq_cst);
    return r;
  }

  T value_;
};

// std::atomic where the target has the instructions, IrqAtomic elsewhere.
template <class T>
using Atomic = std::conditional_t<std::atomic<T>::is_always_lock_free, std::atomic<T>, IrqAtomic<T>>;

#else  // hosted or multi-core

template <class T>
using Atomic = std::atomic<T>;

// Compare-and-swap on a plain integer (the 16-bit event key slots). Single-
// core builds need none: there the last key stored wins (registry.cpp,
// register_event).
template <class T>
SPOOR_ALWAYS_INLINE bool atomic_cas(T* p, T* expected, T desired) {
  return __atomic_compare_exchange_n(p, expected, desired, false, __ATOMIC_ACQ_REL,
                                     __ATOMIC_ACQUIRE);
}

#endif

}  // namespace spoor

#endif  // SPOOR_ATOMIC_H
