/* A C program's use of the API, compiled as C. */
#include <string.h>

#include "spoor/spoor.h"

static uint16_t request_key;
static const spoor_field_desc request_fields[] = {{SPOOR_FIELD_U32, "status"},
                                                  {SPOOR_FIELD_STRING, "path"}};
static spoor_event_desc request = SPOOR_EVENT_DESC(0, &request_key, "Request", 7, SPOOR_LEVEL_INFO,
                                                   0x1, SPOOR_OPCODE_START, request_fields, 2);

spoor_provider* c_register(void) {
  request.provider = spoor_provider_register("Spoor.Test.C");
  return request.provider;
}

int c_enabled(void) { return spoor_event_enabled(&request); }

int c_write(uint32_t status, const char* path) {
  spoor_value v[2] = {SPOOR_VALUE(status), SPOOR_STRING(path)};
  return spoor_event_write(&request, v, 2);
}

int c_write_activity(uint32_t status, const char* path, const spoor_guid* activity) {
  spoor_value v[2] = {SPOOR_VALUE(status), SPOOR_STRING(path)};
  return spoor_event_write_activity(&request, activity, 0, v, 2);
}

int c_write_wrong_count(void) {
  uint32_t status = 1;
  spoor_value v[1] = {SPOOR_VALUE(status)};
  return spoor_event_write(&request, v, 1);
}

int c_write_wrong_size(void) {
  uint16_t status = 1; /* declared u32 */
  spoor_value v[2] = {SPOOR_VALUE(status), SPOOR_STRING("x")};
  return spoor_event_write(&request, v, 2);
}
