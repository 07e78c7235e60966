// CRC-32C (Castagnoli), the checksum of every trace block (docs/FORMAT.md).
#ifndef SPOOR_CRC32C_H
#define SPOOR_CRC32C_H

#include <stddef.h>
#include <stdint.h>

namespace spoor {

// Continues a CRC-32C over `size` bytes. Start with crc = 0; feeding a
// buffer in pieces gives the same result as feeding it whole. Never fails.
// Cost: a 16-entry table walk (~1 byte/ns) in the freestanding build; the
// hosted build uses the SSE4.2 instruction where the CPU has it (~8 bytes/ns).
uint32_t crc32c(uint32_t crc, const void* data, size_t size);

}  // namespace spoor

#endif  // SPOOR_CRC32C_H
