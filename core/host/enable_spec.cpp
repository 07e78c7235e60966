// Parsing of ETW-style enable specs (see enable_spec.h).
#include "spoor/host/enable_spec.h"

#include <cctype>
#include <charconv>
#include <cstdio>

namespace spoor::host {
namespace {

std::string_view trim(std::string_view s) {
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.front()))) s.remove_prefix(1);
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) s.remove_suffix(1);
  return s;
}

bool iequals(std::string_view a, std::string_view b) { return provider_names_equal(a, b); }

std::optional<uint64_t> parse_u64(std::string_view s) {
  s = trim(s);
  int base = 10;
  if (s.size() > 2 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X')) {
    s.remove_prefix(2);
    base = 16;
  }
  uint64_t v = 0;
  auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), v, base);
  if (ec != std::errc() || p != s.data() + s.size() || s.empty()) return std::nullopt;
  return v;
}

std::optional<uint8_t> parse_level(std::string_view s) {
  static constexpr std::string_view kNames[] = {"always", "critical", "error", "warning", "info", "verbose"};
  for (uint8_t i = 0; i < 6; ++i)
    if (iequals(s, kNames[i])) return i;
  if (iequals(s, "informational")) return 4;
  if (auto v = parse_u64(s); v && *v <= 5) return static_cast<uint8_t>(*v);
  return std::nullopt;
}

int hex_digit(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

}  // namespace

bool provider_names_equal(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i)
    if (std::toupper(static_cast<unsigned char>(a[i])) != std::toupper(static_cast<unsigned char>(b[i])))
      return false;
  return true;
}

std::optional<Guid> parse_guid(std::string_view text) {
  text = trim(text);
  if (text.size() == 38 && text.front() == '{' && text.back() == '}') text = text.substr(1, 36);
  if (text.size() != 36) return std::nullopt;
  Guid g;
  int k = 0;
  for (size_t i = 0; i < 36;) {
    if (i == 8 || i == 13 || i == 18 || i == 23) {
      if (text[i] != '-') return std::nullopt;
      ++i;
      continue;
    }
    int hi = hex_digit(text[i]), lo = hex_digit(text[i + 1]);
    if (hi < 0 || lo < 0) return std::nullopt;
    g.bytes[k++] = static_cast<uint8_t>(hi * 16 + lo);
    i += 2;
  }
  return g;
}

std::string guid_text(const Guid& id) {
  char buf[37];
  const uint8_t* b = id.bytes;
  std::snprintf(buf, sizeof buf,
                "%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x", b[0], b[1],
                b[2], b[3], b[4], b[5], b[6], b[7], b[8], b[9], b[10], b[11], b[12], b[13], b[14],
                b[15]);
  return buf;
}

std::optional<std::vector<EnableRule>> parse_enable_spec(std::string_view spec, std::string* error) {
  std::vector<EnableRule> rules;
  auto fail = [&](std::string msg) -> std::optional<std::vector<EnableRule>> {
    if (error) *error = std::move(msg);
    return std::nullopt;
  };
  if (trim(spec).empty()) return fail("empty provider spec: name providers as Name[:KEYWORDS[:LEVEL]], or * for all");
  size_t start = 0;
  while (start <= spec.size()) {
    size_t comma = spec.find(',', start);
    if (comma == std::string_view::npos) comma = spec.size();
    const std::string_view item = trim(spec.substr(start, comma - start));
    start = comma + 1;
    if (item.empty()) return fail("empty entry in provider spec '" + std::string(spec) + "'");
    // Split into at most 3 parts on ':' (a braced GUID holds no ':').
    std::string_view parts[3];
    size_t n = 0, from = 0;
    while (true) {
      size_t colon = item.find(':', from);
      if (n == 2 || colon == std::string_view::npos) {
        parts[n++] = item.substr(from);
        break;
      }
      parts[n++] = item.substr(from, colon - from);
      from = colon + 1;
    }
    if (n == 3 && parts[2].find(':') != std::string_view::npos)
      return fail("too many ':' in '" + std::string(item) + "': use Name:KEYWORDS:LEVEL");
    EnableRule rule;
    rule.state.enabled = true;
    const std::string_view name = trim(parts[0]);
    if (name.empty()) return fail("missing provider name in '" + std::string(item) + "'");
    if (name == "*") {
      rule.all = true;
    } else if (auto g = parse_guid(name); g && (name.front() == '{' || name.size() == 36)) {
      rule.id = g;
    } else {
      rule.name = std::string(name);
    }
    if (n >= 2 && !trim(parts[1]).empty()) {
      std::string_view kw = trim(parts[1]);
      std::string_view all_part;
      if (size_t amp = kw.find('&'); amp != std::string_view::npos) {
        all_part = kw.substr(amp + 1);
        kw = kw.substr(0, amp);
      }
      auto any = parse_u64(kw);
      if (!any) return fail("keywords '" + std::string(kw) + "' in '" + std::string(item) + "' are not a number (use hex like 0x3)");
      rule.state.keywords_any = *any == 0 ? ~0ull : *any;
      if (!all_part.empty()) {
        auto all = parse_u64(all_part);
        if (!all) return fail("match-all keywords '" + std::string(all_part) + "' in '" + std::string(item) + "' are not a number");
        rule.state.keywords_all = *all;
      }
    }
    if (n == 3 && !trim(parts[2]).empty()) {
      auto level = parse_level(trim(parts[2]));
      if (!level)
        return fail("level '" + std::string(trim(parts[2])) + "' in '" + std::string(item) +
                    "' is not 0-5 or a level name (always, critical, error, warning, info, verbose)");
      rule.state.level = *level;
    }
    rules.push_back(std::move(rule));
    if (comma == spec.size()) break;
  }
  return rules;
}

EnableState state_for(const std::vector<EnableRule>& rules, std::string_view name, const Guid& id) {
  EnableState state;  // disabled
  for (const EnableRule& r : rules) {
    const bool match = r.all || (r.id && *r.id == id) || (!r.id && !r.all && iequals(r.name, name));
    if (match) state = r.state;
  }
  return state;
}

}  // namespace spoor::host
