// Enable specs: which providers a session turns on, at which level and with
// which keywords, in the form ETW tools use:
//
//   Name[:KEYWORDS[:LEVEL]][,Name...]
//
//   Name      a provider name (case-insensitive, as ETW), a provider ID in
//             braces or plain ({ce5fa4ea-ab00-5402-8b76-9f76ac858fb5}), or *
//             for every provider
//   KEYWORDS  the match-any keyword mask, hex (0x...) or decimal; empty or 0
//             means all keywords. `ANY&ALL` sets the match-all mask too
//             (0x3&0x1: any of bits 0-1, and bit 0 must be set)
//   LEVEL     0-5 or always/critical/error/warning/info/verbose; empty or 0
//             means every level
//
// Later rules win over earlier ones for the providers they match.
#ifndef SPOOR_HOST_ENABLE_SPEC_H
#define SPOOR_HOST_ENABLE_SPEC_H

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "spoor/control.h"
#include "spoor/guid.h"

namespace spoor::host {

struct EnableRule {
  std::string name;          // empty when matching by id
  std::optional<Guid> id;    // set when the spec named an ID
  bool all = false;          // "*"
  EnableState state;
};

// Parses a spec. Returns the rules, or nullopt with *error naming the bad
// part ("level 'loud' in 'App:0x1:loud' is not 0-5 or a level name").
std::optional<std::vector<EnableRule>> parse_enable_spec(std::string_view spec, std::string* error);

// The enable state the rules give one provider: the last matching rule, or
// disabled when none matches.
EnableState state_for(const std::vector<EnableRule>& rules, std::string_view name, const Guid& id);

// Provider names compare as ETW compares them: ASCII case ignored.
bool provider_names_equal(std::string_view a, std::string_view b);

// Parses canonical GUID text, with or without braces.
std::optional<Guid> parse_guid(std::string_view text);
// Canonical lower-case text of a GUID, no braces.
std::string guid_text(const Guid& id);

}  // namespace spoor::host

#endif  // SPOOR_HOST_ENABLE_SPEC_H
