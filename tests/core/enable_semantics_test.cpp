// ETW's level and keyword rules, table-driven, through Provider::enabled.
#include <gtest/gtest.h>

#include "spoor/control.h"
#include "spoor/provider.h"

namespace {

spoor::Provider g_provider{"Spoor.Test.EnableSemantics"};
const bool g_registered = spoor::register_provider(g_provider) == spoor::Status::ok;

struct Case {
  const char* what;
  bool provider_enabled;
  uint8_t enable_level;     // 0 = all levels
  uint64_t any, all;
  uint8_t event_level;
  uint64_t event_keywords;
  bool expected;
};

const Case kCases[] = {
    {"disabled provider writes nothing", false, 5, ~0ull, 0, 0, 0, false},
    {"disabled provider, level-0 event", false, 0, ~0ull, 0, 0, 0, false},
    {"level equal passes", true, 4, ~0ull, 0, 4, 0, true},
    {"level below passes", true, 4, ~0ull, 0, 2, 0, true},
    {"level above filtered", true, 4, ~0ull, 0, 5, 0, false},
    {"LogAlways event passes any enabled level", true, 1, ~0ull, 0, 0, 0, true},
    {"enable level 0 means every level", true, 0, ~0ull, 0, 5, 0, true},
    {"enable level 0, verbose event with keywords", true, 0, 0x1, 0, 5, 0x1, true},
    {"event without keywords ignores masks", true, 5, 0x10, 0x10, 4, 0, true},
    {"any: one common bit passes", true, 5, 0x6, 0, 4, 0x2, true},
    {"any: no common bit filtered", true, 5, 0x6, 0, 4, 0x1, false},
    {"all: every required bit present passes", true, 5, 0x7, 0x3, 4, 0x3, true},
    {"all: missing a required bit filtered", true, 5, 0x7, 0x3, 4, 0x1, false},
    {"all: required bits present but none in any", true, 5, 0x4, 0x1, 4, 0x1, false},
    {"high keyword bit", true, 5, 0x8000000000000000ull, 0, 4, 0x8000000000000000ull, true},
};

TEST(EnableSemantics, MatchEtwTable) {
  ASSERT_TRUE(g_registered);
  auto& slot = *const_cast<spoor::ProviderControl*>(g_provider.control());
  for (const Case& c : kCases) {
    spoor::apply_enable_state(slot, {c.provider_enabled, c.enable_level, c.any, c.all});
    EXPECT_EQ(g_provider.enabled(c.event_level, c.event_keywords), c.expected) << c.what;
  }
  spoor::apply_enable_state(slot, {});
  EXPECT_FALSE(g_provider.enabled(0, 0));
}

TEST(EnableSemantics, UnregisteredProviderIsDisabled) {
  spoor::Provider lonely{"Spoor.Test.NeverRegistered"};
  EXPECT_FALSE(lonely.enabled(0, 0));
  EXPECT_EQ(lonely.index(), 0);
}

TEST(EnableSemantics, RegisteringTwiceIsReported) {
  ASSERT_TRUE(g_registered);
  EXPECT_EQ(spoor::register_provider(g_provider), spoor::Status::already_exists);
}

TEST(EnableSemantics, ControlBlockSlotCarriesProviderId) {
  ASSERT_TRUE(g_registered);
  const spoor::ProviderControl* slot = g_provider.control();
  for (int i = 0; i < 16; ++i) EXPECT_EQ(slot->id[i], g_provider.id().bytes[i]);
  EXPECT_EQ(&spoor::control_block().slots()[g_provider.index() - 1], slot);
}

}  // namespace
