// CRC-32C (Castagnoli), the checksum of every trace block (docs/FORMAT.md).
#ifndef SPOOR_CRC32C_H
#define SPOOR_CRC32C_H

#include <stddef.h>
#include <stdint.h>

namespace spoor {

// Continues a CRC-32C over `size` bytes. Start with crc = 0; feeding a
// buffer in pieces gives the same result as feeding it whole. Never fails.
// Cost: a 16-entry table walk (~1 byte/ns) in the freestanding build; the
// hosted build uses the SSE4.2 instruction where the CPU has it, three chains
// at once (~20 bytes/ns on the benchmark VM, twice one chain).
uint32_t crc32c(uint32_t crc, const void* data, size_t size);

// The checksum a trace block carries (docs/FORMAT.md): CRC-32C over bytes
// 4..11 of its 16-byte header (type, flags, payload size), continued over
// `payload_crc_input`, the checksum state after the payload is fed to
// crc32c() starting from block_checksum_start(). Covering the header means a
// damaged type or size is caught, not skipped as an unknown block.
inline uint32_t block_checksum_start(const void* header) {
  return crc32c(0, static_cast<const unsigned char*>(header) + 4, 8);
}
inline uint32_t block_checksum(const void* header, const void* payload, size_t size) {
  return crc32c(block_checksum_start(header), payload, size);
}

}  // namespace spoor

#endif  // SPOOR_CRC32C_H
