#include "event_json.h"

#include <nlohmann/json.hpp>
#include <cstring>
#include <variant>

#include "event_text.h"
#include "spoor/reader/names.h"

namespace spoor::cli {
namespace {

// ordered_json keeps the keys in the order written: the columns read the
// same in every line.
using Json = nlohmann::ordered_json;

Json value_json(const reader::Value& v) {
  if (auto* u = std::get_if<uint64_t>(&v)) return *u;
  if (auto* i = std::get_if<int64_t>(&v)) return *i;
  if (auto* d = std::get_if<double>(&v)) return *d;  // NaN and infinities print as null
  if (auto* b = std::get_if<bool>(&v)) return *b;
  if (auto* s = std::get_if<std::string_view>(&v)) return std::string(*s);
  if (auto* blob = std::get_if<reader::Blob>(&v)) return hex_bytes(blob->bytes);
  if (auto* p = std::get_if<reader::Pointer>(&v)) return hex_number(p->address);
  if (auto* g = std::get_if<reader::Guid>(&v)) return g->to_string();
  return nullptr;
}

// Kernel addresses as pointers are: "0x..." strings; callchains as arrays of them.
Json field_json(const reader::Event& e, const reader::FieldValue& f) {
  switch (address_kind(e, f)) {
    case AddressKind::address: return hex_number(std::get<uint64_t>(f.value));
    case AddressKind::address_list: {
      Json a = Json::array();
      const auto bytes = std::get<reader::Blob>(f.value).bytes;
      for (size_t i = 0; i + 8 <= bytes.size(); i += 8) {
        uint64_t v;
        std::memcpy(&v, bytes.data() + i, 8);
        a.push_back(hex_number(v));
      }
      return a;
    }
    case AddressKind::none: break;
  }
  return value_json(f.value);
}

std::string guid_text(const std::optional<reader::Guid>& g) { return g ? g->to_string() : ""; }

}  // namespace

void json_line(const reader::Event& e, std::string& out) {
  const reader::EventDescriptor& d = *e.descriptor;
  Json j;
  j["time_ns"] = e.time_ns;
  j["ticks"] = e.ticks;
  j["cpu"] = e.cpu;
  j["pid"] = e.pid;
  j["tid"] = e.tid;
  j["stream"] = e.stream_id;
  j["provider"] = e.provider->name;
  j["provider_id"] = e.provider->guid.to_string();
  j["event"] = d.name;
  j["id"] = d.id;
  j["version"] = d.version;
  j["opcode"] = reader::opcode_name(d.opcode);
  j["level"] = reader::level_name(d.level);
  j["task"] = d.task;
  j["keywords"] = hex_number(d.keywords);
  j["activity_id"] = guid_text(e.activity_id);
  j["related_activity_id"] = guid_text(e.related_activity_id);
  Json fields = Json::object();
  for (const reader::FieldValue& f : e.fields) fields[f.field->name] = field_json(e, f);
  j["fields"] = std::move(fields);
  // The replace handler: a trace's strings are not validated UTF-8, and the
  // default handler would throw on the first bad byte.
  out += j.dump(-1, ' ', false, Json::error_handler_t::replace);
  out.push_back('\n');
}

}  // namespace spoor::cli
