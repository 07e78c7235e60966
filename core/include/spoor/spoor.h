/* Spoor's C API: register providers, describe events, write them.
 *
 *   static spoor_provider* app;
 *   static uint16_t request_key;
 *   static const spoor_field_desc request_fields[] = {
 *       {SPOOR_FIELD_U32, "status"}, {SPOOR_FIELD_STRING, "path"}};
 *   static spoor_event_desc request = SPOOR_EVENT_DESC(NULL, &request_key,
 *       "Request", 1, SPOOR_LEVEL_INFO, 0x1, SPOOR_OPCODE_START, request_fields, 2);
 *
 *   app = spoor_provider_register("Contoso.App");
 *   request.provider = app;   // before the first write
 *   if (spoor_event_enabled(&request)) {
 *     spoor_value v[2] = {SPOOR_VALUE(status), SPOOR_STRING(path)};
 *     spoor_event_write(&request, v, 2);
 *   }
 */
#ifndef SPOOR_SPOOR_H
#define SPOOR_SPOOR_H

#include <stddef.h>
#include <stdint.h>

#include "spoor/event_descriptor.h"

#ifdef __cplusplus
extern "C" {
#endif

enum {
  SPOOR_LEVEL_ALWAYS = 0, SPOOR_LEVEL_CRITICAL = 1, SPOOR_LEVEL_ERROR = 2,
  SPOOR_LEVEL_WARNING = 3, SPOOR_LEVEL_INFO = 4, SPOOR_LEVEL_VERBOSE = 5,
};
enum {
  SPOOR_OPCODE_INFO = 0, SPOOR_OPCODE_START = 1, SPOOR_OPCODE_STOP = 2,
};
enum {
  SPOOR_FIELD_U8 = 1, SPOOR_FIELD_U16 = 2, SPOOR_FIELD_U32 = 3, SPOOR_FIELD_U64 = 4,
  SPOOR_FIELD_I8 = 5, SPOOR_FIELD_I16 = 6, SPOOR_FIELD_I32 = 7, SPOOR_FIELD_I64 = 8,
  SPOOR_FIELD_F32 = 9, SPOOR_FIELD_F64 = 10, SPOOR_FIELD_BOOL = 11, SPOOR_FIELD_STRING = 12,
  SPOOR_FIELD_BLOB = 13, SPOOR_FIELD_POINTER = 14, SPOOR_FIELD_ACTIVITY_ID = 15,
};

/* One field value: its bytes. Fixed-size fields give exactly their size;
 * strings and blobs any length (cut at 16383 bytes). */
typedef struct spoor_value {
  const void* data;
  uint32_t size;
} spoor_value;

typedef struct spoor_guid {
  uint8_t bytes[16];
} spoor_guid;

#define SPOOR_VALUE(lvalue) {&(lvalue), (uint32_t)sizeof(lvalue)}
#define SPOOR_STRING(cstr) {(cstr), (uint32_t)strlen(cstr)}
#define SPOOR_EVENT_DESC(provider, key_ptr, name, id, level, keywords, opcode, fields, count) \
  {(provider), (key_ptr), (name), (keywords), (id), 0, 0, (level), (opcode), 0, (fields), (count)}

/* Registers a provider named `name` (its ID derived from the name as ETW
 * does) from a fixed pool; `name` must outlive the program's tracing.
 * Returns the provider, or NULL when the pool (SPOOR_MAX_PROVIDERS) is full
 * or name is NULL. Registering a registered name again returns the same
 * provider (two threads racing to register one name may get two). */
spoor_provider* spoor_provider_register(const char* name);

/* Is the event enabled right now? */
int spoor_event_enabled(const spoor_event_desc* event);

/* Writes an event with `count` values (one per field, in order). Returns 0
 * when written, filtered out, or dropped because the ring is full (drops
 * are counted as lost), -1 when the values do not match the descriptor
 * (count, or the size of a fixed-size field). */
int spoor_event_write(const spoor_event_desc* event, const spoor_value* values, uint32_t count);

/* The same with an activity ID and an optional related activity ID. */
int spoor_event_write_activity(const spoor_event_desc* event, const spoor_guid* activity,
                               const spoor_guid* related, const spoor_value* values,
                               uint32_t count);

#ifdef __cplusplus
}
#endif
#endif /* SPOOR_SPOOR_H */
