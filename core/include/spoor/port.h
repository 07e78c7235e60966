// The platform contract: the three things the core needs from where it runs.
//
//   clock  - spoor_port_ticks(): a monotonic tick counter. Never fails. On
//            x86-64 Linux the TSC (rdtsc, ~9.5 ns on the benchmark VM: most of
//            an enabled write's cost), on aarch64 CNTVCT_EL0,
//            else CLOCK_MONOTONIC ns from the hosted layer; firmware supplies
//            its own (SysTick, DWT cycle counter).
//   cpu    - spoor_port_cpu(): the CPU the caller runs on, used only to pick a
//            ring; a stale answer (the thread migrated) is harmless. On Linux
//            glibc's registered rseq area (~1 ns), sched_getcpu() otherwise;
//            0 on a single-core microcontroller.
//   thread - spoor_port_thread(): a small id of the running thread (Linux tid,
//            firmware task or interrupt number), 24 bits used. Cached per
//            thread on Linux.
//
// The output sink is the fourth part of the contract and is passed at run
// time (spoor/trace_writer.h). The core never includes an OS header: what it
// needs from the OS it declares here itself.
//
// Ports:
//   SPOOR_PORT_HOOKS - all three are extern "C" functions the program defines
//                      (firmware). Each must be callable from an interrupt.
//   SPOOR_SINGLE_CORE - (with SPOOR_PORT_HOOKS) a one-core target without
//                      lock-free 64-bit atomics, such as a Cortex-M. Two more
//                      hooks then make a short stretch of code atomic with
//                      respect to interrupts:
//     irq_save    - spoor_port_irq_save(): masks interrupts (those that may
//                   raise events) and returns the previous mask state. On a
//                   Cortex-M: `mrs r0, primask; cpsid i`.
//     irq_restore - spoor_port_irq_restore(state): puts back the state
//                   irq_save returned (`msr primask, r0`). Calls nest.
//                   Both must also be compiler barriers (an asm with a
//                   "memory" clobber), so no access moves across them.
//                   The core holds the mask for a few dozen instructions: the
//                   reservation of a record (docs/CORE.md), or one 64-bit
//                   load, store or read-modify-write.
//   SPOOR_PORT_HEADER - (with SPOOR_PORT_HOOKS) the same functions, defined
//                      inline in the header this macro names (a quoted
//                      path), which the core itself is compiled with too
//                      (CMake: -DSPOOR_PORT_HEADER=path). On a Cortex-M the
//                      hooks are then a few instructions each, with no
//                      calls (bench/RESULTS.md, "Firmware core").
//   default on Linux - inline fast paths below, slow parts in spoor_host.
#ifndef SPOOR_PORT_H
#define SPOOR_PORT_H

#include <stddef.h>
#include <stdint.h>

#include "spoor/config.h"

#if defined(SPOOR_PORT_HOOKS) && defined(SPOOR_PORT_HEADER)

#include SPOOR_PORT_HEADER

#elif defined(SPOOR_PORT_HOOKS)

extern "C" uint64_t spoor_port_ticks(void);
extern "C" uint32_t spoor_port_cpu(void);
extern "C" uint32_t spoor_port_thread(void);
#if SPOOR_SINGLE_CORE
extern "C" uint32_t spoor_port_irq_save(void);
extern "C" void spoor_port_irq_restore(uint32_t state);
#endif

#elif SPOOR_SINGLE_CORE
#error "SPOOR_SINGLE_CORE needs SPOOR_PORT_HOOKS: the program supplies spoor_port_irq_save/restore"

#else  // Linux

extern "C" {
// glibc 2.35+: offset of the thread's registered struct rseq from the thread
// pointer, and its size (0 when rseq is not registered).
extern const ptrdiff_t __rseq_offset __attribute__((weak));
extern const unsigned int __rseq_size __attribute__((weak));
// Out-of-line parts, in spoor_host (core/host/port_linux.cpp).
uint32_t spoor_port_cpu_slow(void);
uint32_t spoor_port_thread_slow(void);
uint64_t spoor_port_ticks_fallback(void);
}

namespace spoor::port {
// Cached tid; 0 until first use and after fork (reset by the hosted layer).
// initial-exec: a TLS access is one %fs-relative load, even in a shared
// object that is dlopen'ed or preloaded; constinit: no TLS init wrapper call.
extern constinit thread_local uint32_t t_thread_id __attribute__((tls_model("initial-exec")));
// Offset of the rseq area's cpu_id from the thread pointer, or 0 when glibc
// registered no rseq area; set before main by the hosted layer (until then
// the slow path answers). One load instead of two GOT lookups per event.
extern constinit ptrdiff_t g_rseq_cpu_offset;
}  // namespace spoor::port

SPOOR_ALWAYS_INLINE uint64_t spoor_port_ticks(void) {
#if defined(__x86_64__)
  return __builtin_ia32_rdtsc();
#elif defined(__aarch64__)
  uint64_t v;
  __asm__ volatile("mrs %0, cntvct_el0" : "=r"(v));
  return v;
#else
  return spoor_port_ticks_fallback();
#endif
}

SPOOR_ALWAYS_INLINE uint32_t spoor_port_cpu(void) {
  // struct rseq { u32 cpu_id_start; u32 cpu_id; ... }: cpu_id is kept
  // current by the kernel on every return to user space.
  const ptrdiff_t offset = spoor::port::g_rseq_cpu_offset;
  if (SPOOR_LIKELY(offset != 0)) {
    const char* tp = static_cast<const char*>(__builtin_thread_pointer());
    const int32_t cpu = *reinterpret_cast<const volatile int32_t*>(tp + offset);
    if (SPOOR_LIKELY(cpu >= 0)) return static_cast<uint32_t>(cpu);
  }
  return spoor_port_cpu_slow();
}

SPOOR_ALWAYS_INLINE uint32_t spoor_port_thread(void) {
  uint32_t tid = spoor::port::t_thread_id;
  if (SPOOR_LIKELY(tid != 0)) return tid;
  return spoor_port_thread_slow();
}

#endif  // ports

#endif  // SPOOR_PORT_H
