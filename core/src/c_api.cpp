// The C API (spoor/spoor.h) on top of the C++ core.
#include "spoor/spoor.h"

#include <new>

#include "spoor/event.h"

namespace spoor {
namespace {

// A fixed pool of providers for C callers; names are compared byte-wise.
alignas(Provider) unsigned char g_pool[SPOOR_MAX_PROVIDERS][sizeof(Provider)];
Atomic<uint32_t> g_pool_used{0};
std::atomic<Provider*> g_published[SPOOR_MAX_PROVIDERS] = {};

bool same_name(const char* a, const char* b) {
  while (*a && *a == *b) ++a, ++b;
  return *a == *b;
}

// 0 for the variable fields: string, blob.
uint32_t fixed_size(uint8_t type) { return format::fixed_field_size(type, sizeof(void*)); }

int write_values(const spoor_event_desc* ev, const ActivityId* activity, const ActivityId* related,
                 const spoor_value* values, uint32_t count) {
  if (ev == nullptr || count != ev->field_count || (count && values == nullptr)) return -1;
  if (!ev->provider->enabled(ev->level, ev->keywords)) return 0;
  uint32_t size = 0;
  for (uint32_t i = 0; i < count; ++i) {
    const uint32_t fixed = fixed_size(ev->fields[i].type);
    if (values[i].data == nullptr && values[i].size != 0) return -1;
    if (fixed != 0) {
      if (values[i].size != fixed || values[i].data == nullptr) return -1;
      size += fixed;
    } else {
      size += VarField::size_of(values[i].size);
    }
  }
  write_record(*ev, activity, related, size, [&](uint8_t* p) {
    for (uint32_t i = 0; i < count; ++i) {
      if (fixed_size(ev->fields[i].type) != 0) {
        __builtin_memcpy(p, values[i].data, values[i].size);
        p += values[i].size;
      } else {
        VarField::store_bytes(p, values[i].data, values[i].size);
      }
    }
  });
  return 0;
}

}  // namespace
}  // namespace spoor

extern "C" spoor_provider* spoor_provider_register(const char* name) {
  using namespace spoor;
  if (name == nullptr) return nullptr;
  for (auto& entry : g_published) {
    Provider* p = entry.load(std::memory_order_acquire);
    if (p != nullptr && same_name(p->name(), name)) return p;
  }
  const uint32_t slot = g_pool_used.fetch_add(1, std::memory_order_relaxed);
  if (slot >= SPOOR_MAX_PROVIDERS) return nullptr;
  auto* p = new (g_pool[slot]) Provider(name);
  if (register_provider(*p) == Status::out_of_space) return nullptr;
  g_published[slot].store(p, std::memory_order_release);
  return p;
}

extern "C" int spoor_event_enabled(const spoor_event_desc* event) {
  return event && event->provider && event->provider->enabled(event->level, event->keywords);
}

extern "C" int spoor_event_write(const spoor_event_desc* event, const spoor_value* values,
                                 uint32_t count) {
  return spoor::write_values(event, nullptr, nullptr, values, count);
}

extern "C" int spoor_event_write_activity(const spoor_event_desc* event, const spoor_guid* activity,
                                          const spoor_guid* related, const spoor_value* values,
                                          uint32_t count) {
  return spoor::write_values(event, reinterpret_cast<const spoor::ActivityId*>(activity),
                             reinterpret_cast<const spoor::ActivityId*>(related), values, count);
}
