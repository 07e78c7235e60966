// The control block: the enable state of every provider of a program, in
// memory that holds no pointers. A session places it in shared memory so a
// controller in another process can map it and change levels and keywords
// while the program runs; the next event written sees the change.
#ifndef SPOOR_CONTROL_H
#define SPOOR_CONTROL_H

#include <stddef.h>
#include <stdint.h>

#include "spoor/provider.h"

namespace spoor {

#if !SPOOR_SINGLE_CORE
// (Not on a single-core target: nothing outside the program maps its
// control state, which is then just one slot per provider in static RAM.)
inline constexpr uint32_t kControlMagic = 0x4C525443u;  // "CTRL"
inline constexpr uint32_t kControlVersion = 1;

// Layout: this header, then `capacity` ProviderControl slots. Slot i belongs
// to the provider with registry index i + 1.
struct ControlBlock {
  uint32_t magic;
  uint32_t version;
  uint32_t capacity;
  Atomic<uint32_t> count;  // slots in use; a slot's id is written before count covers it
  uint64_t reserved[2];
  ProviderControl first_slot;   // slots()[0]; `capacity` slots follow contiguously

  ProviderControl* slots() { return &first_slot; }
  static constexpr size_t bytes_for(uint32_t capacity) {
    return sizeof(ControlBlock) + (capacity - 1) * sizeof(ProviderControl);
  }
};

#endif  // !SPOOR_SINGLE_CORE

// The enable state a session or controller applies to one provider.
struct EnableState {
  bool enabled = false;
  uint8_t level = 0;                 // 0 = every level
  uint64_t keywords_any = ~0ull;
  uint64_t keywords_all = 0;
};

#if !SPOOR_SINGLE_CORE
// Moves the enable state of every registered provider (and of providers
// registered later) into `memory`, which must hold ControlBlock::bytes_for(
// SPOOR_MAX_PROVIDERS) bytes and outlive every event write. Current states
// are copied. Returns ok, or invalid_argument when memory is null or too
// small. Not safe to call concurrently with itself.
Status relocate_control_block(void* memory, size_t size);

// The control block in use (the static one until relocated).
ControlBlock& control_block();
#endif

// Writes one provider's state into its control slot. Writers see the new
// level on their next event; a change of level and keywords together is not
// atomic (an event racing with the change may see either).
void apply_enable_state(ProviderControl& slot, const EnableState& state);

}  // namespace spoor

#endif  // SPOOR_CONTROL_H
