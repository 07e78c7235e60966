// The few Cortex-M3 system registers the example uses (ARMv7-M
// Architecture Reference Manual, B3), and interrupt masking with PRIMASK.
#ifndef SPOOR_FIRMWARE_CORTEX_M_H
#define SPOOR_FIRMWARE_CORTEX_M_H

#include <stdint.h>

namespace cortex_m {

inline volatile uint32_t& reg(uint32_t address) {
  return *reinterpret_cast<volatile uint32_t*>(address);
}

// SysTick: a 24-bit down counter that reloads from SYST_RVR and, with
// TICKINT, raises exception 15 on every wrap.
inline volatile uint32_t& syst_csr() { return reg(0xE000E010); }
inline volatile uint32_t& syst_rvr() { return reg(0xE000E014); }
inline volatile uint32_t& syst_cvr() { return reg(0xE000E018); }
inline constexpr uint32_t kSystEnable = 1u << 0;
inline constexpr uint32_t kSystTickInt = 1u << 1;
inline constexpr uint32_t kSystCpuClock = 1u << 2;

// Interrupt control and state: PENDSTSET says a SysTick wrap is pending
// (its handler has not run yet).
inline volatile uint32_t& scb_icsr() { return reg(0xE000ED04); }
inline constexpr uint32_t kIcsrPendStSet = 1u << 26;

// The exception being handled: 0 in thread mode, 15 in SysTick's handler,
// 16 + n in external interrupt n.
inline uint32_t ipsr() {
  uint32_t v;
  __asm__ volatile("mrs %0, ipsr" : "=r"(v));
  return v & 0x1FF;
}

// Masks every configurable interrupt and returns the previous PRIMASK, so
// that masked sections nest (a handler restores what it found).
inline uint32_t irq_save() {
  uint32_t primask;
  __asm__ volatile("mrs %0, primask\n\tcpsid i" : "=r"(primask)::"memory");
  return primask;
}

inline void irq_restore(uint32_t primask) {
  __asm__ volatile("msr primask, %0" ::"r"(primask) : "memory");
}

inline void irq_enable() { __asm__ volatile("cpsie i" ::: "memory"); }

inline void wait_for_interrupt() { __asm__ volatile("wfi" ::: "memory"); }

}  // namespace cortex_m

#endif  // SPOOR_FIRMWARE_CORTEX_M_H
