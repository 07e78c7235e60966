// Events as JSON objects, one per line (`spoor dump --format jsonl`).
#ifndef SPOOR_CLI_EVENT_JSON_H
#define SPOOR_CLI_EVENT_JSON_H

#include <string>

#include "spoor/reader/event.h"

namespace spoor::cli {

// Appends the event as one line of JSON: the event's columns, then "fields"
// as an object of typed values (u64 and i64 as numbers, blobs as hex
// strings, pointers as "0x..." strings, activity IDs as GUID text). Bytes
// that are not UTF-8 become U+FFFD rather than failing the line.
void json_line(const reader::Event& e, std::string& out);

}  // namespace spoor::cli

#endif  // SPOOR_CLI_EVENT_JSON_H
