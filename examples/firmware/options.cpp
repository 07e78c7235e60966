#include "options.h"

#include "semihosting.h"

namespace firmware {
namespace {

// The command line outlives read_options: `out` points into it.
char g_command_line[256];

bool same(const char* a, const char* b) {
  while (*a != '\0' && *a == *b) ++a, ++b;
  return *a == *b;
}

bool parse_number(const char* word, uint32_t& out) {
  if (*word == '\0') return false;
  uint32_t v = 0;
  for (; *word != '\0'; ++word) {
    if (*word < '0' || *word > '9' || v > 400'000'000) return false;
    v = v * 10 + static_cast<uint32_t>(*word - '0');
  }
  out = v;
  return true;
}

}  // namespace

Options read_options() {
  Options o;
  if (!semihosting::command_line(g_command_line, sizeof g_command_line)) return o;
  // Split in place into words; the first is the program's name.
  char* words[32];
  uint32_t count = 0;
  for (char* p = g_command_line; *p != '\0' && count < 32;) {
    while (*p == ' ') *p++ = '\0';
    if (*p == '\0') break;
    words[count++] = p;
    while (*p != '\0' && *p != ' ') ++p;
  }
  for (uint32_t i = 1; i < count; ++i) {
    const char* w = words[i];
    const char* value = i + 1 < count ? words[i + 1] : "";
    bool ok = true;
    if (same(w, "--out")) o.out = value;
    else if (same(w, "--jobs")) ok = parse_number(value, o.jobs);
    else if (same(w, "--buffer")) ok = parse_number(value, o.buffer_bytes);
    else if (same(w, "--packet")) ok = parse_number(value, o.packet_bytes);
    else if (same(w, "--bench")) ok = parse_number(value, o.bench_events);
    else ok = false;
    if (!ok || *value == '\0') {
      o.error = w;
      return o;
    }
    ++i;
  }
  return o;
}

}  // namespace firmware
