// Synthetic perf_event_open records for the parser and conversion tests:
// a header, then whatever is appended, then the size fixed up by done().
#ifndef SPOOR_TESTS_KERNELSRC_PERF_RECORD_BUILDER_H
#define SPOOR_TESTS_KERNELSRC_PERF_RECORD_BUILDER_H

#include <linux/perf_event.h>

#include <cstdint>
#include <cstring>
#include <vector>

#include "spoor/kernelsrc/perf_record.h"

namespace spoor::kernelsrc {

struct RecordBuilder {
  explicit RecordBuilder(uint32_t type, uint16_t misc = 0) {
    perf_event_header h{type, misc, 0};
    put(&h, sizeof h);
  }
  RecordBuilder& put(const void* p, size_t n) {
    // resize + memcpy: GCC 12 at -O2 misreads vector::insert here (a
    // -Wstringop-overflow false positive).
    const size_t at = bytes.size();
    bytes.resize(at + n);
    std::memcpy(bytes.data() + at, p, n);
    return *this;
  }
  RecordBuilder& u64(uint64_t v) { return put(&v, 8); }
  RecordBuilder& u32x2(uint32_t a, uint32_t b) { return put(&a, 4).put(&b, 4); }
  RecordBuilder& pad8() {
    while (bytes.size() % 8) bytes.push_back(0);
    return *this;
  }
  // The sample_id trailer for kSampleIdBits.
  RecordBuilder& trailer(uint32_t pid, uint32_t tid, uint64_t time, uint32_t cpu, uint64_t id) {
    return u32x2(pid, tid).u64(time).u32x2(cpu, 0).u64(id);
  }
  Bytes done() {
    const uint16_t size = static_cast<uint16_t>(bytes.size());
    std::memcpy(bytes.data() + 6, &size, 2);
    return Bytes(bytes.data(), bytes.size());
  }
  std::vector<uint8_t> bytes;
};

}  // namespace spoor::kernelsrc

#endif  // SPOOR_TESTS_KERNELSRC_PERF_RECORD_BUILDER_H
