// The protobuf wire format, written by hand: enough of it for Perfetto's
// trace and pprof's profile.proto (varints, length-delimited fields, packed
// repeated varints, fixed64). A message is built bottom up: a nested
// message is finished first, then appended to its parent as bytes, which
// costs one copy per nesting level (export writes each byte a few times;
// the profiles it writes are small next to the traces it reads).
#ifndef SPOOR_EXPORT_PROTO_WRITER_H
#define SPOOR_EXPORT_PROTO_WRITER_H

#include <cstdint>
#include <span>
#include <string>
#include <string_view>

namespace spoor::exporter {

class ProtoMessage {
 public:
  // uint32/uint64/int32/int64/enum/bool fields: negative int64 values take 10
  // bytes, as protobuf's int64 does (not sint64's zigzag).
  void add_varint(uint32_t field, uint64_t value);
  void add_int(uint32_t field, int64_t value) { add_varint(field, static_cast<uint64_t>(value)); }
  void add_fixed64(uint32_t field, uint64_t value);
  // string, bytes and embedded message fields.
  void add_bytes(uint32_t field, std::string_view bytes);
  void add_message(uint32_t field, const ProtoMessage& message) { add_bytes(field, message.bytes()); }
  // A packed repeated varint field (proto3's default for repeated scalars;
  // proto2 parsers accept it for repeated varints too). Writes nothing for
  // an empty list.
  void add_packed(uint32_t field, std::span<const uint64_t> values);

  const std::string& bytes() const { return bytes_; }
  bool empty() const { return bytes_.empty(); }

 private:
  void put_varint(uint64_t value);
  void put_tag(uint32_t field, uint32_t wire_type) { put_varint((uint64_t{field} << 3) | wire_type); }
  std::string bytes_;
};

}  // namespace spoor::exporter

#endif  // SPOOR_EXPORT_PROTO_WRITER_H
