// The protobuf wire format, byte for byte against the encoding guide's examples.
#include "proto_writer.h"

#include <gtest/gtest.h>

namespace {

using spoor::exporter::ProtoMessage;

std::string hex(const std::string& bytes) {
  static const char* digits = "0123456789abcdef";
  std::string out;
  for (unsigned char c : bytes) out += {digits[c >> 4], digits[c & 15], ' '};
  if (!out.empty()) out.pop_back();
  return out;
}

TEST(ProtoWriter, VarintsTakeSevenBitsPerByteLowFirst) {
  ProtoMessage m;
  m.add_varint(1, 150);
  EXPECT_EQ(hex(m.bytes()), "08 96 01");
  ProtoMessage big;
  big.add_varint(2, 300);
  EXPECT_EQ(hex(big.bytes()), "10 ac 02");
}

TEST(ProtoWriter, NegativeInt64TakesTenBytes) {
  ProtoMessage m;
  m.add_int(1, -1);
  EXPECT_EQ(hex(m.bytes()), "08 ff ff ff ff ff ff ff ff ff 01");
}

TEST(ProtoWriter, StringsAndMessagesAreLengthDelimited) {
  ProtoMessage inner;
  inner.add_varint(1, 150);
  ProtoMessage m;
  m.add_bytes(2, "testing");
  m.add_message(3, inner);
  EXPECT_EQ(hex(m.bytes()), "12 07 74 65 73 74 69 6e 67 1a 03 08 96 01");
}

TEST(ProtoWriter, FieldNumbersAbove15TakeTwoTagBytes) {
  ProtoMessage m;
  m.add_varint(60, 1);
  EXPECT_EQ(hex(m.bytes()), "e0 03 01");
}

TEST(ProtoWriter, PackedRepeatedVarintsShareOneLength) {
  ProtoMessage m;
  const uint64_t values[] = {3, 270, 86942};
  m.add_packed(4, values);
  EXPECT_EQ(hex(m.bytes()), "22 06 03 8e 02 9e a7 05");
  ProtoMessage empty;
  empty.add_packed(4, {});
  EXPECT_TRUE(empty.empty());
}

TEST(ProtoWriter, Fixed64IsEightBytesLittleEndian) {
  ProtoMessage m;
  m.add_fixed64(1, 0x0102030405060708);
  EXPECT_EQ(hex(m.bytes()), "09 08 07 06 05 04 03 02 01");
}

}  // namespace
