// The registry: every provider and event descriptor a program has
// registered, in fixed-size tables (no heap). Sessions and the firmware dump
// read it to write metadata; nothing on the write fast path touches it.
#ifndef SPOOR_REGISTRY_H
#define SPOOR_REGISTRY_H

#include <stdint.h>

#include "spoor/event_descriptor.h"
#include "spoor/provider.h"

namespace spoor {

class Registry {
 public:
  // Providers registered so far (published ones: every index below is filled).
  static uint32_t provider_count();
  // The provider with 1-based index `index`, or null if out of range.
  static Provider* provider(uint32_t index);

  // One past the highest event key handed out. Keys 1..count-1 may still be
  // being filled in by a racing registration: event() returns null for those.
  static uint32_t event_key_limit();
  // The descriptor of event key `key`, or null.
  static const spoor_event_desc* event(uint32_t key);

#if !SPOOR_SINGLE_CORE
  // Called after each provider registration (a hosted session applies its
  // enable rules there). One hook; null removes it. (Not on a single-core
  // target, which runs no session.)
  using ProviderHook = void (*)(Provider& provider, void* context);
  static void set_provider_hook(ProviderHook hook, void* context);
#endif

  // Internal: called by register_provider.
  static Status add(Provider& provider);
};

}  // namespace spoor

#endif  // SPOOR_REGISTRY_H
