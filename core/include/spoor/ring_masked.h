// The ring's writer side on a single-core target (SPOOR_SINGLE_CORE).
//
// A Cortex-M has no 64-bit compare-and-swap (an M0+ has no exclusive loads
// at all), so the reservation runs with interrupts masked through the port
// hooks (spoor/port.h): read head, size the record, read the clock, move
// head and remember the record's time, write the header, unmask. Copying
// the fields and the commit run unmasked, except in ring_write_small, whose
// two field words are stored before unmasking (they may cover zero bytes
// past the record, which no nested writer may have reserved yet).
//
// An interrupt that raises an event between our reservation and our commit
// (a nested writer, as in ftrace) reserves after us, so its record lands
// after ours; it commits first, and a drainer that meets our uncommitted
// size word (0) stops there until we commit. Records stay in time order
// because the clock is read under the mask.
//
// Writers are sequential per ring, so the writer knows the previous record's
// full time and can use the 6-byte short header (docs/FORMAT.md, "Short
// records") when its event key is small, the thread did not change, it
// carries no activity ids, it is not the first record of its packet and
// less than 2^31 ticks passed since the previous record.
//
// The writer is split for code size, since firmware counts bytes: small
// events (fixed-size fields, at most 8 bytes) call ring_write_small, whose
// short fast path is the only one; every other event calls ring_claim (the
// general, out-of-line path, which writes short records too) and keeps only
// its field stores and ring_publish (the commit) at the call site.
#ifndef SPOOR_RING_MASKED_H
#define SPOOR_RING_MASKED_H

#include "spoor/ring.h"

namespace spoor {

// Where and what to store to commit a claimed record.
struct Claim {
  uint16_t* commit_at;   // the record's first 16 bits
  uint16_t commit_word;  // the size (long form) or size|1 and the key (short form)
};

// Reserves a record for an event with key `key_and_flags` (the event key
// and its activity-id flags; the tid flag is the writer's) and `body_size`
// bytes of activity ids and fields, and writes its header except the commit
// word. Returns where the body goes, or null when the event was dropped
// (ring full: counted in `lost`; record too large; no ring installed).
// Out of line, so each event's call site stays a call, the field stores and
// the commit; no fast path of its own (flash counts more here: the events
// that come this way carry strings or wider fields).
SPOOR_NOINLINE uint8_t* ring_claim(uint32_t key_and_flags, uint32_t body_size, Claim* claim);

// The whole write of an event whose fields are fixed-size and at most 8
// bytes in all, with no activity ids: `lo` and `hi` hold the fields' bytes
// as they are stored (little-endian; the bytes past the fields must be zero:
// the fast path stores whole words), `size` is the short record's size
// (6 header bytes and the fields, rounded up to even: a constant at each
// call site). The fields come first so that a call site passes its two
// arguments on in the registers they arrived in. One call per event, no
// Claim through memory (bench/RESULTS.md, "Firmware core": instructions
// per event).
SPOOR_NOINLINE void ring_write_small(uint32_t lo, uint32_t hi, uint32_t key, uint32_t size);

// The release store that commits a record, on one core: a compiler barrier
// and a plain 16-bit store. The only other observers are an interrupt on
// the same core (which sees its own core's stores in program order) and a
// debugger that halts the core; no barrier instruction is needed.
SPOOR_ALWAYS_INLINE void commit_word(uint16_t* at, uint32_t word) {
  __atomic_signal_fence(__ATOMIC_SEQ_CST);
  __atomic_store_n(at, static_cast<uint16_t>(word), __ATOMIC_RELAXED);
}

// Publishes the record: everything written before the commit word is
// visible to a drainer that sees it (never 0).
SPOOR_ALWAYS_INLINE void ring_publish(const Claim& claim) {
  commit_word(claim.commit_at, claim.commit_word);
}

}  // namespace spoor

#endif  // SPOOR_RING_MASKED_H
