#include "proto_writer.h"

namespace spoor::exporter {
namespace {
// https://protobuf.dev/programming-guides/encoding/ : wire types.
constexpr uint32_t kVarint = 0;
constexpr uint32_t kFixed64 = 1;
constexpr uint32_t kLengthDelimited = 2;
}  // namespace

void ProtoMessage::put_varint(uint64_t value) {
  while (value >= 0x80) {
    bytes_.push_back(static_cast<char>((value & 0x7f) | 0x80));
    value >>= 7;
  }
  bytes_.push_back(static_cast<char>(value));
}

void ProtoMessage::add_varint(uint32_t field, uint64_t value) {
  put_tag(field, kVarint);
  put_varint(value);
}

void ProtoMessage::add_fixed64(uint32_t field, uint64_t value) {
  put_tag(field, kFixed64);
  for (int i = 0; i < 8; ++i) bytes_.push_back(static_cast<char>((value >> (8 * i)) & 0xff));
}

void ProtoMessage::add_bytes(uint32_t field, std::string_view bytes) {
  put_tag(field, kLengthDelimited);
  put_varint(bytes.size());
  bytes_.append(bytes);
}

void ProtoMessage::add_packed(uint32_t field, std::span<const uint64_t> values) {
  if (values.empty()) return;
  ProtoMessage packed;
  for (uint64_t v : values) packed.put_varint(v);
  add_bytes(field, packed.bytes_);
}

}  // namespace spoor::exporter
