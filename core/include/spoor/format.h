// Spoor trace format, version 1.3: every on-disk and in-buffer layout in one place.
//
// docs/FORMAT.md explains the format in prose; this header is its machine
// form, shared by the writer (core, freestanding) and the reader (hosted).
// All integers are little-endian. Nothing here is a pointer, so the same
// bytes can be written by firmware and read by a host tool. C++ only; C
// callers never see records (spoor/spoor.h is their API).
#ifndef SPOOR_FORMAT_H
#define SPOOR_FORMAT_H

#include <stdint.h>

namespace spoor::format {
#define SPOOR_FMT_CONST inline constexpr

// ---------------------------------------------------------------------------
// File header: the first 32 bytes of every trace file.
// ---------------------------------------------------------------------------
SPOOR_FMT_CONST char kFileMagic[8] = {'S', 'P', 'O', 'O', 'R', 'T', 'R', 'C'};
SPOOR_FMT_CONST uint16_t kVersionMajor = 1;  // a reader rejects any other major
SPOOR_FMT_CONST uint16_t kVersionMinor = 7;  // minor bumps only add block types, layouts, record forms or reserved fields' meanings
                                             // (1: COMPRESSED; 2: its reference-columns layout;
                                             // 3: short records; 4: SYMBOL_MAP; 5: layout 3)

struct FileHeader {
  char magic[8];          // kFileMagic
  uint16_t version_major;
  uint16_t version_minor;
  uint32_t header_size;   // sizeof(FileHeader); blocks start here
  uint64_t flags;         // reserved, 0
  uint64_t reserved;      // 0
};

// ---------------------------------------------------------------------------
// Blocks follow the file header back to back. Each starts with a 16-byte
// header carrying a sync word (so a reader can say exactly where damage
// starts), its type, payload size and a CRC-32C of the payload.
// ---------------------------------------------------------------------------
SPOOR_FMT_CONST uint32_t kBlockMagic = 0x4B4C4253u;  // "SBLK"
SPOOR_FMT_CONST uint32_t kMaxBlockPayload = 64u << 20;  // sanity bound for readers

enum BlockType : uint16_t {
  kBlockClock = 1,       // ClockBlock
  kBlockProcess = 2,     // ProcessBlock + strings
  kBlockStream = 3,      // StreamBlock
  kBlockProvider = 4,    // ProviderBlock + name
  kBlockEvent = 5,       // EventBlock + name + fields
  kBlockPacket = 6,      // PacketBlock + records
  kBlockStreamEnd = 7,   // StreamEndBlock
  kBlockCompressed = 8,  // CompressedBlock + a compressed run of blocks (since 1.1)
  kBlockSymbolMap = 9,   // SymbolMapBlock + path + a piece of the map's text (since 1.4)
};

struct BlockHeader {
  uint32_t magic;         // kBlockMagic
  uint16_t type;          // BlockType
  uint16_t flags;         // 0
  uint32_t size;          // payload bytes after this header
  uint32_t crc32c;        // CRC-32C (Castagnoli) of the payload
};

// Clock sources a trace's ticks can come from.
enum ClockSource : uint32_t {
  kClockMonotonicNs = 0,  // ticks are CLOCK_MONOTONIC nanoseconds already
  kClockTsc = 1,          // x86-64 rdtsc, invariant TSC
  kClockCntvct = 2,       // aarch64 CNTVCT_EL0
  kClockHook = 3,         // a user-supplied clock (firmware)
};

// Converts raw ticks to CLOCK_MONOTONIC ns:
//   ns = monotonic_ns_ref + (ticks - tick_ref) * 1e12 / freq_millihz
// A writer may emit several; a reader uses the last valid one (the best
// calibrated, written at session stop).
struct ClockBlock {
  uint32_t source;        // ClockSource
  // Since 1.7 (0 before): the writers rounded their records' times down to
  // a multiple of this many ticks (spoor record --time-resolution); 0 or 1
  // when they kept every tick.
  uint32_t time_grain_ticks;
  uint64_t freq_millihz;  // tick frequency in milli-hertz (ticks/s * 1000)
  uint64_t tick_ref;      // a tick reading ...
  int64_t monotonic_ns_ref;  // ... taken at this CLOCK_MONOTONIC time
  int64_t realtime_ns_ref;   // ... and this CLOCK_REALTIME (0 if unknown)
};

// One traced process (or firmware image). Followed by two strings, each a
// uint16_t length and that many UTF-8 bytes: the process name, then the
// command line with arguments separated by NUL bytes.
struct ProcessBlock {
  uint32_t pid;
  uint32_t ppid;
  uint32_t pointer_size;  // 4 or 8: the width of kFieldPointer values
  uint32_t reserved;
};

// A piece of a symbol map a process's runtime wrote beside the trace (a
// JIT's perf-PID.map), kept in the trace so that a report elsewhere or
// later names the code it generated. A map's pieces follow one another:
// a piece at offset 0 starts the pid's map afresh.
enum SymbolMapKind : uint16_t {
  kSymbolMapPerf = 1,  // perf's text format: "START SIZE NAME" lines, START and SIZE in hex
};
struct SymbolMapBlock {
  uint32_t pid;           // the process whose addresses it names
  uint16_t kind;          // SymbolMapKind
  uint16_t path_size;     // bytes of the path that follows (where the map was read)
  uint64_t offset;        // of this piece in the map's text
};

// One stream: the packets of one process on one CPU.
struct StreamBlock {
  uint32_t stream_id;     // unique in the file
  uint32_t pid;           // ProcessBlock it belongs to
  uint32_t cpu;
  uint32_t reserved;
};

// A provider of a process. Followed by a uint16_t length and the UTF-8 name.
struct ProviderBlock {
  uint32_t pid;
  uint16_t provider_index; // referenced by EventBlock.provider_index
  uint16_t reserved;
  uint8_t guid[16];        // RFC 4122 byte order
};

// Field types, as stored in EventBlock field lists.
enum FieldType : uint8_t {
  kFieldU8 = 1, kFieldU16 = 2, kFieldU32 = 3, kFieldU64 = 4,
  kFieldI8 = 5, kFieldI16 = 6, kFieldI32 = 7, kFieldI64 = 8,
  kFieldF32 = 9, kFieldF64 = 10,
  kFieldBool = 11,         // 1 byte, 0 or 1
  kFieldString = 12,       // ULEB128 length, then UTF-8 bytes (no NUL)
  kFieldBlob = 13,         // ULEB128 length, then bytes
  kFieldPointer = 14,      // ProcessBlock.pointer_size bytes
  kFieldActivityId = 15,   // 16 bytes
  kFieldTypeLast = kFieldActivityId,
};

// The bytes a field of `type` takes in a record body; 0 for the variable
// ones (string, blob). `pointer_size`: the process's (ProcessBlock). A
// table, not a switch: Cortex-M0's switch tables call into libgcc, which a
// firmware image may not link.
// By FieldType: none, U8 U16 U32 U64, I8 I16 I32 I64, F32 F64, Bool, String,
// Blob, Pointer (pointer_size), ActivityId.
SPOOR_FMT_CONST uint8_t kFixedFieldSizes[kFieldTypeLast + 1] = {0, 1, 2, 4, 8, 1, 2, 4, 8, 4, 8, 1, 0, 0, 0, 16};
constexpr uint32_t fixed_field_size(uint8_t type, uint32_t pointer_size) {
  if (type == kFieldPointer) return pointer_size;
  return type <= kFieldTypeLast ? kFixedFieldSizes[type] : 0;
}
static_assert(fixed_field_size(kFieldU16, 8) == 2 && fixed_field_size(kFieldI64, 8) == 8 &&
              fixed_field_size(kFieldBool, 8) == 1 && fixed_field_size(kFieldBlob, 8) == 0 &&
              fixed_field_size(kFieldPointer, 4) == 4 && fixed_field_size(kFieldActivityId, 8) == 16);

// ETW's opcodes (winmeta.xml values).
enum Opcode : uint8_t {
  kOpInfo = 0, kOpStart = 1, kOpStop = 2, kOpDcStart = 3, kOpDcStop = 4,
  kOpExtension = 5, kOpReply = 6, kOpResume = 7, kOpSuspend = 8, kOpSend = 9,
  kOpReceive = 240,
};

// An event descriptor of a process. Followed by: uint16_t length + UTF-8
// event name; then field_count fields, each uint8_t FieldType, uint16_t
// length + UTF-8 field name.
struct EventBlock {
  uint32_t pid;
  uint16_t event_key;      // what records of this process carry (1..kMaxEventKey)
  uint16_t provider_index;
  uint16_t id;             // the event id the provider gave it
  uint8_t version;
  uint8_t level;           // 0..5
  uint8_t opcode;          // Opcode
  uint8_t reserved;
  uint16_t task;
  uint64_t keywords;
  uint16_t field_count;
  uint16_t reserved2;
  uint32_t reserved3;
};

// A packet: one drained sub-buffer of one stream. Followed by data_size
// bytes of records.
struct PacketBlock {
  uint32_t stream_id;
  uint32_t cpu;
  uint64_t sequence;       // 0, 1, 2 ... per stream; a gap means missing packets
  uint64_t begin_ticks;    // first record's full timestamp
  uint64_t end_ticks;      // last record's full timestamp
  uint64_t lost_total;     // events dropped on this stream so far (running)
  uint32_t record_count;
  uint32_t data_size;
};

// Written when a stream is closed.
struct StreamEndBlock {
  uint32_t stream_id;
  uint32_t reserved;
  uint64_t lost_total;       // final dropped-event count
  uint64_t abandoned_bytes;  // reserved but never committed (writer died mid-event)
  uint64_t packets;          // packets written
};

// A run of complete blocks of any other type, compressed together; the
// reader walks the blocks it expands to exactly as if they were in the file.
// Followed by the compressed bytes (the rest of the payload).
SPOOR_FMT_CONST uint16_t kCodecZstd = 1;          // one zstd frame
SPOOR_FMT_CONST uint16_t kLayoutBlocks = 0;       // the frame holds the blocks as they are
SPOOR_FMT_CONST uint16_t kLayoutRecordColumns = 1;  // packets' records moved to columns
SPOOR_FMT_CONST uint16_t kLayoutReferenceColumns = 2;  // columns, times per stream, pointers as references (since 1.2)
SPOOR_FMT_CONST uint16_t kLayoutStepTimes = 3;  // layout 2 with each key word's times in their common step (since 1.5)
SPOOR_FMT_CONST uint16_t kLayoutWideRows = 4;  // layout 3 with bodies over 256 bytes in rows, not byte planes (since 1.6)
SPOOR_FMT_CONST uint32_t kMaxCompressedRaw = 64u << 20;  // raw_size and packed_size bound

struct CompressedBlock {
  uint16_t codec;          // kCodecZstd
  uint16_t layout;         // kLayoutBlocks, kLayoutRecordColumns, kLayoutReferenceColumns, kLayoutStepTimes or kLayoutWideRows
  uint32_t raw_size;       // bytes of the blocks it holds, expanded
  uint32_t packed_size;    // bytes the frame decompresses to
  uint32_t blocks_size;    // layouts 1 and 2: bytes of the block section
  uint32_t record_count;   // layouts 1 and 2: records in the columns
  uint32_t reserved;       // 0
};

// ---------------------------------------------------------------------------
// Records inside a packet. Each starts on a 2-byte boundary:
//
//   off 0  uint16 size    total record bytes incl. header and padding, even;
//                         0 means "not committed yet" (the commit marker)
//   off 2  uint16 key     bits 0..12 event key, 13 tid follows,
//                         14 activity id follows, 15 related activity id follows
//   off 4  uint48 time    low 48 bits of the tick counter
//   off 10 [uint32 tid]   the writing thread; present on the first record of a
//                         packet and whenever the thread changes
//          [16 B activity id] [16 B related activity id]
//          fields, packed in descriptor order, then 0 or 1 byte of padding
//
// The reader widens time to 64 bits against the packet's begin_ticks using a
// signed 48-bit difference.
// ---------------------------------------------------------------------------
SPOOR_FMT_CONST uint32_t kRecordHeaderSize = 10;
SPOOR_FMT_CONST uint16_t kKeyMask = 0x1FFF;
SPOOR_FMT_CONST uint16_t kMaxEventKey = 0x1FFF;
SPOOR_FMT_CONST uint16_t kKeyHasTid = 1u << 13;
SPOOR_FMT_CONST uint16_t kKeyHasActivity = 1u << 14;
SPOOR_FMT_CONST uint16_t kKeyHasRelated = 1u << 15;
SPOOR_FMT_CONST uint32_t kActivityIdSize = 16;
SPOOR_FMT_CONST uint32_t kMaxRecordSize = 0xFFFE;
SPOOR_FMT_CONST uint64_t kTimeMask48 = (1ull << 48) - 1;

// Short records (since 1.3), written by single-core writers only:
//
//   off 0  uint8  size | 1  total record bytes (even, 6..254) with bit 0 set:
//                           a long record's size is even, so bit 0 of the
//                           first byte tells the forms apart, and the uint16
//                           at offset 0 (the commit marker) is never 0
//   off 1  uint8  key       event key 1..255; no tid, no activity ids
//   off 2  uint32 time      low 32 bits of the tick counter
//          fields, packed in descriptor order, then 0 or 1 byte of padding
//
// A short record is never the first of its packet; the reader widens its
// time against the previous record's full time in the packet, as a signed
// 32-bit difference (the writer uses the short form only when less than
// 2^31 ticks passed). The thread is the packet's current thread.
SPOOR_FMT_CONST uint8_t kShortRecordFlag = 1;
SPOOR_FMT_CONST uint32_t kShortRecordHeaderSize = 6;
SPOOR_FMT_CONST uint32_t kShortMaxKey = 255;
SPOOR_FMT_CONST uint32_t kShortMaxSize = 254;
SPOOR_FMT_CONST uint64_t kShortMaxTickDelta = 1ull << 31;  // exclusive

// A short record's full time from its low 32 bits and the previous record's
// full time: (time32 - previous) mod 2^32 read as a signed 32-bit number.
// The one rule the ring's drainer and the reader both apply.
constexpr uint64_t widen_short_ticks(uint32_t time32, uint64_t previous_ticks) {
  const auto diff = static_cast<int32_t>(time32 - static_cast<uint32_t>(previous_ticks));
  return previous_ticks + static_cast<uint64_t>(static_cast<int64_t>(diff));
}

static_assert(sizeof(FileHeader) == 32);
static_assert(sizeof(BlockHeader) == 16);
static_assert(sizeof(ClockBlock) == 40);
static_assert(sizeof(ProcessBlock) == 16);
static_assert(sizeof(StreamBlock) == 16);
static_assert(sizeof(ProviderBlock) == 24);
static_assert(sizeof(EventBlock) == 32);
static_assert(sizeof(PacketBlock) == 48);
static_assert(sizeof(StreamEndBlock) == 32);
static_assert(sizeof(CompressedBlock) == 24);
static_assert(sizeof(SymbolMapBlock) == 16);
}  // namespace spoor::format
#undef SPOOR_FMT_CONST
#endif  // SPOOR_FORMAT_H
