// Provider and event registration, and the control block that holds every
// provider's enable state. Fixed-size tables, lock-free publication.
#include "spoor/registry.h"

#include "spoor/control.h"
#include "spoor/event.h"

namespace spoor {

// Read only (flash on a microcontroller): nothing ever enables it.
constinit const ProviderControl g_disabled_control{};

namespace {

#if !SPOOR_SINGLE_CORE
// The control block used until a session relocates it to shared memory.
struct StaticControlBlock {
  ControlBlock header;
  ProviderControl more[SPOOR_MAX_PROVIDERS - 1];
};
constinit StaticControlBlock g_static_control{
    {kControlMagic, kControlVersion, SPOOR_MAX_PROVIDERS, {0}, {0, 0}, {}}, {}};

constinit std::atomic<ControlBlock*> g_control{&g_static_control.header};

constinit std::atomic<Registry::ProviderHook> g_hook{nullptr};
constinit std::atomic<void*> g_hook_context{nullptr};

void copy_id(uint8_t (&dst)[16], const Guid& id) {
  for (int i = 0; i < 16; ++i) dst[i] = id.bytes[i];
}

#else
// One core, no session: the enable state is one slot per provider, with no
// block header, no IDs and no registration hook (bench/RESULTS.md, "Firmware
// core": RAM).
constinit ProviderControl g_slots[SPOOR_MAX_PROVIDERS] = {};
#endif

// Slots are claimed with fetch_add and published with a release store of the
// pointer, so a reader that sees a non-null entry sees the object behind it.
constinit Atomic<uint32_t> g_provider_next{0};
constinit std::atomic<Provider*> g_providers[SPOOR_MAX_PROVIDERS] = {};

// Event keys start at 1 (0 in a key word means "not registered yet"); key k
// is described by g_events[k - 1].
constinit Atomic<uint32_t> g_event_next{1};
constinit std::atomic<const spoor_event_desc*> g_events[SPOOR_MAX_EVENTS] = {};

}  // namespace

Status register_provider(Provider& provider) { return Registry::add(provider); }

Status Registry::add(Provider& provider) {
  if (provider.index_ != 0) return Status::already_exists;
  const uint32_t i = g_provider_next.fetch_add(1, std::memory_order_relaxed);
  if (i >= SPOOR_MAX_PROVIDERS) {
    g_provider_next.fetch_sub(1, std::memory_order_relaxed);
    return Status::out_of_space;
  }
#if !SPOOR_SINGLE_CORE
  ControlBlock& cb = *g_control.load(std::memory_order_acquire);
  ProviderControl& slot = cb.slots()[i];
  copy_id(slot.id, provider.id());
#else
  ProviderControl& slot = g_slots[i];
#endif
  provider.index_ = static_cast<uint16_t>(i + 1);
  provider.control_.store(&slot, std::memory_order_release);
  g_providers[i].store(&provider, std::memory_order_release);
#if !SPOOR_SINGLE_CORE
  uint32_t count = cb.count.load(std::memory_order_relaxed);
  while (count < i + 1 &&
         !cb.count.compare_exchange_weak(count, i + 1, std::memory_order_release)) {
  }
  if (ProviderHook hook = g_hook.load(std::memory_order_acquire))
    hook(provider, g_hook_context.load(std::memory_order_relaxed));
#endif
  return Status::ok;
}

uint32_t Registry::provider_count() {
  uint32_t n = g_provider_next.load(std::memory_order_acquire);
  return n > SPOOR_MAX_PROVIDERS ? SPOOR_MAX_PROVIDERS : n;
}

Provider* Registry::provider(uint32_t index) {
  if (index == 0 || index > SPOOR_MAX_PROVIDERS) return nullptr;
  return g_providers[index - 1].load(std::memory_order_acquire);
}

uint32_t Registry::event_key_limit() {
  uint32_t n = g_event_next.load(std::memory_order_acquire);
  return n > SPOOR_MAX_EVENTS + 1 ? SPOOR_MAX_EVENTS + 1 : n;
}

const spoor_event_desc* Registry::event(uint32_t key) {
  if (key == 0 || key > SPOOR_MAX_EVENTS) return nullptr;
  return g_events[key - 1].load(std::memory_order_acquire);
}

#if !SPOOR_SINGLE_CORE
void Registry::set_provider_hook(ProviderHook hook, void* context) {
  g_hook_context.store(context, std::memory_order_relaxed);
  g_hook.store(hook, std::memory_order_release);
}
#endif

#if !SPOOR_SINGLE_CORE
namespace {
// Stores `key` in the program's key slot if it still holds 0 (acq_rel) and
// returns the key in effect. GCC before 13 has no inline 16-bit
// compare-exchange on RISC-V: it calls libatomic, which bare-metal
// toolchains do not ship. There the exchange is done, as libatomic does it,
// on the aligned 32-bit word that holds the slot; the neighbouring bytes are
// written back unchanged.
uint16_t publish_key(uint16_t* slot, uint16_t key) {
#if defined(__riscv) && !defined(__clang__) && __GNUC__ < 13
  using AliasedWord = uint32_t __attribute__((may_alias));
  const auto address = reinterpret_cast<uintptr_t>(slot);
  auto* word = reinterpret_cast<AliasedWord*>(address & ~uintptr_t{3});
  const unsigned shift = (address & 2) * 8;  // RISC-V is little-endian
  uint32_t seen = __atomic_load_n(word, __ATOMIC_ACQUIRE);
  for (;;) {
    const auto current = static_cast<uint16_t>(seen >> shift);
    if (current != 0) return current;
    if (__atomic_compare_exchange_n(word, &seen, seen | (uint32_t{key} << shift), true,
                                    __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE))
      return key;
  }
#else
  uint16_t expected = 0;
  if (atomic_cas(slot, &expected, key)) return key;
  return expected;
#endif
}
}  // namespace
#endif

uint16_t register_event(const spoor_event_desc& event) {
  // An event of a provider that was never registered cannot be described.
  if (event.provider == nullptr || event.provider->index() == 0) return 0;
  const uint32_t key = g_event_next.fetch_add(1, std::memory_order_relaxed);
  if (key > SPOOR_MAX_EVENTS) {
    g_event_next.fetch_sub(1, std::memory_order_relaxed);
    return 0;
  }
  // Publish the descriptor before any record can carry its key: the record's
  // release commit orders this store before the drainer reads the key.
  g_events[key - 1].store(&event, std::memory_order_release);
#if !SPOOR_SINGLE_CORE
  // If another thread registered it first, its key wins; our slot stays a duplicate.
  return publish_key(event.key, static_cast<uint16_t>(key));
#else
  // One core: an interrupt that registered the same event meanwhile took
  // another slot; the last key stored wins, and both slots describe the
  // event, so records with either key decode the same. No compare-exchange.
  __atomic_store_n(event.key, static_cast<uint16_t>(key), __ATOMIC_RELAXED);
  return static_cast<uint16_t>(key);
#endif
}

#if !SPOOR_SINGLE_CORE
void count_lost_event() {
  const RingView& v = g_ring;
  if (v.cpu_count == 0) return;
  v.cpus[spoor_port_cpu() % v.cpu_count].lost.fetch_add(1, std::memory_order_relaxed);
}
#else
// One core: no modulo (IrqAtomic's fetch_add masks interrupts around it).
void count_lost_event() {
  const RingView& v = g_ring;
  if (v.subbuf_mask == 0) return;  // no ring installed
  v.cpus[0].lost.fetch_add(1, std::memory_order_relaxed);
}
#endif

#if SPOOR_SINGLE_CORE
void write_small_registering(uint32_t lo, uint32_t hi, const spoor_event_desc& event,
                             uint32_t size) {
  const uint16_t key = register_event(event);
  if (key == 0) {
    count_lost_event();
    return;
  }
  ring_write_small(lo, hi, key, size);
}
#endif

#if !SPOOR_SINGLE_CORE
ControlBlock& control_block() { return *g_control.load(std::memory_order_acquire); }

Status relocate_control_block(void* memory, size_t size) {
  if (memory == nullptr || size < ControlBlock::bytes_for(SPOOR_MAX_PROVIDERS) ||
      reinterpret_cast<uintptr_t>(memory) % alignof(ControlBlock) != 0)
    return Status::invalid_argument;
  ControlBlock& from = control_block();
  auto* to = static_cast<ControlBlock*>(memory);
  to->magic = kControlMagic;
  to->version = kControlVersion;
  to->capacity = SPOOR_MAX_PROVIDERS;
  to->reserved[0] = to->reserved[1] = 0;
  for (uint32_t i = 0; i < SPOOR_MAX_PROVIDERS; ++i) {
    ProviderControl& s = from.slots()[i];
    ProviderControl& d = to->slots()[i];
    for (int k = 0; k < 16; ++k) d.id[k] = s.id[k];
    d.generation = s.generation;
    d.keywords_any.store(s.keywords_any.load(std::memory_order_relaxed), std::memory_order_relaxed);
    d.keywords_all.store(s.keywords_all.load(std::memory_order_relaxed), std::memory_order_relaxed);
    d.level_plus1.store(s.level_plus1.load(std::memory_order_relaxed), std::memory_order_relaxed);
  }
  to->count.store(from.count.load(std::memory_order_acquire), std::memory_order_release);
  g_control.store(to, std::memory_order_release);
  // Registrations racing with this move land in `from`; the loop below then
  // moves them too, since it reads the provider table after the switch.
  for (uint32_t i = 0; i < SPOOR_MAX_PROVIDERS; ++i) {
    Provider* p = g_providers[i].load(std::memory_order_acquire);
    if (p == nullptr) continue;
    ProviderControl& d = to->slots()[i];
    for (int k = 0; k < 16; ++k) d.id[k] = p->id().bytes[k];
    p->control_.store(&d, std::memory_order_release);
  }
  return Status::ok;
}
#endif

#if SPOOR_SINGLE_CORE
namespace {
// A store made while interrupts are masked: a plain one where the word is
// an IrqAtomic (no second mask), a relaxed atomic one where it is lock-free.
template <class A, class T>
void store_under_mask(A& word, T value) {
  if constexpr (requires { word.under_mask(); }) word.under_mask() = value;
  else word.store(value, std::memory_order_relaxed);
}
}  // namespace
#endif

void apply_enable_state(ProviderControl& slot, const EnableState& state) {
#if SPOOR_SINGLE_CORE
  // One core: the whole change at once with interrupts masked (the 64-bit
  // keyword words are not single stores there), so no order is needed.
  IrqMask mask;
  slot.generation++;
  uint32_t level = 0;
  if (state.enabled) {
    store_under_mask(slot.keywords_any, state.keywords_any);
    store_under_mask(slot.keywords_all, state.keywords_all);
    level = level_plus1_for(state.level);
  }
  slot.level_plus1.store(level, std::memory_order_relaxed);
#else
  slot.generation++;
  if (!state.enabled) {
    slot.level_plus1.store(0, std::memory_order_release);
    return;
  }
  // Keywords first, then the level that turns them on, so a writer that sees
  // the provider enabled sees (at worst) the previous masks, never garbage.
  slot.keywords_any.store(state.keywords_any, std::memory_order_relaxed);
  slot.keywords_all.store(state.keywords_all, std::memory_order_relaxed);
  slot.level_plus1.store(level_plus1_for(state.level), std::memory_order_release);
#endif
}

}  // namespace spoor
