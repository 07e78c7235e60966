#include "spoor/analysis/io_names.h"

#include <arpa/inet.h>

#include <vector>

namespace spoor::analysis {
namespace {

// Linux's values: the trace's, whatever machine reads it.
constexpr uint16_t kFamilyUnix = 1, kFamilyInet = 2, kFamilyInet6 = 10, kFamilyNetlink = 16;
constexpr uint8_t kStream = 1, kDatagram = 2, kRaw = 3, kSeqpacket = 5;
constexpr size_t kInetSize = 16, kInet6Size = 28, kNetlinkSize = 12;

uint16_t u16_le(std::span<const uint8_t> b, size_t at) { return static_cast<uint16_t>(b[at] | b[at + 1] << 8); }
uint16_t u16_be(std::span<const uint8_t> b, size_t at) { return static_cast<uint16_t>(b[at] << 8 | b[at + 1]); }
uint32_t u32_le(std::span<const uint8_t> b, size_t at) {
  return static_cast<uint32_t>(b[at]) | static_cast<uint32_t>(b[at + 1]) << 8 |
         static_cast<uint32_t>(b[at + 2]) << 16 | static_cast<uint32_t>(b[at + 3]) << 24;
}

std::string protocol(uint8_t socket_type) {
  switch (socket_type) {
    case kStream: return "tcp";
    case kDatagram: return "udp";
    case kRaw: return "raw";
    case kSeqpacket: return "sctp";
    default: return "ip";
  }
}

std::string truncated(const char* family, size_t have, size_t need) {
  return std::string(family) + " (truncated: " + std::to_string(have) + " of " + std::to_string(need) + " bytes)";
}

// Raw sockets have no port: it is the protocol number's place, 0.
std::string with_port(std::string host, uint16_t port, uint8_t socket_type) {
  return socket_type == kRaw && port == 0 ? host : host + ":" + std::to_string(port);
}

std::string inet(std::span<const uint8_t> a, uint8_t socket_type) {
  if (a.size() < 8) return truncated("inet", a.size(), kInetSize);
  char text[INET_ADDRSTRLEN];
  if (inet_ntop(AF_INET, a.data() + 4, text, sizeof text) == nullptr) return "inet (unreadable address)";
  return protocol(socket_type) + " " + with_port(text, u16_be(a, 2), socket_type);
}

std::string inet6(std::span<const uint8_t> a, uint8_t socket_type) {
  if (a.size() < 24) return truncated("inet6", a.size(), kInet6Size);
  char text[INET6_ADDRSTRLEN];
  if (inet_ntop(AF_INET6, a.data() + 8, text, sizeof text) == nullptr) return "inet6 (unreadable address)";
  std::string host = text;
  // The scope (an interface index) only means something for link-local
  // addresses, whose text needs it; older callers pass 24 bytes without.
  if (a.size() >= kInet6Size && u32_le(a, 24) != 0) host += "%" + std::to_string(u32_le(a, 24));
  return protocol(socket_type) + " " + with_port("[" + host + "]", u16_be(a, 2), socket_type);
}

// A pathname ends at its first NUL; an abstract name (leading NUL) is
// every byte the address holds, NULs included. Unprintable bytes, and the
// backslash that introduces them, are shown as \xNN.
std::string unix_name(std::span<const uint8_t> a) {
  std::span<const uint8_t> name = a.subspan(2);
  if (name.empty()) return "unix (unnamed)";
  std::string out = "unix ";
  if (name[0] == 0) {
    out += '@';
    name = name.subspan(1);
  } else {
    size_t end = 0;
    while (end < name.size() && name[end] != 0) ++end;
    name = name.first(end);
  }
  static constexpr char kHex[] = "0123456789abcdef";
  for (const uint8_t c : name) {
    if (c >= 0x20 && c < 0x7f && c != '\\') {
      out += static_cast<char>(c);
    } else {
      out += "\\x";
      out += kHex[c >> 4];
      out += kHex[c & 15];
    }
  }
  return out;
}

}  // namespace

std::string describe_socket_address(std::span<const uint8_t> address, uint8_t socket_type) {
  if (address.empty()) return "(no address)";
  if (address.size() < 2) return truncated("address", address.size(), 2);
  const uint16_t family = u16_le(address, 0);
  switch (family) {
    case kFamilyInet: return inet(address, socket_type);
    case kFamilyInet6: return inet6(address, socket_type);
    case kFamilyUnix: return unix_name(address);
    case kFamilyNetlink:
      if (address.size() < 8) return truncated("netlink", address.size(), kNetlinkSize);
      return "netlink (port " + std::to_string(u32_le(address, 4)) + ")";
    default:
      return "family " + std::to_string(family) + " (" + std::to_string(address.size()) + " bytes)";
  }
}

std::string resolve_path(std::string_view base, std::string_view path) {
  if (path.empty()) return std::string(path);
  const bool relative = path.front() != '/';
  if (relative && (base.empty() || base.front() != '/')) return std::string(path);
  std::vector<std::string_view> parts;
  auto walk = [&](std::string_view text) {
    size_t at = 0;
    while (at <= text.size()) {
      size_t end = text.find('/', at);
      if (end == std::string_view::npos) end = text.size();
      const std::string_view part = text.substr(at, end - at);
      if (part == "..") {
        if (!parts.empty()) parts.pop_back();
      } else if (!part.empty() && part != ".") {
        parts.push_back(part);
      }
      at = end + 1;
    }
  };
  if (relative) walk(base);
  walk(path);
  std::string out;
  for (std::string_view part : parts) {
    out += '/';
    out += part;
  }
  return out.empty() ? "/" : out;
}

}  // namespace spoor::analysis
