// Compile-time configuration of the core. Every knob has a default that
// suits a hosted Linux program; firmware overrides them on the command line.
#ifndef SPOOR_CONFIG_H
#define SPOOR_CONFIG_H

// How many providers a program can register; each costs one 40-byte slot in
// the control block.
#ifndef SPOOR_MAX_PROVIDERS
#define SPOOR_MAX_PROVIDERS 64
#endif

// How many event descriptors a program can register; each costs a pointer.
// Event keys are 13 bits in a record, so at most 8191.
#ifndef SPOOR_MAX_EVENTS
#define SPOOR_MAX_EVENTS 1024
#endif

// SPOOR_COMPILE_OUT=1 removes every event write: the write functions become
// empty inlines and the program carries no tracing code or data for them.
#ifndef SPOOR_COMPILE_OUT
#define SPOOR_COMPILE_OUT 0
#endif

// SPOOR_SINGLE_CORE=1: a one-core target without lock-free 64-bit atomics,
// whose writers mask interrupts instead (spoor/port.h, spoor/ring_masked.h).
// CMake's SPOOR_SINGLE_CORE option sets it for the core and its users.
#ifndef SPOOR_SINGLE_CORE
#define SPOOR_SINGLE_CORE 0
#endif

#define SPOOR_LIKELY(x) __builtin_expect(!!(x), 1)
#define SPOOR_UNLIKELY(x) __builtin_expect(!!(x), 0)
#define SPOOR_ALWAYS_INLINE inline __attribute__((always_inline))
#define SPOOR_NOINLINE __attribute__((noinline))

static_assert(SPOOR_MAX_EVENTS <= 8191, "event keys are 13 bits");
static_assert(SPOOR_MAX_PROVIDERS <= 65535, "provider indices are 16 bits");

#endif  // SPOOR_CONFIG_H
