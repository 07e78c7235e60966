/* The C API header compiles as freestanding C. */
#include "spoor/spoor.h"

static uint16_t request_key;
static const spoor_field_desc request_fields[] = {{SPOOR_FIELD_U32, "status"},
                                                  {SPOOR_FIELD_STRING, "path"}};
spoor_event_desc request = SPOOR_EVENT_DESC(0, &request_key, "Request", 1, SPOOR_LEVEL_INFO, 0x1,
                                            SPOOR_OPCODE_START, request_fields, 2);

int c_header_compiles(void) { return spoor_event_enabled(&request); }
