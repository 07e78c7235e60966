#include "event_text.h"

#include <algorithm>
#include <charconv>
#include <cstdio>
#include <cstring>
#include <variant>

#include "spoor/reader/names.h"

namespace spoor::cli {
namespace {

template <class... Ts>
struct Overloaded : Ts... {
  using Ts::operator()...;
};
template <class... Ts>
Overloaded(Ts...) -> Overloaded<Ts...>;

std::string quoted(std::string_view s) {
  std::string out = "\"";
  for (unsigned char c : s) {
    switch (c) {
      case '"': out += "\\\""; break;
      case '\\': out += "\\\\"; break;
      case '\n': out += "\\n"; break;
      case '\r': out += "\\r"; break;
      case '\t': out += "\\t"; break;
      default:
        if (c < 0x20 || c == 0x7F) {
          char buf[8];
          std::snprintf(buf, sizeof buf, "\\x%02x", c);
          out += buf;
        } else {
          out.push_back(static_cast<char>(c));
        }
    }
  }
  out.push_back('"');
  return out;
}

std::string double_text(double d) {
  char buf[64];
  auto r = std::to_chars(buf, buf + sizeof buf, d);
  return std::string(buf, r.ptr);
}

// RFC 4180: a cell with a comma, quote or line break is quoted, its quotes doubled.
void csv_cell(std::string_view s, std::string& out) {
  if (s.find_first_of(",\"\r\n") == std::string_view::npos) {
    out += s;
    return;
  }
  out.push_back('"');
  for (char c : s) {
    if (c == '"') out.push_back('"');
    out.push_back(c);
  }
  out.push_back('"');
}

std::string guid_text(const std::optional<reader::Guid>& g) { return g ? g->to_string() : ""; }

void append_padded(std::string& out, std::string_view s, size_t width) {
  out += s;
  if (s.size() < width) out.append(width - s.size(), ' ');
}

}  // namespace

std::string hex_bytes(std::span<const uint8_t> bytes) {
  static constexpr char kHex[] = "0123456789abcdef";
  std::string s;
  s.reserve(bytes.size() * 2);
  for (uint8_t b : bytes) {
    s.push_back(kHex[b >> 4]);
    s.push_back(kHex[b & 15]);
  }
  return s;
}

std::string hex_number(uint64_t v) {
  char buf[24];
  std::snprintf(buf, sizeof buf, "0x%llx", static_cast<unsigned long long>(v));
  return buf;
}

std::string value_text(const reader::Value& v) {
  return std::visit(
      Overloaded{
          [](uint64_t u) { return std::to_string(u); },
          [](int64_t i) { return std::to_string(i); },
          [](double d) { return double_text(d); },
          [](bool b) { return std::string(b ? "true" : "false"); },
          [](std::string_view s) { return quoted(s); },
          [](const reader::Blob& b) { return hex_bytes(b.bytes); },
          [](const reader::Pointer& p) { return hex_number(p.address); },
          [](const reader::Guid& g) { return g.to_string(); },
      },
      v);
}

AddressKind address_kind(const reader::Event& e, const reader::FieldValue& f) {
  // Spoor.Kernel writes addresses as u64 and callchains as blobs of u64
  // (its schema, kernelsrc/kernel_events.h), and Spoor.Stack a stack's
  // return addresses as a blob of u64, so they are known by name.
  if (e.provider == nullptr) return AddressKind::none;
  const std::string_view name = f.field->name;
  if (e.provider->name == "Spoor.Stack")
    return std::holds_alternative<reader::Blob>(f.value) && name == "frames" ? AddressKind::address_list
                                                                             : AddressKind::none;
  if (e.provider->name != "Spoor.Kernel") return AddressKind::none;
  if (std::holds_alternative<uint64_t>(f.value) && (name == "ip" || name == "address" || name == "start"))
    return AddressKind::address;
  if (std::holds_alternative<reader::Blob>(f.value) && (name == "callchain" || name == "kernel_callchain"))
    return AddressKind::address_list;
  return AddressKind::none;
}

std::string address_list_text(std::span<const uint8_t> bytes) {
  std::string s = "[";
  for (size_t i = 0; i + 8 <= bytes.size(); i += 8) {
    uint64_t v;
    std::memcpy(&v, bytes.data() + i, 8);
    if (i > 0) s += ',';
    s += hex_number(v);
  }
  s += ']';
  return s;
}

std::string field_text(const reader::Event& e, const reader::FieldValue& f) {
  switch (address_kind(e, f)) {
    case AddressKind::address: return hex_number(std::get<uint64_t>(f.value));
    case AddressKind::address_list: return address_list_text(std::get<reader::Blob>(f.value).bytes);
    case AddressKind::none: break;
  }
  return value_text(f.value);
}

std::string fields_text(const reader::Event& e, std::string_view separator, size_t blob_bytes) {
  std::string s;
  for (size_t i = 0; i < e.fields.size(); ++i) {
    if (i > 0) s += separator;
    s += e.fields[i].field->name;
    s += '=';
    const auto* blob = std::get_if<reader::Blob>(&e.fields[i].value);
    if (blob != nullptr && blob->bytes.size() > blob_bytes && address_kind(e, e.fields[i]) == AddressKind::none)
      s += hex_bytes(blob->bytes.first(blob_bytes)) + "...(" + std::to_string(blob->bytes.size()) + " bytes)";
    else
      s += field_text(e, e.fields[i]);
  }
  return s;
}

std::string duration_text(int64_t ns) {
  const double a = ns < 0 ? -static_cast<double>(ns) : static_cast<double>(ns);
  char buf[48];
  if (a < 1e3) std::snprintf(buf, sizeof buf, "%lld ns", static_cast<long long>(ns));
  else if (a < 1e6) std::snprintf(buf, sizeof buf, "%.3f us", static_cast<double>(ns) / 1e3);
  else if (a < 1e9) std::snprintf(buf, sizeof buf, "%.3f ms", static_cast<double>(ns) / 1e6);
  else std::snprintf(buf, sizeof buf, "%.3f s", static_cast<double>(ns) / 1e9);
  return buf;
}

TextLayout::TextLayout(const reader::Trace& trace) {
  // Names longer than 40 characters just push their line's tail right.
  for (const reader::Provider& p : trace.providers())
    provider_width_ = std::max(provider_width_, std::min<size_t>(p.name.size(), 40));
  for (const reader::EventDescriptor& d : trace.events())
    event_width_ = std::max(event_width_, std::min<size_t>(d.name.size(), 40));
}

void TextLayout::header(std::string& out) const {
  char buf[96];
  std::snprintf(buf, sizeof buf, "%20s %4s %8s %8s  ", "TIME_NS", "CPU", "PID", "TID");
  out += buf;
  append_padded(out, "PROVIDER", provider_width_ + 2);
  append_padded(out, "EVENT", event_width_ + 2);
  out += "OPCODE    LEVEL    KEYWORDS            FIELDS\n";
}

void TextLayout::line(const reader::Event& e, std::string& out) const {
  const reader::EventDescriptor& d = *e.descriptor;
  char buf[96];
  std::snprintf(buf, sizeof buf, "%20lld %4u %8u %8u  ", static_cast<long long>(e.time_ns), e.cpu,
                e.pid, e.tid);
  out += buf;
  append_padded(out, e.provider->name, provider_width_ + 2);
  append_padded(out, d.name, event_width_ + 2);
  append_padded(out, reader::opcode_name(d.opcode), 10);
  append_padded(out, reader::level_name(d.level), 9);
  std::snprintf(buf, sizeof buf, "0x%016llx", static_cast<unsigned long long>(d.keywords));
  out += buf;
  // The variable part, after two spaces: activity IDs when present, then
  // the fields. (Appends, not "literal" + string: GCC 12 at -O3 reports a
  // false -Wrestrict for the latter.)
  const char* gap = "  ";
  if (e.activity_id) {
    out.append(gap).append("activity=").append(e.activity_id->to_string());
    gap = " ";
  }
  if (e.related_activity_id) {
    out.append(gap).append("related=").append(e.related_activity_id->to_string());
    gap = " ";
  }
  if (!e.fields.empty()) out.append(gap).append(fields_text(e, " ", kTextBlobBytes));
  out.push_back('\n');
}

void csv_header(std::string& out) {
  out += "time_ns,cpu,pid,tid,provider,event,opcode,level,keywords,activity_id,"
         "related_activity_id,fields\n";
}

void csv_line(const reader::Event& e, std::string& out) {
  const reader::EventDescriptor& d = *e.descriptor;
  out += std::to_string(e.time_ns) + ',' + std::to_string(e.cpu) + ',' + std::to_string(e.pid) +
         ',' + std::to_string(e.tid) + ',';
  csv_cell(e.provider->name, out);
  out.push_back(',');
  csv_cell(d.name, out);
  out += ',' + reader::opcode_name(d.opcode) + ',' + reader::level_name(d.level) + ',' +
         hex_number(d.keywords) + ',' + guid_text(e.activity_id) + ',' +
         guid_text(e.related_activity_id) + ',';
  csv_cell(fields_text(e, ";"), out);
  out.push_back('\n');
}

}  // namespace spoor::cli
