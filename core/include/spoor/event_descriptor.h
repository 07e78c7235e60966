/* Event descriptors: the compile-time metadata of an event, shared by the
 * C++ API (spoor/event.h) and the C API (spoor/spoor.h). Plain C layout. */
#ifndef SPOOR_EVENT_DESCRIPTOR_H
#define SPOOR_EVENT_DESCRIPTOR_H

#include <stdint.h>

#ifdef __cplusplus
namespace spoor { class Provider; }
typedef spoor::Provider spoor_provider;
extern "C" {
#else
typedef struct spoor_provider spoor_provider;
#endif

/* One field: its type (a spoor::format::FieldType value) and name. */
typedef struct spoor_field_desc {
  uint8_t type;
  const char* name;
} spoor_field_desc;

/* One event. `key` points at a uint16_t the program owns (0 until the event
 * is first written, then the key its records carry); it is read and
 * written with atomic builtins. */
typedef struct spoor_event_desc {
  spoor_provider* provider;
  uint16_t* key;
  const char* name;
  uint64_t keywords;
  uint16_t id;
  uint16_t task;
  uint8_t version;
  uint8_t level;   /* 0 always, 1 critical, 2 error, 3 warning, 4 info, 5 verbose */
  uint8_t opcode;  /* ETW's: 0 info, 1 start, 2 stop, ... */
  uint8_t reserved;
  const spoor_field_desc* fields;
  uint16_t field_count;
} spoor_event_desc;

#ifdef __cplusplus
}
#endif
#endif /* SPOOR_EVENT_DESCRIPTOR_H */
