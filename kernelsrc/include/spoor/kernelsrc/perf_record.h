// Parsing perf_event_open records. Every parser checks that its cursor
// lands exactly on the record's end for the sample_type it was given, so a
// record that is not what we think (wrong sample_type, truncated, a kernel
// that added a field) is refused, never misread. Pure: spans in, structs out.
#ifndef SPOOR_KERNELSRC_PERF_RECORD_H
#define SPOOR_KERNELSRC_PERF_RECORD_H

#include <linux/perf_event.h>

#include <cstdint>
#include <span>
#include <string_view>

namespace spoor::kernelsrc {

using Bytes = std::span<const uint8_t>;

// The sample_id trailer of a side-band record (sample_id_all), for the bits
// of kSampleIdBits the event has.
struct SampleId {
  uint32_t pid = 0, tid = 0;
  uint64_t time = 0;
  uint32_t cpu = 0;
  uint64_t id = 0;
};

// The event a record came from: PERF_SAMPLE_IDENTIFIER is the first u64
// of a SAMPLE body and the last u64 of any other record's trailer. False
// when the record is too short to hold it.
bool record_identifier(Bytes record, uint64_t* id);

// A SAMPLE record, for the sample_type bits kernelsrc asks for (IDENTIFIER,
// IP, TID, TIME, ADDR, CPU, CALLCHAIN, RAW, REGS_USER, STACK_USER); spans
// point into the record. Bytes may be unaligned: read them with memcpy.
struct Sample {
  uint64_t id = 0, ip = 0, addr = 0, time = 0;
  uint32_t pid = 0, tid = 0, cpu = 0;
  uint64_t callchain_nr = 0;
  Bytes callchain;   // callchain_nr u64s, PERF_CONTEXT_* markers included
  Bytes raw;         // the tracepoint's data (u32 size not included)
  uint64_t regs_abi = 0;
  Bytes regs;        // one u64 per bit of regs_mask (none when regs_abi is 0)
  Bytes stack;       // the dyn_size bytes actually copied
};

// False when sample_type holds a bit this parser does not know, or the
// fields do not end exactly at the record's end.
bool parse_sample(Bytes record, uint64_t sample_type, uint64_t regs_mask, Sample* out);

// The kernel's time of any record of an event with PERF_SAMPLE_TIME: in a
// SAMPLE's body (after IDENTIFIER, IP and TID), else in its trailer.
// False when the event has no time or the record cannot hold it.
bool record_time(Bytes record, uint64_t sample_type, uint64_t* time);

// The trailer of a non-SAMPLE record. False when it does not fit.
bool parse_sample_id(Bytes record, uint64_t sample_type, SampleId* out);
// Bytes of that trailer for sample_type.
uint32_t sample_id_size(uint64_t sample_type);

struct Mmap2 {
  uint32_t pid = 0, tid = 0;
  uint64_t addr = 0, len = 0, pgoff = 0;
  uint32_t prot = 0, flags = 0;
  Bytes build_id;            // empty unless PERF_RECORD_MISC_MMAP_BUILD_ID
  std::string_view filename;
};
struct Comm {
  uint32_t pid = 0, tid = 0;
  std::string_view comm;
  bool exec = false;
};
struct Task {  // FORK and EXIT
  uint32_t pid = 0, ppid = 0, tid = 0, ptid = 0;
  uint64_t time = 0;
};
struct Lost {
  uint64_t id = 0, lost = 0;
};

// Each false when the body does not fit between the header and the trailer
// (or a string is not NUL-terminated inside it).
bool parse_mmap2(Bytes record, uint64_t sample_type, Mmap2* out);
bool parse_comm(Bytes record, uint64_t sample_type, Comm* out);
bool parse_task(Bytes record, uint64_t sample_type, Task* out);
bool parse_lost(Bytes record, uint64_t sample_type, Lost* out);

inline const perf_event_header& header_of(Bytes record) {
  return *reinterpret_cast<const perf_event_header*>(record.data());
}

}  // namespace spoor::kernelsrc

#endif  // SPOOR_KERNELSRC_PERF_RECORD_H
