// Packer and unpack: the CompressedBlock header around one zstd frame.
#include "spoor/compress/packed_blocks.h"

#include <zstd.h>

#include <cstring>

#include "record_columns.h"
#include "reference_columns.h"
#include "scratch.h"
#include "spoor/format.h"

namespace spoor::compress {
namespace {
namespace fmt = spoor::format;
}  // namespace

struct Packer::Impl {
  ZSTD_CCtx* context = nullptr;
  uint16_t layout = fmt::kLayoutWideRows;
  int level = kDefaultLevel;
  PageBuffer columns;          // scratch: the record-columns layout
  ReferenceSplitter splitter;  // keeps its scratch between runs
  // zstd writes here, then the frame (a tenth of the bound on traces) is
  // copied out: a payload sized to the bound would be zeroed, megabytes
  // per run, and faulted in whenever the caller's buffer is a new one.
  Scratch<uint8_t> frame;
  ZSTD_outBuffer out{};
  std::string error;  // zstd's, when a piece failed
  ~Impl() { ZSTD_freeCCtx(context); }

  // One frame of `size` bytes, given piece by piece. zstd copies each
  // piece into its window (a few MiB, reused), so the layout need not be
  // in one buffer.
  void begin_frame(size_t size) {
    ZSTD_CCtx_reset(context, ZSTD_reset_session_only);
    ZSTD_CCtx_setParameter(context, ZSTD_c_compressionLevel, level);
    ZSTD_CCtx_setPledgedSrcSize(context, size);  // as one-shot compression would: in the frame header
    const size_t bound = ZSTD_compressBound(size);
    frame.ensure(bound);
    out = ZSTD_outBuffer{frame.data(), bound, 0};
    error.clear();
  }
  bool put(const uint8_t* data, size_t size) {
    ZSTD_inBuffer in{data, size, 0};
    while (in.pos < in.size) {
      const size_t before = in.pos;
      const size_t r = ZSTD_compressStream2(context, &out, &in, ZSTD_e_continue);
      if (ZSTD_isError(r)) return fail(ZSTD_getErrorName(r));
      // The output holds the bound: all input is taken.
      if (in.pos == before && out.pos == out.size) return fail("the frame outgrew its bound");
    }
    return true;
  }
  bool end_frame() {
    ZSTD_inBuffer none{nullptr, 0, 0};
    for (;;) {
      const size_t r = ZSTD_compressStream2(context, &out, &none, ZSTD_e_end);
      if (ZSTD_isError(r)) return fail(ZSTD_getErrorName(r));
      if (r == 0) return true;
      if (out.pos == out.size) return fail("the frame outgrew its bound");
    }
  }
  bool fail(const char* what) {
    if (error.empty()) error = what;
    return false;
  }
};

Packer::Packer(int level, uint16_t layout) : impl_(std::make_unique<Impl>()) {
  impl_->layout = layout;
  impl_->level = level;
  impl_->context = ZSTD_createCCtx();
  if (impl_->context != nullptr) {
    // The level is set at each frame's start (begin_frame). The reader
    // checks each block's CRC-32C; zstd's own checksum would only repeat it.
    ZSTD_CCtx_setParameter(impl_->context, ZSTD_c_checksumFlag, 0);
  }
}

Packer::~Packer() = default;

void Packer::set_level(int level) { impl_->level = level; }

bool Packer::pack(std::span<const uint8_t> blocks, std::vector<uint8_t>& payload, std::string* problem) {
  auto fail = [&](std::string text) {
    if (problem) *problem = std::move(text);
    return false;
  };
  Impl& s = *impl_;
  if (s.context == nullptr) return fail("cannot create a zstd context");
  if (blocks.size() > fmt::kMaxCompressedRaw)
    return fail("a run of " + std::to_string(blocks.size()) + " bytes is over the 64 MiB limit");
  fmt::CompressedBlock h{};
  h.codec = fmt::kCodecZstd;
  h.raw_size = static_cast<uint32_t>(blocks.size());
  ColumnsInfo info;
  const bool referenced = s.layout == fmt::kLayoutReferenceColumns || s.layout == fmt::kLayoutStepTimes ||
                          s.layout == fmt::kLayoutWideRows;
  bool split = false;
  size_t size = 0;
  if (s.layout != fmt::kLayoutBlocks) {
    split = referenced ? s.splitter.split(blocks, info, s.layout >= fmt::kLayoutStepTimes,
                                          s.layout == fmt::kLayoutWideRows)
                       : split_records(blocks, s.columns, info);
    if (split) size = referenced ? s.splitter.bytes() : s.columns.size();
  }
  if (split && size <= fmt::kMaxCompressedRaw) {
    h.layout = s.layout;
    h.blocks_size = info.blocks_size;
    h.record_count = info.record_count;
  } else {
    split = false;
    size = blocks.size();
    h.layout = fmt::kLayoutBlocks;
    h.blocks_size = h.raw_size;
  }
  h.packed_size = static_cast<uint32_t>(size);
  s.begin_frame(size);
  bool fed = false;
  if (!split)
    fed = s.put(blocks.data(), blocks.size());
  else if (referenced)
    fed = s.splitter.write([&s](const uint8_t* data, size_t n) { return s.put(data, n); });
  else
    fed = s.put(s.columns.data(), s.columns.size());
  if (!fed || !s.end_frame()) return fail("zstd: " + s.error);
  payload.resize(sizeof h + s.out.pos);
  std::memcpy(payload.data(), &h, sizeof h);
  std::memcpy(payload.data() + sizeof h, s.frame.data(), s.out.pos);
  return true;
}

namespace {

// The CompressedBlock header of `payload`, checked (codec, layout, sizes);
// false with `problem` set when it is not one this reader expands.
bool read_header(std::span<const uint8_t> payload, fmt::CompressedBlock& h, std::string& problem) {
  if (payload.size() < sizeof h) {
    problem = "its payload of " + std::to_string(payload.size()) +
              " bytes is too short for the 24-byte compression header";
    return false;
  }
  std::memcpy(&h, payload.data(), sizeof h);
  if (h.codec != fmt::kCodecZstd) {
    problem = "it uses codec " + std::to_string(h.codec) + ", which this reader does not know";
    return false;
  }
  if (h.layout != fmt::kLayoutBlocks && h.layout != fmt::kLayoutRecordColumns &&
      h.layout != fmt::kLayoutReferenceColumns && h.layout != fmt::kLayoutStepTimes && h.layout != fmt::kLayoutWideRows) {
    problem = "it uses layout " + std::to_string(h.layout) + ", which this reader does not know";
    return false;
  }
  if (h.raw_size > fmt::kMaxCompressedRaw || h.packed_size > fmt::kMaxCompressedRaw) {
    problem = "it claims to expand to " + std::to_string(h.raw_size) + " bytes (" +
              std::to_string(h.packed_size) + " packed), over the 64 MiB limit";
    return false;
  }
  const std::span<const uint8_t> frame = payload.subspan(sizeof h);
  const unsigned long long content = ZSTD_getFrameContentSize(frame.data(), frame.size());
  if (content != ZSTD_CONTENTSIZE_UNKNOWN && content != ZSTD_CONTENTSIZE_ERROR &&
      content != h.packed_size) {
    problem = "its zstd frame holds " + std::to_string(content) + " bytes, its header says " +
              std::to_string(h.packed_size);
    return false;
  }
  if (h.layout == fmt::kLayoutBlocks && h.raw_size != h.packed_size) {
    problem = "it holds its blocks as they are, yet its sizes differ (" +
              std::to_string(h.raw_size) + " and " + std::to_string(h.packed_size) + ")";
    return false;
  }
  if (h.layout != fmt::kLayoutBlocks && h.blocks_size > h.packed_size) {
    problem = "its block section of " + std::to_string(h.blocks_size) + " bytes is larger than the " +
              std::to_string(h.packed_size) + " it expands to";
    return false;
  }
  return true;
}

}  // namespace

bool unpack_block_section(std::span<const uint8_t> payload, BlockSection& section, std::string& problem) {
  fmt::CompressedBlock h{};
  if (!read_header(payload, h, problem)) return false;
  section.raw_size = h.raw_size;
  section.packets_cut = h.layout != fmt::kLayoutBlocks;
  const size_t want = section.packets_cut ? h.blocks_size : h.packed_size;
  section.bytes.resize(want);
  // The frame's first `want` bytes only: zstd decodes the frame in order,
  // so what lies past them (the record columns, nearly all of it) is
  // never decoded here.
  ZSTD_DCtx* context = ZSTD_createDCtx();
  if (context == nullptr) {
    problem = "zstd could not allocate a decompression context";
    return false;
  }
  const std::span<const uint8_t> frame = payload.subspan(sizeof h);
  ZSTD_inBuffer in{frame.data(), frame.size(), 0};
  ZSTD_outBuffer out{section.bytes.data(), want, 0};
  size_t ret = 1;
  while (out.pos < want) {
    const size_t before_in = in.pos, before_out = out.pos;
    ret = ZSTD_decompressStream(context, &out, &in);
    if (ZSTD_isError(ret) || ret == 0 || (in.pos == before_in && out.pos == before_out)) break;
  }
  ZSTD_freeDCtx(context);
  if (ZSTD_isError(ret)) {
    problem = std::string("zstd cannot expand it: ") + ZSTD_getErrorName(ret);
    return false;
  }
  if (out.pos != want) {
    problem = "it expands to " + std::to_string(out.pos) + " bytes, its header says " +
              std::to_string(section.packets_cut ? h.packed_size : want);
    return false;
  }
  return true;
}

bool unpack(std::span<const uint8_t> payload, ExpandedBytes& blocks, std::string& problem,
            ExpandedBytes* scratch) {
  fmt::CompressedBlock h{};
  if (!read_header(payload, h, problem)) return false;
  const std::span<const uint8_t> frame = payload.subspan(sizeof h);
  ExpandedBytes local;
  ExpandedBytes& packed = scratch != nullptr ? *scratch : local;
  packed.resize(h.packed_size);  // zstd writes all of it (checked below)
  const size_t n = ZSTD_decompress(packed.data(), packed.size(), frame.data(), frame.size());
  if (ZSTD_isError(n)) {
    problem = std::string("zstd cannot expand it: ") + ZSTD_getErrorName(n);
    return false;
  }
  if (n != h.packed_size) {
    problem = "it expands to " + std::to_string(n) + " bytes, its header says " +
              std::to_string(h.packed_size);
    return false;
  }
  if (h.layout == fmt::kLayoutBlocks) {
    blocks.swap(packed);  // the caller's old buffer becomes the scratch
    return true;
  }
  const ColumnsInfo info{h.blocks_size, h.record_count};
  const bool joined = h.layout == fmt::kLayoutRecordColumns
                          ? join_records(packed, info, h.raw_size, blocks, problem)
                          : join_referenced(packed, info, h.raw_size, h.layout >= fmt::kLayoutStepTimes,
                                            h.layout == fmt::kLayoutWideRows, blocks, problem);
  if (!joined) {
    problem = "its record columns do not add up: " + problem;
    return false;
  }
  return true;
}

}  // namespace spoor::compress
