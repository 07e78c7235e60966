// How the I/O analysis names what a call reached: a socket by the address
// its Connect, Bind or Accept recorded (raw sockaddr bytes, decoded here,
// never in the traced process), and a file by its absolute path, resolved
// against the working directory the trace says the process had.
//
// Both are pure functions of their arguments: no system call, no name
// service, no filesystem access. A trace read on another machine names
// things as the traced machine had them.
#ifndef SPOOR_ANALYSIS_IO_NAMES_H
#define SPOOR_ANALYSIS_IO_NAMES_H

#include <cstdint>
#include <span>
#include <string>
#include <string_view>

namespace spoor::analysis {

// A socket address as Spoor.IO records it (io_provider.h): a Linux
// sockaddr, family first (a u16 in the traced machine's byte order, little
// endian on every target the shim is built for). `socket_type` is SO_TYPE
// (1 stream, 2 datagram, 3 raw, 5 seqpacket; 0 unknown):
//
//   AF_INET, AF_INET6   "tcp 1.2.3.4:80", "udp [::1]:53", "raw 10.0.0.1",
//                       "ip [fe80::1%2]:80" (unknown type; scope id after %)
//   AF_UNIX             "unix /run/x.sock", "unix @name" (abstract: the
//                       leading NUL shown as @, other unprintable bytes as
//                       \xNN), "unix (unnamed)"
//   AF_NETLINK          "netlink (port P)"
//   others              "family N (M bytes)"
//   empty               "(no address)"
//   too short           "inet (truncated: 6 of 16 bytes)"
//
// Never fails and never reads past `address`.
std::string describe_socket_address(std::span<const uint8_t> address, uint8_t socket_type);

// `path` lexically made absolute and normal: relative to `base` (an
// absolute directory) when it does not start with '/', then "." and empty
// components dropped and ".." taking off the component before it (at the
// root it stays at the root). No symbolic link is followed, so "a/link/.."
// becomes "a", which the kernel may not agree with when link is a link to
// another directory. `path` comes back unchanged when it is relative and
// `base` is not absolute (unknown), and when it is empty.
std::string resolve_path(std::string_view base, std::string_view path);

}  // namespace spoor::analysis

#endif  // SPOOR_ANALYSIS_IO_NAMES_H
