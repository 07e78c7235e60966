// What `spoor record -p` accepts: the shim's providers, by full name
// ("Spoor.Heap"), by the short name the help text uses ("heap"), by ID, or
// "*". A name no provider of the shim answers to is an error, not a trace
// with nothing in it: the shim enables its own providers only, so "hep" or
// an application's provider would match nothing and record nothing.
#ifndef SPOOR_PRELOAD_RECORD_PROVIDER_SPEC_H
#define SPOOR_PRELOAD_RECORD_PROVIDER_SPEC_H

#include <optional>
#include <string>
#include <string_view>

namespace spoor::record {

// The spec the shim gets (SPOOR_PROVIDERS): every name resolved to the
// provider's full name, keywords and levels as given. Spoor.Stack and
// Spoor.Process lead it unless the spec is "*": without the stacks and
// the module map (ModuleLoad) no event's stack can be read, so asking for
// Spoor.Heap alone must not leave every allocation "stack not in the
// trace". Later rules win, so a rule the user gives for either still
// applies. nullopt with *error naming the bad part and the names accepted.
std::optional<std::string> shim_provider_spec(std::string_view spec, std::string* error);

}  // namespace spoor::record

#endif  // SPOOR_PRELOAD_RECORD_PROVIDER_SPEC_H
