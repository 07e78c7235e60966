// Resolves `spoor record -p` to the shim's providers (see provider_spec.h).
#include "provider_spec.h"

#include <cstdio>

#include "spoor/guid.h"
#include "spoor/host/enable_spec.h"

namespace spoor::record {
namespace {

struct ShimProvider {
  const char* short_name;
  const char* name;
};

// The providers of libspoor-preload.so (preload/shim: attach.cpp,
// stack_table.cpp, modules.cpp, io_hooks.cpp, thread_hooks.cpp,
// samples.cpp), in the order the help text lists them.
constexpr ShimProvider kShimProviders[] = {
    {"heap", "Spoor.Heap"},       {"io", "Spoor.IO"},       {"thread", "Spoor.Thread"},
    {"process", "Spoor.Process"}, {"samples", "Spoor.Samples"}, {"stack", "Spoor.Stack"},
};

const ShimProvider* find_by_name(std::string_view name) {
  for (const ShimProvider& p : kShimProviders) {
    if (host::provider_names_equal(name, p.name) || host::provider_names_equal(name, p.short_name)) return &p;
    // The plurals a user may type: "threads", "stacks".
    if (name.size() == std::string_view(p.short_name).size() + 1 && (name.back() == 's' || name.back() == 'S') &&
        host::provider_names_equal(name.substr(0, name.size() - 1), p.short_name))
      return &p;
  }
  return nullptr;
}

const ShimProvider* find_by_id(const Guid& id) {
  for (const ShimProvider& p : kShimProviders)
    if (provider_id_from_name(p.name) == id) return &p;
  return nullptr;
}

std::string accepted_names() {
  std::string text;
  for (const ShimProvider& p : kShimProviders)
    text += (text.empty() ? "" : ", ") + std::string(p.short_name) + " (" + p.name + ")";
  return text + ", or * for all";
}

// One rule back as spec text, with the provider's full name.
std::string rule_text(const host::EnableRule& rule, const char* name) {
  std::string text = rule.all ? "*" : name;
  char part[64];
  std::snprintf(part, sizeof part, ":0x%llx", static_cast<unsigned long long>(rule.state.keywords_any));
  text += part;
  if (rule.state.keywords_all != 0) {
    std::snprintf(part, sizeof part, "&0x%llx", static_cast<unsigned long long>(rule.state.keywords_all));
    text += part;
  }
  return text + ":" + std::to_string(rule.state.level);
}

}  // namespace

std::optional<std::string> shim_provider_spec(std::string_view spec, std::string* error) {
  const auto rules = host::parse_enable_spec(spec, error);
  if (!rules) return std::nullopt;
  std::string resolved;
  bool every = false;
  for (const host::EnableRule& rule : *rules) {
    const ShimProvider* p = nullptr;
    if (!rule.all) {
      p = rule.id ? find_by_id(*rule.id) : find_by_name(rule.name);
      if (p == nullptr) {
        const std::string what = rule.id ? "{" + host::guid_text(*rule.id) + "}" : "'" + rule.name + "'";
        if (error)
          *error = "-p: spoor record has no provider " + what + "; its providers are " + accepted_names();
        return std::nullopt;
      }
    }
    every = every || rule.all;
    resolved += (resolved.empty() ? "" : ",") + rule_text(rule, p ? p->name : nullptr);
  }
  if (every) return resolved;
  return "Spoor.Stack,Spoor.Process," + resolved;
}

}  // namespace spoor::record
