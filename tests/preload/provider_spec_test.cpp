// What `spoor record -p` hands the shim (preload/record/provider_spec.h),
// read back the way the shim reads it: parse_enable_spec, then state_for
// each of its providers.
#include <gtest/gtest.h>

#include <string>

#include "provider_spec.h"
#include "spoor/guid.h"
#include "spoor/host/enable_spec.h"

namespace {

using spoor::record::shim_provider_spec;

struct Shim {
  std::vector<spoor::host::EnableRule> rules;
  spoor::EnableState state(const char* name) const {
    return spoor::host::state_for(rules, name, spoor::provider_id_from_name(name));
  }
};

Shim shim_for(const std::string& spec) {
  std::string error;
  const auto resolved = shim_provider_spec(spec, &error);
  EXPECT_TRUE(resolved) << spec << ": " << error;
  Shim shim;
  if (!resolved) return shim;
  auto rules = spoor::host::parse_enable_spec(*resolved, &error);
  EXPECT_TRUE(rules) << *resolved << ": " << error;
  if (rules) shim.rules = *rules;
  return shim;
}

TEST(ProviderSpec, ShortNamesInAnyCaseAndPluralsNameTheShimsProviders) {
  const Shim shim = shim_for("heap, IO:0x3:4, threads");
  EXPECT_TRUE(shim.state("Spoor.Heap").enabled);
  EXPECT_EQ(shim.state("Spoor.Heap").keywords_any, ~0ull);
  EXPECT_TRUE(shim.state("Spoor.IO").enabled);
  EXPECT_EQ(shim.state("Spoor.IO").keywords_any, 0x3u);
  EXPECT_EQ(shim.state("Spoor.IO").level, 4);
  EXPECT_TRUE(shim.state("Spoor.Thread").enabled);
  EXPECT_FALSE(shim.state("Spoor.Samples").enabled);
}

TEST(ProviderSpec, StacksAndTheModuleMapComeWithAnyProvider) {
  const Shim shim = shim_for("Spoor.Heap");
  EXPECT_TRUE(shim.state("Spoor.Stack").enabled);
  EXPECT_TRUE(shim.state("Spoor.Process").enabled);
  EXPECT_FALSE(shim.state("Spoor.IO").enabled);
  // A rule of the user's for either still applies: later rules win.
  EXPECT_EQ(shim_for("heap,process:0x0:2").state("Spoor.Process").level, 2);
}

TEST(ProviderSpec, IdsAndTheStarPassThroughWithKeywordsIntact) {
  const std::string heap_id = "{" + spoor::host::guid_text(spoor::provider_id_from_name("Spoor.Heap")) + "}";
  const Shim by_id = shim_for(heap_id + ":0x5&0x1:3");
  EXPECT_TRUE(by_id.state("Spoor.Heap").enabled);
  EXPECT_EQ(by_id.state("Spoor.Heap").keywords_any, 0x5u);
  EXPECT_EQ(by_id.state("Spoor.Heap").keywords_all, 0x1u);
  EXPECT_EQ(by_id.state("Spoor.Heap").level, 3);
  const Shim every = shim_for("*");
  for (const char* name : {"Spoor.Heap", "Spoor.IO", "Spoor.Thread", "Spoor.Process", "Spoor.Samples", "Spoor.Stack"})
    EXPECT_TRUE(every.state(name).enabled) << name;
}

TEST(ProviderSpec, ANameNoProviderHasIsAnErrorListingTheNames) {
  std::string error;
  EXPECT_FALSE(shim_provider_spec("heap,hep", &error));
  EXPECT_NE(error.find("'hep'"), std::string::npos) << error;
  EXPECT_NE(error.find("samples (Spoor.Samples)"), std::string::npos) << error;
  EXPECT_FALSE(shim_provider_spec("MyApp.Provider", &error)) << "the shim enables its own providers only";
  EXPECT_FALSE(shim_provider_spec("{00000000-0000-0000-0000-000000000001}", &error));
  EXPECT_NE(error.find("{00000000-0000-0000-0000-000000000001}"), std::string::npos) << error;
  EXPECT_FALSE(shim_provider_spec("heap:0x1:loud", &error));
  EXPECT_NE(error.find("loud"), std::string::npos) << error;
}

}  // namespace
