// The C API, driven from a C translation unit (c_api_usage.c).
#include <gtest/gtest.h>

#include "ring_test_util.h"
#include "spoor/registry.h"
#include "spoor/spoor.h"

extern "C" {
spoor_provider* c_register(void);
int c_enabled(void);
int c_write(uint32_t status, const char* path);
int c_write_activity(uint32_t status, const char* path, const spoor_guid* activity);
int c_write_wrong_count(void);
int c_write_wrong_size(void);
}

namespace {

TEST(CApi, RegistersWritesAndValidates) {
  spoor_provider* p = c_register();
  ASSERT_NE(p, nullptr);
  EXPECT_EQ(spoor_provider_register("Spoor.Test.C"), p) << "same name, same provider";
  EXPECT_EQ(p->id(), spoor::provider_id_from_name("Spoor.Test.C"));
  EXPECT_EQ(c_enabled(), 0);
  spoor::test::TestRing ring(1, 4096, 4);
  spoor::test::enable_all(*p);
  EXPECT_EQ(c_enabled(), 1);

  EXPECT_EQ(c_write(404, "/missing"), 0);
  spoor_guid activity;
  for (int i = 0; i < 16; ++i) activity.bytes[i] = static_cast<uint8_t>(i + 1);
  EXPECT_EQ(c_write_activity(200, "/", &activity), 0);
  EXPECT_EQ(c_write_wrong_count(), -1);
  EXPECT_EQ(c_write_wrong_size(), -1);

  spoor::test::DrainResult got;
  spoor::test::drain(ring.view(), got, true);
  ASSERT_TRUE(got.ok) << got.problem;
  ASSERT_EQ(got.records.size(), 2u) << "invalid writes write nothing";
  const spoor_event_desc* desc = spoor::Registry::event(got.records[0].key);
  ASSERT_NE(desc, nullptr);
  EXPECT_STREQ(desc->name, "Request");
  EXPECT_EQ(desc->id, 7);
  // u32 404, then ULEB128 8 and "/missing".
  const auto& b0 = got.records[0].body;
  ASSERT_GE(b0.size(), 13u);
  uint32_t status;
  std::memcpy(&status, b0.data(), 4);
  EXPECT_EQ(status, 404u);
  EXPECT_EQ(b0[4], 8);
  EXPECT_EQ(std::string(b0.begin() + 5, b0.begin() + 13), "/missing");
  // The activity ID comes first in the second record's body.
  const auto& b1 = got.records[1].body;
  ASSERT_GE(b1.size(), 16u + 4 + 2);
  EXPECT_EQ(std::memcmp(b1.data(), activity.bytes, 16), 0);
  std::memcpy(&status, b1.data() + 16, 4);
  EXPECT_EQ(status, 200u);
  spoor::apply_enable_state(*const_cast<spoor::ProviderControl*>(p->control()), {});
}

}  // namespace
