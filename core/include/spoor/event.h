// Typed events: compile-time descriptors and the write path.
//
//   SPOOR_DEFINE_PROVIDER(g_app, "Contoso.App");
//   SPOOR_EVENT(kRequest, g_app,
//               (spoor::EventInfo{.name = "Request", .id = 1, .level = spoor::Level::info,
//                                 .opcode = spoor::Opcode::start}),
//               spoor::Field<uint32_t>{"status"}, spoor::Field<uint32_t>{"bytes"},
//               spoor::Field<spoor::Str>{"path"});
//   ...
//   kRequest.write(200, 512, "index");
//
// A disabled write costs the provider's enable check (one pointer load, one
// level load, one branch). An enabled write reserves, copies the fields and
// commits, all inline: no call on the fast path.
#ifndef SPOOR_EVENT_H
#define SPOOR_EVENT_H

#include <stddef.h>
#include <stdint.h>

#include <atomic>
#include <type_traits>

#include "spoor/config.h"
#include "spoor/event_descriptor.h"
#include "spoor/format.h"
#include "spoor/guid.h"
#include "spoor/provider.h"
#include "spoor/ring.h"

namespace spoor {

static_assert(__BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__, "records are stored in host order");

enum class Opcode : uint8_t {
  info = format::kOpInfo, start = format::kOpStart, stop = format::kOpStop,
  dc_start = format::kOpDcStart, dc_stop = format::kOpDcStop, extension = format::kOpExtension,
  reply = format::kOpReply, resume = format::kOpResume, suspend = format::kOpSuspend,
  send = format::kOpSend, receive = format::kOpReceive,
};

struct EventInfo {
  const char* name = "";
  uint16_t id = 0;
  uint8_t version = 0;
  Level level = Level::info;
  uint64_t keywords = 0;
  Opcode opcode = Opcode::info;
  uint16_t task = 0;
};

// Longest string or blob value stored; longer ones are cut to this length.
inline constexpr uint32_t kMaxValueBytes = 16383;  // fits a 2-byte ULEB128 length

// A UTF-8 string value (no terminator needed when the size is given).
struct Str {
  const char* data;
  uint32_t size;
  constexpr Str(const char* s) : data(s), size(s ? length(s) : 0) {}  // NOLINT: implicit by design
  constexpr Str(const char* s, size_t n) : data(s), size(static_cast<uint32_t>(n)) {}
  static constexpr uint32_t length(const char* s) {
#if __STDC_HOSTED__
    if (!__builtin_is_constant_evaluated()) return static_cast<uint32_t>(__builtin_strlen(s));
#endif
    uint32_t n = 0;
    while (s[n]) ++n;
    return n;
  }
};

// A byte-blob value.
struct Blob {
  const void* data;
  uint32_t size;
};

// A pointer value, stored with the program's pointer width.
struct Ptr {
  const void* value;
  constexpr Ptr(const void* p) : value(p) {}  // NOLINT: implicit by design
};

// How each field type is described and stored.
template <class T, class Enable = void>
struct FieldTraits;

template <class T>
struct FixedField {
  using arg = T;
  static constexpr uint32_t size(T) { return sizeof(T); }
  SPOOR_ALWAYS_INLINE static void store(uint8_t*& p, T v) {
    __builtin_memcpy(p, &v, sizeof(T));
    p += sizeof(T);
  }
};

#define SPOOR_FIXED_FIELD(T, CODE) \
  template <> struct FieldTraits<T> : FixedField<T> { static constexpr uint8_t type = format::CODE; }
SPOOR_FIXED_FIELD(uint8_t, kFieldU8);
SPOOR_FIXED_FIELD(uint16_t, kFieldU16);
SPOOR_FIXED_FIELD(uint32_t, kFieldU32);
SPOOR_FIXED_FIELD(uint64_t, kFieldU64);
SPOOR_FIXED_FIELD(int8_t, kFieldI8);
SPOOR_FIXED_FIELD(int16_t, kFieldI16);
SPOOR_FIXED_FIELD(int32_t, kFieldI32);
SPOOR_FIXED_FIELD(int64_t, kFieldI64);
SPOOR_FIXED_FIELD(float, kFieldF32);
SPOOR_FIXED_FIELD(double, kFieldF64);
#undef SPOOR_FIXED_FIELD

template <>
struct FieldTraits<bool> {
  static constexpr uint8_t type = format::kFieldBool;
  using arg = bool;
  static constexpr uint32_t size(bool) { return 1; }
  SPOOR_ALWAYS_INLINE static void store(uint8_t*& p, bool v) { *p++ = v ? 1 : 0; }
};

template <>
struct FieldTraits<Ptr> {
  static constexpr uint8_t type = format::kFieldPointer;
  using arg = Ptr;
  static constexpr uint32_t size(Ptr) { return sizeof(void*); }
  SPOOR_ALWAYS_INLINE static void store(uint8_t*& p, Ptr v) {
    __builtin_memcpy(p, &v.value, sizeof(void*));
    p += sizeof(void*);
  }
};

template <>
struct FieldTraits<ActivityId> {
  static constexpr uint8_t type = format::kFieldActivityId;
  using arg = const ActivityId&;
  static constexpr uint32_t size(const ActivityId&) { return 16; }
  SPOOR_ALWAYS_INLINE static void store(uint8_t*& p, const ActivityId& v) {
    __builtin_memcpy(p, v.bytes, 16);
    p += 16;
  }
};

// Strings and blobs: ULEB128 length (1 byte below 128, else 2), then bytes.
struct VarField {
  static constexpr uint32_t clamp(uint32_t n) { return n > kMaxValueBytes ? kMaxValueBytes : n; }
  static constexpr uint32_t size_of(uint32_t n) { return clamp(n) + (clamp(n) < 128 ? 1 : 2); }
  SPOOR_ALWAYS_INLINE static void store_bytes(uint8_t*& p, const void* data, uint32_t n) {
    n = clamp(n);
    if (n < 128) {
      *p++ = static_cast<uint8_t>(n);
    } else {
      *p++ = static_cast<uint8_t>(0x80 | (n & 0x7F));
      *p++ = static_cast<uint8_t>(n >> 7);
    }
    if (n != 0) __builtin_memcpy(p, data, n);  // data may be null when n is 0
    p += n;
  }
};

template <>
struct FieldTraits<Str> {
  static constexpr uint8_t type = format::kFieldString;
  using arg = Str;
  static constexpr uint32_t size(Str v) { return VarField::size_of(v.size); }
  SPOOR_ALWAYS_INLINE static void store(uint8_t*& p, Str v) { VarField::store_bytes(p, v.data, v.size); }
};

template <>
struct FieldTraits<Blob> {
  static constexpr uint8_t type = format::kFieldBlob;
  using arg = Blob;
  static constexpr uint32_t size(Blob v) { return VarField::size_of(v.size); }
  SPOOR_ALWAYS_INLINE static void store(uint8_t*& p, Blob v) { VarField::store_bytes(p, v.data, v.size); }
};

// Whether a field type has a fixed size (and which): the small-event path
// packs such fields into registers.
template <class T, class Enable = void>
struct FixedSize {
  static constexpr bool value = false;
  static constexpr uint32_t bytes = 0;
};
template <class T>
struct FixedSize<T, std::enable_if_t<std::is_arithmetic_v<T>>> {
  static constexpr bool value = true;
  static constexpr uint32_t bytes = sizeof(T);
  // The value's bytes as an unsigned integer of its size.
  SPOOR_ALWAYS_INLINE static auto bits(T v) {
    if constexpr (std::is_same_v<T, bool>) {
      return static_cast<uint8_t>(v ? 1 : 0);
    } else if constexpr (sizeof(T) == 1) {
      return __builtin_bit_cast(uint8_t, v);
    } else if constexpr (sizeof(T) == 2) {
      return __builtin_bit_cast(uint16_t, v);
    } else if constexpr (sizeof(T) == 4) {
      return __builtin_bit_cast(uint32_t, v);
    } else {
      return __builtin_bit_cast(uint64_t, v);
    }
  }
};

// Names a field of type T in an event declaration.
template <class T>
struct Field {
  const char* name;
};

// Registers an event descriptor on its first enabled write and returns its
// key (1..SPOOR_MAX_EVENTS), or 0 when the table is full (the write is then
// counted as lost). Lock-free; two threads racing may both register, and the
// loser's slot stays as a duplicate descriptor.
uint16_t register_event(const spoor_event_desc& event);

// Counts an event that could not be written for a reason other than a full
// ring (no key left); it shows as lost on the current CPU.
void count_lost_event();

#if SPOOR_SINGLE_CORE
// A small event's first write (its key is still 0): registers it, then
// writes as ring_write_small does. Out of line, so that the call site's
// fast path is a key load and a tail call, with nothing to save around a
// possible registration.
SPOOR_NOINLINE void write_small_registering(uint32_t lo, uint32_t hi, const spoor_event_desc& event,
                                            uint32_t size);
#endif

// Writes one record: the shared tail of every typed and C write.
// `fill(p)` stores the fields; `body` is their size.
template <class Fill>
SPOOR_ALWAYS_INLINE void write_record(const spoor_event_desc& ev, const ActivityId* activity,
                                      const ActivityId* related, uint32_t fields_size, Fill fill) {
  uint16_t key = __atomic_load_n(ev.key, __ATOMIC_RELAXED);
  if (SPOOR_UNLIKELY(key == 0)) {
    key = register_event(ev);
    if (key == 0) {
      count_lost_event();
      return;
    }
  }
  const uint32_t ids = (activity ? 16u : 0u) + (related ? 16u : 0u);
  if (activity) key |= format::kKeyHasActivity;
  if (related) key |= format::kKeyHasRelated;
#if SPOOR_SINGLE_CORE
  // One call claims the record (spoor/ring_masked.h); the stores stay here.
  Claim claim;
  uint8_t* p = ring_claim(key, ids + fields_size, &claim);
  if (SPOOR_UNLIKELY(p == nullptr)) return;
#else
  Reservation r;
  if (SPOOR_UNLIKELY(!ring_reserve(ids + fields_size, &r))) return;
  uint8_t* p = r.body;
#endif
  if (activity) {
    __builtin_memcpy(p, activity->bytes, 16);
    p += 16;
  }
  if (related) {
    __builtin_memcpy(p, related->bytes, 16);
    p += 16;
  }
  fill(p);
#if SPOOR_SINGLE_CORE
  ring_publish(claim);
#else
  ring_commit(r, key);
#endif
}

// Carries an event's provider, level and keywords into its constructor, so
// that class template argument deduction can name the whole Event type.
template <Provider* P, uint8_t kLevel, uint64_t kKeywords>
struct EventTag {};

// A typed event. The provider, level and keywords are template arguments so
// that the enable check compiles to loads of the provider's state compared
// with constants; SPOOR_EVENT fills them in from the EventInfo.
template <Provider* P, uint8_t kLevel, uint64_t kKeywords, class... T>
class Event : public spoor_event_desc {
 public:
  constexpr Event(EventTag<P, kLevel, kKeywords>, uint16_t& key_storage, const EventInfo& info,
                  Field<T>... declared)
      : spoor_event_desc{P, &key_storage, info.name, info.keywords, info.id, info.task,
                         info.version, static_cast<uint8_t>(info.level),
                         static_cast<uint8_t>(info.opcode), 0, field_table_,
                         static_cast<uint16_t>(sizeof...(T))},
        field_table_{spoor_field_desc{FieldTraits<T>::type, declared.name}...} {}
  Event(const Event&) = delete;  // the descriptor points at its own field table
  Event& operator=(const Event&) = delete;

  // Is this event enabled right now? The same cost as a disabled write.
  SPOOR_ALWAYS_INLINE static bool enabled() {
#if SPOOR_COMPILE_OUT
    return false;
#else
    return P->enabled(kLevel, kKeywords);
#endif
  }

  SPOOR_ALWAYS_INLINE void write(typename FieldTraits<T>::arg... values) const {
#if !SPOOR_COMPILE_OUT
    if (!enabled()) return;
    emit(nullptr, nullptr, values...);
#else
    ((void)values, ...);
#endif
  }

  // With an activity ID and optionally the related (parent) activity ID.
  SPOOR_ALWAYS_INLINE void write_activity(const ActivityId& activity, const ActivityId* related,
                                          typename FieldTraits<T>::arg... values) const {
#if !SPOOR_COMPILE_OUT
    if (!enabled()) return;
    emit(&activity, related, values...);
#else
    (void)activity;
    (void)related;
    ((void)values, ...);
#endif
  }

 private:
  // Fixed-size fields of at most 8 bytes in all (the common firmware event).
  static constexpr bool kSmallFixed = sizeof...(T) > 0 && (... && FixedSize<T>::value) &&
                                      (0u + ... + FixedSize<T>::bytes) <= 8;

  SPOOR_ALWAYS_INLINE void emit(const ActivityId* activity, const ActivityId* related,
                                typename FieldTraits<T>::arg... values) const {
#if SPOOR_SINGLE_CORE
    if constexpr (kSmallFixed) {
      if (activity == nullptr && related == nullptr) {
        emit_small(values...);
        return;
      }
    }
#endif
    const uint32_t size = (0u + ... + FieldTraits<T>::size(values));
    write_record(*this, activity, related, size,
                 [&](uint8_t* p) {
                   (FieldTraits<T>::store(p, values), ...);
                   (void)p;
                 });
  }

#if SPOOR_SINGLE_CORE
  // The fields go to ring_write_small in two registers: one call per event.
  SPOOR_ALWAYS_INLINE void emit_small(typename FieldTraits<T>::arg... values) const {
    // The fields' bytes as shifts into one 64-bit value, which stays in
    // registers (a byte array would go through the stack).
    uint64_t packed = 0;
    uint32_t shift = 0;
    ((packed |= uint64_t{FixedSize<T>::bits(values)} << shift, shift += 8 * sizeof(T)), ...);
    constexpr uint32_t kSize =
        (format::kShortRecordHeaderSize + (0u + ... + FixedSize<T>::bytes) + 1u) & ~1u;
    const auto lo = static_cast<uint32_t>(packed);
    const auto hi = static_cast<uint32_t>(packed >> 32);
    const uint32_t k = __atomic_load_n(this->key, __ATOMIC_RELAXED);
    if (SPOOR_UNLIKELY(k == 0)) {
      write_small_registering(lo, hi, *this, kSize);
      return;
    }
    ring_write_small(lo, hi, k, kSize);
  }
#endif

  spoor_field_desc field_table_[sizeof...(T) > 0 ? sizeof...(T) : 1];
};

// SPOOR_EVENT names the event's type from a tag (the deduction guide below)
// and instantiates it before defining the object: GCC 12 puts a constexpr
// object whose definition is what instantiates its class into .data, not
// .rodata, and that is RAM, which firmware counts.
template <Provider* P, uint8_t kLevel, uint64_t kKeywords, class... T>
Event(EventTag<P, kLevel, kKeywords>, uint16_t&, const EventInfo&, Field<T>...)
    -> Event<P, kLevel, kKeywords, T...>;

}  // namespace spoor

#if !SPOOR_COMPILE_OUT
// Defines an event (inline, so it may sit in a header) together with the key
// storage its first write fills in.
#define SPOOR_EVENT(NAME, PROVIDER, INFO, ...)                                              \
  inline constinit uint16_t NAME##_spoor_key = 0;                                          \
  inline constexpr ::spoor::EventInfo NAME##_spoor_info = INFO;                            \
  using NAME##_spoor_type = decltype(::spoor::Event{                                       \
      ::spoor::EventTag<&PROVIDER, static_cast<uint8_t>(NAME##_spoor_info.level),          \
                        NAME##_spoor_info.keywords>{},                                      \
      NAME##_spoor_key, NAME##_spoor_info __VA_OPT__(, ) __VA_ARGS__});                     \
  static_assert(sizeof(NAME##_spoor_type) != 0, "instantiated before the object");         \
  inline constexpr NAME##_spoor_type NAME{                                                 \
      ::spoor::EventTag<&PROVIDER, static_cast<uint8_t>(NAME##_spoor_info.level),          \
                        NAME##_spoor_info.keywords>{},                                      \
      NAME##_spoor_key, NAME##_spoor_info __VA_OPT__(, ) __VA_ARGS__}
#else
namespace spoor {
// What an event is when tracing is compiled out: nothing. Arguments are
// still evaluated (as with ETW's macros), then discarded.
struct NullEvent {
  static constexpr bool enabled() { return false; }
  template <class... A>
  constexpr void write(A&&...) const {}
  template <class... A>
  constexpr void write_activity(A&&...) const {}
};
}  // namespace spoor
#define SPOOR_EVENT(NAME, PROVIDER, INFO, ...) inline constexpr ::spoor::NullEvent NAME {}
#endif

#endif  // SPOOR_EVENT_H
