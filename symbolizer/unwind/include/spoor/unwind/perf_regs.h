// perf's x86-64 user register layout (<asm/perf_regs.h>, PERF_REG_X86_*)
// and its mapping to DWARF register numbers, for samples taken with
// PERF_SAMPLE_REGS_USER: the sample carries one u64 per set bit of its
// register mask, in ascending bit order.
#ifndef SPOOR_UNWIND_PERF_REGS_H
#define SPOOR_UNWIND_PERF_REGS_H

#include <cstdint>
#include <optional>
#include <span>

namespace spoor::unwind {

// PERF_SAMPLE_REGS_ABI_* (what the sample's regs_abi field holds).
inline constexpr uint32_t kRegsAbiNone = 0, kRegsAbi32 = 1, kRegsAbi64 = 2;

// PERF_REG_X86_*: bit numbers of the register mask.
enum PerfRegX86 : uint8_t {
  kPerfAx = 0, kPerfBx, kPerfCx, kPerfDx, kPerfSi, kPerfDi, kPerfBp, kPerfSp, kPerfIp, kPerfFlags,
  kPerfCs, kPerfSs, kPerfDs, kPerfEs, kPerfFs, kPerfGs,
  kPerfR8 = 16, kPerfR9, kPerfR10, kPerfR11, kPerfR12, kPerfR13, kPerfR14, kPerfR15,
};

// The mask perf's own `--call-graph dwarf` asks for on x86-64: the 16
// general registers, ip and sp (every register the CFI can name).
inline constexpr uint64_t kPerfRegsDwarfMask = 0xff01ff;

// DWARF register numbers of the x86-64 psABI, 0..16 (16 is the return
// address column, which holds the ip): the perf register each one comes from.
inline constexpr PerfRegX86 kDwarfToPerfX86[17] = {
    kPerfAx, kPerfDx, kPerfCx, kPerfBx, kPerfSi, kPerfDi, kPerfBp, kPerfSp,
    kPerfR8, kPerfR9, kPerfR10, kPerfR11, kPerfR12, kPerfR13, kPerfR14, kPerfR15, kPerfIp,
};

// The registers of one sample: `values` holds one little-endian u64 per set
// bit of `mask`, ascending. A blob shorter than the mask says reads the
// missing registers as absent, never past its end.
struct PerfRegisters {
  uint64_t mask = 0;
  std::span<const uint8_t> values;

  // The value of perf register `reg`, nullopt when the mask lacks it or the
  // blob is too short. Cost: a popcount.
  std::optional<uint64_t> get(unsigned reg) const;
};

}  // namespace spoor::unwind

#endif  // SPOOR_UNWIND_PERF_REGS_H
