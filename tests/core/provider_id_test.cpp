// Provider IDs are derived from names exactly as ETW derives them.
#include <gtest/gtest.h>

#include "spoor/guid.h"
#include "spoor/host/enable_spec.h"

namespace {

using spoor::host::guid_text;

TEST(ProviderId, MatchesEtwForDocumentedName) {
  // The TraceLogging documentation's example provider.
  EXPECT_EQ(guid_text(spoor::provider_id_from_name("MyCompany.MyComponent")),
            "ce5fa4ea-ab00-5402-8b76-9f76ac858fb5");
}

TEST(ProviderId, IsCaseInsensitiveLikeEtw) {
  EXPECT_EQ(spoor::provider_id_from_name("mycompany.mycomponent"),
            spoor::provider_id_from_name("MyCompany.MyComponent"));
  EXPECT_NE(spoor::provider_id_from_name("MyCompany.Other"),
            spoor::provider_id_from_name("MyCompany.MyComponent"));
}

TEST(ProviderId, IsComputedAtCompileTime) {
  constexpr spoor::Guid id = spoor::provider_id_from_name("Spoor.Demo");
  static_assert(!id.is_zero());
  EXPECT_EQ((id.bytes[6] >> 4), 5);  // name-based SHA-1 version nibble
}

}  // namespace
