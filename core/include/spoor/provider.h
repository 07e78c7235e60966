// Providers and their enable state.
//
// A provider is a named source of events with a 128-bit ID. Whether its
// events are written is decided by its enable state (a level and two keyword
// masks) with exactly ETW's semantics:
//
//   enabled(event) = provider enabled
//                    && event.level <= enabled level   (0 enables every level)
//                    && (event.keywords == 0
//                        || ((event.keywords & any) != 0
//                            && (event.keywords & all) == all))
//
// The enable state of every registered provider lives in a control block
// (spoor/control.h) that holds no pointers, so another process can map it
// and change levels and keywords while the program runs.
#ifndef SPOOR_PROVIDER_H
#define SPOOR_PROVIDER_H

#include <stddef.h>
#include <stdint.h>

#include <atomic>

#include "spoor/atomic.h"
#include "spoor/config.h"
#include "spoor/guid.h"
#include "spoor/status.h"

namespace spoor {

enum class Level : uint8_t {
  always = 0,    // ETW's LogAlways
  critical = 1,
  error = 2,
  warning = 3,
  info = 4,
  verbose = 5,
};

// One provider's enable state, as it sits in the control block. 40 bytes
// (24 on a single-core target: there no controller in another process
// looks for a provider by ID, so the slot does not repeat it; RAM counts).
struct ProviderControl {
#if !SPOOR_SINGLE_CORE
  uint8_t id[16];                        // the provider's ID, so a controller can find it
#endif
  // 0: disabled. Otherwise events with level < level_plus1 pass. ETW's trick:
  // enabling at level 0 stores 256, so every level passes with one compare.
  Atomic<uint32_t> level_plus1;
  uint32_t generation;                   // bumped by whoever changes the state
  Atomic<uint64_t> keywords_any;
  Atomic<uint64_t> keywords_all;
};
#if !SPOOR_SINGLE_CORE
static_assert(sizeof(ProviderControl) == 40);
#endif
// Atomic<T> is lock-free, or masks interrupts on a single-core target
// (spoor/atomic.h): never a call into libatomic.

// The state every provider points at before it is registered: disabled.
extern const ProviderControl g_disabled_control;

// Computes level_plus1 for an enable level (0 = all levels).
constexpr uint32_t level_plus1_for(uint8_t enable_level) {
  return enable_level == 0 ? 256u : uint32_t{enable_level} + 1u;
}

// ETW's keyword test, given an enabled provider.
constexpr bool keywords_match(uint64_t event_keywords, uint64_t any, uint64_t all) {
  return event_keywords == 0 || ((event_keywords & any) != 0 && (event_keywords & all) == all);
}

class Provider {
 public:
  // A provider whose ID is derived from its name (ETW's scheme), at compile time.
  explicit constexpr Provider(const char* name) : name_(name), id_(provider_id_from_name(name)) {}
  constexpr Provider(const char* name, const Guid& id) : name_(name), id_(id) {}
  Provider(const Provider&) = delete;
  Provider& operator=(const Provider&) = delete;

  constexpr const char* name() const { return name_; }
  constexpr const Guid& id() const { return id_; }
  // 1-based index in the registry; 0 until registered.
  uint16_t index() const { return index_; }

  // Is an event with this level and these keywords enabled right now?
  // Cost when the provider is off or the level filters the event: one
  // pointer load, one load of the level word and one branch (~0.5 ns).
  SPOOR_ALWAYS_INLINE bool enabled(uint8_t level, uint64_t keywords) const {
    const ProviderControl* c = control_.load(std::memory_order_relaxed);
    if (SPOOR_LIKELY(c->level_plus1.load(std::memory_order_relaxed) <= level)) return false;
    if (keywords == 0) return true;
    return keywords_match(keywords, c->keywords_any.load(std::memory_order_relaxed),
                          c->keywords_all.load(std::memory_order_relaxed));
  }

  // Where this provider's enable state lives (the registry moves it when a
  // session relocates the control block).
  const ProviderControl* control() const { return control_.load(std::memory_order_acquire); }

 private:
  friend class Registry;
#if !SPOOR_SINGLE_CORE
  friend Status relocate_control_block(void* memory, size_t size);
#endif
  const char* name_;
  Guid id_;
  uint16_t index_ = 0;
  std::atomic<const ProviderControl*> control_{&g_disabled_control};
};

// Registers a provider so that sessions can enable it. Call once per
// provider, before its first event (SPOOR_DEFINE_PROVIDER does it at static
// initialization in hosted programs; firmware calls it from main).
// Returns ok, already_exists (registered before; harmless), or out_of_space
// when SPOOR_MAX_PROVIDERS providers are registered. Thread-safe, lock-free.
Status register_provider(Provider& provider);

}  // namespace spoor

// Defines a provider (in one .cpp file) and registers it during static
// initialization. Other files declare it with SPOOR_DECLARE_PROVIDER.
// With SPOOR_COMPILE_OUT both expand to nothing: events made by SPOOR_EVENT
// then never name their provider.
#if !SPOOR_COMPILE_OUT
#define SPOOR_DEFINE_PROVIDER(var, name)                                          \
  constinit ::spoor::Provider var{name};                                          \
  [[maybe_unused]] static const ::spoor::Status var##_spoor_registered_ =         \
      ::spoor::register_provider(var)
#define SPOOR_DECLARE_PROVIDER(var) extern ::spoor::Provider var
#else
#define SPOOR_DEFINE_PROVIDER(var, name) static_assert(true)
#define SPOOR_DECLARE_PROVIDER(var) static_assert(true)
#endif

#endif  // SPOOR_PROVIDER_H
