// Socket addresses decoded from the raw bytes Spoor.IO records, and paths
// made absolute and normal, without touching the machine.
#include <gtest/gtest.h>

#include <cstdint>
#include <vector>

#include "spoor/analysis/io_names.h"

namespace {

namespace an = spoor::analysis;
using Bytes = std::vector<uint8_t>;

constexpr uint8_t kStream = 1, kDatagram = 2, kRaw = 3, kUnknown = 0;

// sockaddr_in: family 2 (little-endian), port (big-endian), address, zero padding.
Bytes inet(uint8_t a, uint8_t b, uint8_t c, uint8_t d, uint16_t port) {
  return {2, 0, static_cast<uint8_t>(port >> 8), static_cast<uint8_t>(port), a, b, c, d, 0, 0, 0, 0, 0, 0, 0, 0};
}

// sockaddr_in6: family 10, port, flowinfo, 16 address bytes, scope id.
Bytes inet6(const Bytes& address, uint16_t port, uint32_t scope = 0) {
  // Built byte by byte: GCC 12 warns (wrongly) on inserting into a vector
  // made from a braced list.
  Bytes b(28, 0);
  b[0] = 10;
  b[2] = static_cast<uint8_t>(port >> 8);
  b[3] = static_cast<uint8_t>(port);
  for (size_t i = 0; i < 16 && i < address.size(); ++i) b[8 + i] = address[i];
  for (size_t i = 0; i < 4; ++i) b[24 + i] = static_cast<uint8_t>(scope >> (8 * i));
  return b;
}

Bytes unix_address(const std::string& name) {
  Bytes b(2 + name.size(), 0);
  b[0] = 1;
  for (size_t i = 0; i < name.size(); ++i) b[2 + i] = static_cast<uint8_t>(name[i]);
  return b;
}

TEST(SocketAddress, Ipv4WithTheProtocolOfItsSocketType) {
  EXPECT_EQ(an::describe_socket_address(inet(127, 0, 0, 1, 8080), kStream), "tcp 127.0.0.1:8080");
  EXPECT_EQ(an::describe_socket_address(inet(1, 2, 3, 4, 53), kDatagram), "udp 1.2.3.4:53");
  EXPECT_EQ(an::describe_socket_address(inet(10, 0, 0, 1, 0), kRaw), "raw 10.0.0.1");
  EXPECT_EQ(an::describe_socket_address(inet(0, 0, 0, 0, 80), kUnknown), "ip 0.0.0.0:80");
  // Without sin_zero (a caller passing 8 bytes is still understood).
  const Bytes full = inet(1, 2, 3, 4, 80);
  EXPECT_EQ(an::describe_socket_address(Bytes(full.begin(), full.begin() + 8), kStream), "tcp 1.2.3.4:80");
}

TEST(SocketAddress, Ipv6InBracketsWithItsScope) {
  Bytes loopback(16, 0);
  loopback[15] = 1;
  EXPECT_EQ(an::describe_socket_address(inet6(loopback, 53), kDatagram), "udp [::1]:53");
  Bytes link_local(16, 0);
  link_local[0] = 0xfe;
  link_local[1] = 0x80;
  link_local[15] = 1;
  EXPECT_EQ(an::describe_socket_address(inet6(link_local, 80, 2), kStream), "tcp [fe80::1%2]:80");
  Bytes mapped(16, 0);
  mapped[10] = mapped[11] = 0xff;
  mapped[12] = 192, mapped[13] = 168, mapped[14] = 0, mapped[15] = 7;
  EXPECT_EQ(an::describe_socket_address(inet6(mapped, 443), kStream), "tcp [::ffff:192.168.0.7]:443");
}

TEST(SocketAddress, UnixPathsAbstractNamesAndUnnamed) {
  Bytes path = unix_address("/run/x.sock");
  path.resize(110, 0);  // sun_path padded with NULs to its full size
  EXPECT_EQ(an::describe_socket_address(path, kStream), "unix /run/x.sock");
  EXPECT_EQ(an::describe_socket_address(unix_address(std::string("\0spoor-1", 8)), kDatagram), "unix @spoor-1");
  // Every byte of an abstract name counts, NULs and unprintables shown as \xNN.
  EXPECT_EQ(an::describe_socket_address(unix_address(std::string("\0a\0b\x7f\\", 6)), kStream),
            "unix @a\\x00b\\x7f\\x5c");
  EXPECT_EQ(an::describe_socket_address(Bytes{1, 0}, kStream), "unix (unnamed)");
}

TEST(SocketAddress, TruncatedOrUnknownBytesGetALabelNotACrash) {
  EXPECT_EQ(an::describe_socket_address(Bytes{}, kStream), "(no address)");
  EXPECT_EQ(an::describe_socket_address(Bytes{2}, kStream), "address (truncated: 1 of 2 bytes)");
  EXPECT_EQ(an::describe_socket_address(Bytes{2, 0, 0, 80, 127, 0}, kStream), "inet (truncated: 6 of 16 bytes)");
  EXPECT_EQ(an::describe_socket_address(Bytes{10, 0, 0, 53, 0, 0, 0, 0, 1, 2}, kDatagram),
            "inet6 (truncated: 10 of 28 bytes)");
  EXPECT_EQ(an::describe_socket_address(Bytes{16, 0, 0, 0}, kDatagram), "netlink (truncated: 4 of 12 bytes)");
  EXPECT_EQ(an::describe_socket_address(Bytes{16, 0, 0, 0, 7, 0, 0, 0, 0, 0, 0, 0}, kDatagram), "netlink (port 7)");
  EXPECT_EQ(an::describe_socket_address(Bytes{0xff, 0xee, 1, 2, 3}, kStream), "family 61183 (5 bytes)");
  // Every length of every family's bytes, and noise: no read past the end.
  for (const Bytes& full : {inet(1, 2, 3, 4, 5), inet6(Bytes(16, 0xab), 6, 7), unix_address("/a/b")}) {
    for (size_t n = 0; n <= full.size(); ++n) {
      const std::string text = an::describe_socket_address(Bytes(full.begin(), full.begin() + n), kStream);
      EXPECT_FALSE(text.empty()) << n;
    }
  }
  uint32_t state = 12345;
  for (int i = 0; i < 2000; ++i) {
    Bytes noise(static_cast<size_t>(i % 130));
    for (uint8_t& b : noise) b = static_cast<uint8_t>((state = state * 1103515245 + 12345) >> 16);
    if (noise.size() >= 2 && i % 3 == 0) noise[0] = static_cast<uint8_t>(i % 4 == 0 ? 1 : 10), noise[1] = 0;
    EXPECT_FALSE(an::describe_socket_address(noise, static_cast<uint8_t>(i % 6)).empty());
  }
}

TEST(ResolvePath, RelativePathsJoinTheDirectoryAndLoseDotsLexically) {
  EXPECT_EQ(an::resolve_path("/srv/app", "t.db"), "/srv/app/t.db");
  EXPECT_EQ(an::resolve_path("/srv/app", "./t.db"), "/srv/app/t.db");
  EXPECT_EQ(an::resolve_path("/srv/app", "sub/../t.db"), "/srv/app/t.db");
  EXPECT_EQ(an::resolve_path("/srv/app", "../other//x"), "/srv/other/x");
  EXPECT_EQ(an::resolve_path("/srv/app/", "."), "/srv/app");
  EXPECT_EQ(an::resolve_path("/", "a"), "/a");
  EXPECT_EQ(an::resolve_path("/srv", "../../../x"), "/x") << "nothing above the root";
  EXPECT_EQ(an::resolve_path("/srv", ".."), "/");
}

TEST(ResolvePath, AbsolutePathsAreNormalisedAndUnknownBasesLeavePathsAlone) {
  EXPECT_EQ(an::resolve_path("/srv", "/etc/./passwd"), "/etc/passwd");
  EXPECT_EQ(an::resolve_path("", "/a//b/../c/"), "/a/c");
  EXPECT_EQ(an::resolve_path("", "t.db"), "t.db") << "no working directory known";
  EXPECT_EQ(an::resolve_path("relative/base", "t.db"), "t.db");
  EXPECT_EQ(an::resolve_path("/srv", ""), "") << "an unreadable path stays empty";
  EXPECT_EQ(an::resolve_path("/srv", "/"), "/");
}

}  // namespace
