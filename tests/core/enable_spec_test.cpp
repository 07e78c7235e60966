// ETW-style enable specs: Name[:KEYWORDS[:LEVEL]], comma-separated.
#include <gtest/gtest.h>

#include "spoor/guid.h"
#include "spoor/host/enable_spec.h"

namespace {

using spoor::host::parse_enable_spec;
using spoor::host::state_for;

const spoor::Guid kAppId = spoor::provider_id_from_name("Contoso.App");

TEST(EnableSpec, NameOnlyEnablesEverything) {
  auto rules = parse_enable_spec("Contoso.App", nullptr);
  ASSERT_TRUE(rules);
  auto s = state_for(*rules, "Contoso.App", kAppId);
  EXPECT_TRUE(s.enabled);
  EXPECT_EQ(s.level, 0);
  EXPECT_EQ(s.keywords_any, ~0ull);
  EXPECT_EQ(s.keywords_all, 0u);
  EXPECT_FALSE(state_for(*rules, "Other", spoor::provider_id_from_name("Other")).enabled);
}

TEST(EnableSpec, KeywordsAndLevel) {
  auto rules = parse_enable_spec("Contoso.App:0x30:warning", nullptr);
  ASSERT_TRUE(rules);
  auto s = state_for(*rules, "contoso.app", kAppId);  // names match case-insensitively
  EXPECT_TRUE(s.enabled);
  EXPECT_EQ(s.level, 3);
  EXPECT_EQ(s.keywords_any, 0x30u);
}

TEST(EnableSpec, NumericLevelAndDecimalKeywords) {
  auto rules = parse_enable_spec("Contoso.App:48:4", nullptr);
  ASSERT_TRUE(rules);
  auto s = state_for(*rules, "Contoso.App", kAppId);
  EXPECT_EQ(s.level, 4);
  EXPECT_EQ(s.keywords_any, 48u);
}

TEST(EnableSpec, MatchAllMask) {
  auto rules = parse_enable_spec("Contoso.App:0x3&0x1:5", nullptr);
  ASSERT_TRUE(rules);
  auto s = state_for(*rules, "Contoso.App", kAppId);
  EXPECT_EQ(s.keywords_any, 0x3u);
  EXPECT_EQ(s.keywords_all, 0x1u);
}

TEST(EnableSpec, StarAndLaterRulesWin) {
  auto rules = parse_enable_spec("*:0:info, Contoso.App::error", nullptr);
  ASSERT_TRUE(rules);
  EXPECT_EQ(state_for(*rules, "Contoso.App", kAppId).level, 2);
  auto other = state_for(*rules, "Other", spoor::provider_id_from_name("Other"));
  EXPECT_TRUE(other.enabled);
  EXPECT_EQ(other.level, 4);
}

TEST(EnableSpec, ByProviderId) {
  const std::string id = "{" + spoor::host::guid_text(kAppId) + "}";
  auto rules = parse_enable_spec(id + ":0x1:5", nullptr);
  ASSERT_TRUE(rules);
  EXPECT_TRUE(state_for(*rules, "Renamed", kAppId).enabled);
  EXPECT_FALSE(state_for(*rules, "Contoso.App", spoor::provider_id_from_name("X")).enabled);
}

TEST(EnableSpec, ErrorsNameTheBadPart) {
  struct Bad {
    const char* spec;
    const char* mentions;
  } cases[] = {
      {"", "empty"},
      {"App:0x1:loud", "loud"},
      {"App:zz:4", "zz"},
      {"App:0x1:9", "9"},
      {"App,,Other", "empty entry"},
      {":0x1:4", "missing provider name"},
      {"App:1:2:3", "too many"},
  };
  for (const Bad& b : cases) {
    std::string error;
    EXPECT_FALSE(parse_enable_spec(b.spec, &error)) << b.spec;
    EXPECT_NE(error.find(b.mentions), std::string::npos) << b.spec << " -> " << error;
  }
}

TEST(EnableSpec, GuidTextRoundTrip) {
  auto g = spoor::host::parse_guid("ce5fa4ea-ab00-5402-8b76-9f76ac858fb5");
  ASSERT_TRUE(g);
  EXPECT_EQ(spoor::host::guid_text(*g), "ce5fa4ea-ab00-5402-8b76-9f76ac858fb5");
  EXPECT_FALSE(spoor::host::parse_guid("ce5fa4ea-ab00-5402-8b76-9f76ac858fbZ"));
}

}  // namespace
