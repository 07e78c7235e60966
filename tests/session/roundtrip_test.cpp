// Every field type, written through a real session to a file and read back
// with the reader: values, metadata, activity IDs, times on CLOCK_MONOTONIC.
#include <gtest/gtest.h>
#include <time.h>

#include <cmath>
#include <cstring>
#include <string>

#include "session_test_util.h"
#include "spoor/event.h"
#include "spoor/host/enable_spec.h"
#include "spoor/host/session.h"

namespace {

namespace reader = spoor::reader;

SPOOR_DEFINE_PROVIDER(g_roundtrip, "Spoor.Test.RoundTrip");

SPOOR_EVENT(kEveryType, g_roundtrip,
            (spoor::EventInfo{.name = "EveryType", .id = 42, .version = 3, .level = spoor::Level::warning,
                              .keywords = 0x8000000000000010ull, .opcode = spoor::Opcode::start, .task = 9}),
            spoor::Field<uint8_t>{"u8"}, spoor::Field<uint16_t>{"u16"}, spoor::Field<uint32_t>{"u32"},
            spoor::Field<uint64_t>{"u64"}, spoor::Field<int8_t>{"i8"}, spoor::Field<int16_t>{"i16"},
            spoor::Field<int32_t>{"i32"}, spoor::Field<int64_t>{"i64"}, spoor::Field<float>{"f32"},
            spoor::Field<double>{"f64"}, spoor::Field<bool>{"flag"}, spoor::Field<spoor::Str>{"text"},
            spoor::Field<spoor::Blob>{"bytes"}, spoor::Field<spoor::Ptr>{"where"},
            spoor::Field<spoor::ActivityId>{"other_activity"});

SPOOR_EVENT(kNoFields, g_roundtrip, (spoor::EventInfo{.name = "NoFields", .id = 43}), );

int64_t monotonic_ns() {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return ts.tv_sec * 1000000000ll + ts.tv_nsec;
}

spoor::ActivityId activity(uint8_t seed) {
  spoor::ActivityId id;
  for (int i = 0; i < 16; ++i) id.bytes[i] = static_cast<uint8_t>(seed * 17 + i);
  return id;
}

template <class T>
T as(const reader::Event& e, const char* name) {
  const reader::Value* v = e.field(name);
  EXPECT_NE(v, nullptr) << name;
  if (!v) return T{};
  EXPECT_TRUE(std::holds_alternative<T>(*v)) << name;
  return std::holds_alternative<T>(*v) ? std::get<T>(*v) : T{};
}

TEST(RoundTrip, EveryFieldTypeSurvivesSessionFileAndReader) {
  const std::string path = spoor::test::temp_trace_path("roundtrip");
  std::string error;
  auto session = spoor::host::Session::start({.output_path = path, .providers = "Spoor.Test.RoundTrip"}, &error);
  ASSERT_TRUE(session) << error;

  const std::string long_text(300, 'x');  // needs a 2-byte ULEB128 length
  const uint8_t blob[] = {0, 1, 2, 0xFF, 0x80};
  int local = 0;
  const int64_t before = monotonic_ns();
  kEveryType.write(0xAB, 0xBEEF, 0xDEADBEEF, 0x0123456789ABCDEFull, -5, -3000, -70000, INT64_MIN, 1.5f,
                   -2.25e300, true, "hello", spoor::Blob{blob, sizeof blob}, &local, activity(9));
  kEveryType.write_activity(activity(1), nullptr, 0, 0, 0, UINT64_MAX, INT8_MIN, INT16_MAX, INT32_MIN,
                            INT64_MAX, -0.0f, 0.0, false, spoor::Str(long_text.data(), long_text.size()),
                            spoor::Blob{nullptr, 0}, nullptr, activity(0));
  const spoor::ActivityId parent = activity(2);
  kNoFields.write_activity(activity(3), &parent);
  kNoFields.write();
  const int64_t after = monotonic_ns();
  const spoor::host::SessionStats stats = session->stop();
  EXPECT_EQ(stats.events, 4u);
  EXPECT_EQ(stats.lost, 0u);

  auto trace = reader::Trace::open(path);
  ASSERT_TRUE(trace) << trace.error();
  EXPECT_FALSE(trace->damage());
  const spoor::test::ReadBack back = spoor::test::read_all(trace.value());
  ASSERT_EQ(back.events.size(), 4u);
  EXPECT_EQ(back.damages, 0u);

  const reader::Event& a = back.events[0];
  ASSERT_NE(a.descriptor, nullptr);
  EXPECT_EQ(a.provider->name, "Spoor.Test.RoundTrip");
  EXPECT_EQ(a.provider->guid.to_string(), spoor::host::guid_text(g_roundtrip.id()));
  EXPECT_EQ(a.descriptor->name, "EveryType");
  EXPECT_EQ(a.descriptor->id, 42);
  EXPECT_EQ(a.descriptor->version, 3);
  EXPECT_EQ(a.descriptor->level, 3);
  EXPECT_EQ(a.descriptor->keywords, 0x8000000000000010ull);
  EXPECT_EQ(a.descriptor->opcode, 1);
  EXPECT_EQ(a.descriptor->task, 9);
  ASSERT_EQ(a.descriptor->fields.size(), 15u);
  EXPECT_EQ(a.descriptor->fields[11].name, "text");
  EXPECT_EQ(a.descriptor->fields[11].type, spoor::format::kFieldString);
  EXPECT_EQ(a.pid, static_cast<uint32_t>(getpid()));
  EXPECT_EQ(a.tid, static_cast<uint32_t>(gettid()));
  EXPECT_FALSE(a.activity_id);

  EXPECT_EQ(as<uint64_t>(a, "u8"), 0xABu);
  EXPECT_EQ(as<uint64_t>(a, "u16"), 0xBEEFu);
  EXPECT_EQ(as<uint64_t>(a, "u32"), 0xDEADBEEFu);
  EXPECT_EQ(as<uint64_t>(a, "u64"), 0x0123456789ABCDEFull);
  EXPECT_EQ(as<int64_t>(a, "i8"), -5);
  EXPECT_EQ(as<int64_t>(a, "i16"), -3000);
  EXPECT_EQ(as<int64_t>(a, "i32"), -70000);
  EXPECT_EQ(as<int64_t>(a, "i64"), INT64_MIN);
  EXPECT_EQ(as<double>(a, "f32"), 1.5);
  EXPECT_EQ(as<double>(a, "f64"), -2.25e300);
  EXPECT_EQ(as<bool>(a, "flag"), true);
  EXPECT_EQ(as<std::string_view>(a, "text"), "hello");
  const reader::Blob bytes = as<reader::Blob>(a, "bytes");
  ASSERT_EQ(bytes.bytes.size(), sizeof blob);
  EXPECT_EQ(std::memcmp(bytes.bytes.data(), blob, sizeof blob), 0);
  EXPECT_EQ(as<reader::Pointer>(a, "where").address, reinterpret_cast<uint64_t>(&local));
  EXPECT_EQ(as<reader::Guid>(a, "other_activity").bytes[0], activity(9).bytes[0]);
  EXPECT_GE(a.time_ns, before - 50000);  // calibration error is far below 50 us
  EXPECT_LE(a.time_ns, after + 50000);

  const reader::Event& b = back.events[1];
  ASSERT_TRUE(b.activity_id);
  EXPECT_EQ(std::memcmp(b.activity_id->bytes.data(), activity(1).bytes, 16), 0);
  EXPECT_FALSE(b.related_activity_id);
  EXPECT_EQ(as<uint64_t>(b, "u64"), UINT64_MAX);
  EXPECT_EQ(as<int64_t>(b, "i8"), INT8_MIN);
  EXPECT_EQ(as<int64_t>(b, "i16"), INT16_MAX);
  EXPECT_EQ(as<int64_t>(b, "i32"), INT32_MIN);
  EXPECT_EQ(as<int64_t>(b, "i64"), INT64_MAX);
  EXPECT_TRUE(std::signbit(as<double>(b, "f32")));
  EXPECT_EQ(as<std::string_view>(b, "text"), long_text);
  EXPECT_EQ(as<reader::Blob>(b, "bytes").bytes.size(), 0u);
  EXPECT_EQ(as<reader::Pointer>(b, "where").address, 0u);
  EXPECT_GE(b.time_ns, a.time_ns);

  const reader::Event& c = back.events[2];
  EXPECT_EQ(c.descriptor->name, "NoFields");
  EXPECT_TRUE(c.fields.empty());
  ASSERT_TRUE(c.activity_id && c.related_activity_id);
  EXPECT_EQ(std::memcmp(c.related_activity_id->bytes.data(), parent.bytes, 16), 0);
  EXPECT_FALSE(back.events[3].activity_id);
}

}  // namespace
