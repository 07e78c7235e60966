// Sockets named by their addresses and relative paths made absolute, end
// to end: programs/net_cwd.c (loopback TCP and UDP, unix sockets, an
// unconnected datagram sender, sendmmsg/recvmmsg, chdir and relative
// opens) under spoor record. The trace must hold each socket's raw
// address and every byte sent and received; the report must name socket
// rows by peer (or local address for a bound socket or a listener, or the
// destination for a socket that only sends to named ones) and count a
// file opened by relative and absolute paths as one row.
#include <gtest/gtest.h>

#include <filesystem>
#include <map>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "event_fields.h"
#include "run_command.h"
#include "spoor/reader/event_reader.h"
#include "spoor/reader/trace.h"

namespace {

namespace reader = spoor::reader;
namespace fs = std::filesystem;
using spoor::test::Process;
using spoor::test::run;
using spoor::test::temp_path;

const std::string kSpoor = SPOOR_TOOL;

using namespace spoor::test::fields;  // i64, u64, ptr, str, blob

// An AF_INET sockaddr's port, or -1 when `a` is not one for 127.0.0.1.
int loopback_port(const std::vector<uint8_t>& a) {
  if (a.size() < 8 || a[0] != 2 || a[1] != 0) return -1;  // AF_INET, little-endian
  if (a[4] != 127 || a[5] != 0 || a[6] != 0 || a[7] != 1) return -1;
  return a[2] << 8 | a[3];
}

class NetCwd : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = temp_path("netcwd");
    fs::remove_all(dir_);
    fs::create_directories(dir_);
    dir_ = fs::canonical(dir_).string();  // getcwd's form: no symbolic link
    trace_ = dir_ + ".spoor";
    recorded_ = run(kSpoor + " record -o " + trace_ + " -- " + SPOOR_NET_CWD + " " + dir_);
    std::istringstream lines(recorded_.out);
    std::string key, value;
    while (lines >> key >> value) printed_[key] = value;
  }
  void TearDown() override {
    if (!HasFailure()) {
      fs::remove_all(dir_);
      fs::remove(trace_);
    }
  }
  template <class Visit>
  void each_event(Visit visit) {
    auto trace = reader::Trace::open(trace_);
    ASSERT_TRUE(trace) << trace.error();
    EXPECT_FALSE(trace->damage());
    reader::EventReader events(trace.value());
    reader::Event e;
    while (events.next(e))
      if (e.provider->name == "Spoor.IO") visit(std::string(e.descriptor->name), e);
  }
  std::string dir_, trace_;
  Process recorded_;
  std::map<std::string, std::string> printed_;
};

TEST_F(NetCwd, TheTraceHoldsEachSocketsAddressAndEveryByte) {
  ASSERT_EQ(recorded_.status, 0) << recorded_.err;
  const int tcp = std::stoi(printed_.at("tcp")), udp = std::stoi(printed_.at("udp"));
  const int dgram = std::stoi(printed_.at("dgram")), idle = std::stoi(printed_.at("idle"));
  int tcp_listens = 0, unix_listens = 0, idle_binds = 0, dgram_binds = 0, inet_datagram_sockets = 0;
  int64_t sent_to_dgram = 0;
  std::vector<uint64_t> batch_messages;  // sendmmsg's and recvmmsg's `vectors`
  std::vector<int64_t> connects;  // results of connects to the TCP listener
  int udp_connects = 0, unix_connects = 0, tcp_binds = 0, udp_binds = 0, abstract_binds = 0, accepts = 0;
  std::map<uint64_t, int64_t> sent, received;  // call -> bytes
  int received_from_loopback = 0;
  std::vector<std::string> cwds;
  const std::string unix_path = dir_ + "/s.sock";
  const std::string abstract = printed_.at("abstract");
  each_event([&](const std::string& name, const reader::Event& e) {
    if (name == "Connect") {
      const auto a = blob(e, "address");
      if (loopback_port(a) == tcp) {
        connects.push_back(i64(e, "result"));
        EXPECT_EQ(u64(e, "socket_type"), 1u) << "SOCK_STREAM";
      } else if (loopback_port(a) == udp) {
        ++udp_connects;
        EXPECT_EQ(u64(e, "socket_type"), 2u) << "SOCK_DGRAM";
        EXPECT_EQ(i64(e, "result"), 0);
      } else if (a.size() > 2 && std::string(a.begin() + 2, a.end()).find(unix_path) == 0) {
        ++unix_connects;
        EXPECT_EQ(i64(e, "result"), 0);
      }
    } else if (name == "Bind") {
      const auto a = blob(e, "address");
      EXPECT_EQ(i64(e, "result"), 0);
      if (loopback_port(a) == tcp) ++tcp_binds;  // the kernel's port, not the 0 asked for
      if (loopback_port(a) == udp) ++udp_binds;
      if (loopback_port(a) == idle) ++idle_binds;
      if (loopback_port(a) == dgram) ++dgram_binds;
      if (a.size() > 3 && a[0] == 1 && a[2] == 0 && std::string(a.begin() + 3, a.end()) == abstract) ++abstract_binds;
    } else if (name == "Accept") {
      ++accepts;
      EXPECT_GE(i64(e, "result"), 0);
      const auto a = blob(e, "address");
      ASSERT_GE(a.size(), 2u) << "the peer's address, also when the caller asked for none";
      EXPECT_TRUE(a[0] == 2 || a[0] == 1) << "AF_INET or AF_UNIX";
      if (a[0] == 2) {
        EXPECT_GT(loopback_port(a), 0);
      }
    } else if (name == "Listen") {
      EXPECT_EQ(i64(e, "result"), 0);
      EXPECT_EQ(u64(e, "socket_type"), 1u) << "SOCK_STREAM";
      const auto a = blob(e, "address");
      if (loopback_port(a) == tcp) ++tcp_listens;
      if (a.size() > 2 && a[0] == 1 && std::string(a.begin() + 2, a.end()).find(unix_path) == 0) ++unix_listens;
      EXPECT_NE(loopback_port(a), idle) << "the idle socket never listens";
    } else if (name == "Socket") {
      if (u64(e, "domain") == 2 && u64(e, "socket_type") == 2) ++inet_datagram_sockets;
    } else if (name == "Send") {
      sent[u64(e, "call")] += i64(e, "result");
      if (loopback_port(blob(e, "address")) == dgram) sent_to_dgram += i64(e, "result");
      if (u64(e, "call") == 6) batch_messages.push_back(u64(e, "vectors"));
    } else if (name == "Receive") {
      received[u64(e, "call")] += i64(e, "result");
      if (u64(e, "call") == 7) batch_messages.push_back(u64(e, "vectors"));
      if (u64(e, "call") == 4 && loopback_port(blob(e, "address")) > 0) ++received_from_loopback;
    } else if (name == "Chdir") {
      EXPECT_EQ(i64(e, "result"), 0);
      cwds.push_back(str(e, "cwd"));
    }
    if (name != "FdInherited" && name != "FdCreated" && name != "Socket") {
      EXPECT_GT(u64(e, "start_ticks"), 0u) << name;
    }
  });
  ASSERT_EQ(connects.size(), 1u);
  EXPECT_TRUE(connects[0] == 0 || connects[0] == -115) << "a non-blocking connect: 0 or EINPROGRESS";
  EXPECT_EQ(udp_connects, 1);
  EXPECT_EQ(unix_connects, 1);
  EXPECT_EQ(tcp_binds, 1);
  EXPECT_EQ(udp_binds, 1);
  EXPECT_EQ(abstract_binds, 1);
  EXPECT_EQ(accepts, 2) << "accept and accept4";
  EXPECT_EQ(tcp_listens, 1);
  EXPECT_EQ(unix_listens, 1);
  EXPECT_EQ(idle_binds, 1);
  EXPECT_EQ(dgram_binds, 1);
  EXPECT_EQ(inet_datagram_sockets, 4) << "udp's two sockets and dgram's two";
  EXPECT_EQ(sent[0], 1000 + 64 + 20) << "send: tcp, udp, unix";
  EXPECT_EQ(sent[1], 7 + 40) << "sendto: the abstract socket, the datagram sender";
  EXPECT_EQ(sent[2], 300) << "sendmsg";
  EXPECT_EQ(sent[6], 10 + 20 + 30) << "sendmmsg: the sum of its messages' msg_len";
  EXPECT_EQ(received[7], 10 + 20 + 30) << "recvmmsg";
  EXPECT_EQ(batch_messages, (std::vector<uint64_t>{3, 3})) << "one event per call, with its message count";
  EXPECT_EQ(sent_to_dgram, 40 + 60) << "sendto's and sendmmsg's destination";
  EXPECT_EQ(received[3], 1000 + 20 + 7 + 40) << "recv";
  EXPECT_EQ(received[4], 300 + 64) << "recvfrom";
  EXPECT_EQ(received_from_loopback, 1) << "the datagram's source address";
  EXPECT_EQ(cwds, std::vector<std::string>({dir_, dir_ + "/sub", dir_})) << "chdir, chdir, fchdir";
}

TEST_F(NetCwd, TheReportNamesSocketsByAddressAndMergesRelativeOpens) {
  ASSERT_EQ(recorded_.status, 0) << recorded_.err;
  const Process report = run(kSpoor + " report --io --top 1000 --format json " + trace_);
  ASSERT_EQ(report.status, 0) << report.err;
  const auto j = nlohmann::json::parse(report.out, nullptr, false);
  ASSERT_FALSE(j.is_discarded()) << report.out;
  std::map<std::string, nlohmann::json> files;
  for (const auto& f : j["io"]["files"]) files[f["path"].get<std::string>()] = f;
  auto has = [&](const std::string& path) { return files.count(path) != 0; };
  const std::string tcp = "tcp 127.0.0.1:" + printed_.at("tcp"), udp = "udp 127.0.0.1:" + printed_.at("udp");

  ASSERT_TRUE(has(tcp + " (socket)")) << report.out;
  EXPECT_EQ(files[tcp + " (socket)"]["bytes_written"], 1000 + 50) << "send, then write on the socket";
  EXPECT_EQ(files[tcp + " (socket)"]["bytes_read"], 300);
  EXPECT_EQ(files[tcp + " (socket)"]["errors"], 0) << "a connect under way (EINPROGRESS) is no failure";
  ASSERT_TRUE(has(tcp + " (listening)")) << report.out;
  EXPECT_EQ(files[tcp + " (listening)"]["bytes_read"], 0);
  // The server's end: named by its peer, the client's port.
  int accepted = 0;
  for (const auto& [path, f] : files) {
    if (path.rfind("tcp 127.0.0.1:", 0) != 0 || path == tcp + " (socket)" || path == tcp + " (listening)" ||
        path == "tcp 127.0.0.1:" + printed_.at("idle") + " (bound)")
      continue;
    ++accepted;
    EXPECT_EQ(f["bytes_read"], 1000 + 50) << path;
    EXPECT_EQ(f["bytes_written"], 300) << path;
  }
  EXPECT_EQ(accepted, 1) << report.out;

  ASSERT_TRUE(has(udp + " (socket)")) << report.out;
  EXPECT_EQ(files[udp + " (socket)"]["bytes_written"], 64);
  ASSERT_TRUE(has(udp + " (bound)")) << report.out;
  EXPECT_EQ(files[udp + " (bound)"]["bytes_read"], 64);

  const std::string unix_name = "unix " + dir_ + "/s.sock";
  ASSERT_TRUE(has(unix_name + " (socket)")) << report.out;
  EXPECT_EQ(files[unix_name + " (socket)"]["bytes_written"], 20);
  ASSERT_TRUE(has(unix_name + " (accepted)")) << report.out;
  EXPECT_EQ(files[unix_name + " (accepted)"]["bytes_read"], 20);
  EXPECT_TRUE(has(unix_name + " (listening)")) << report.out;
  const std::string abstract = "unix @" + printed_.at("abstract") + " (bound)";
  ASSERT_TRUE(has(abstract)) << report.out;
  EXPECT_EQ(files[abstract]["bytes_read"], 7);

  // The abstract socket's sender, never bound nor connected, is named by
  // where it sent.
  const std::string abstract_sender = "unix @" + printed_.at("abstract") + " (sendto)";
  ASSERT_TRUE(has(abstract_sender)) << report.out;
  EXPECT_EQ(files[abstract_sender]["bytes_written"], 7);

  // The datagram sender: sendto and sendmmsg to one destination, its row.
  const std::string dgram = "udp 127.0.0.1:" + printed_.at("dgram");
  ASSERT_TRUE(has(dgram + " (sendto)")) << report.out;
  EXPECT_EQ(files[dgram + " (sendto)"]["bytes_written"], 40 + 60);
  EXPECT_EQ(files[dgram + " (sendto)"]["writes"], 2) << "sendto, and sendmmsg as one call";
  ASSERT_TRUE(has(dgram + " (bound)")) << report.out;
  EXPECT_EQ(files[dgram + " (bound)"]["bytes_read"], 40 + 60);
  EXPECT_EQ(files[dgram + " (bound)"]["reads"], 2) << "recv, and recvmmsg as one call";

  // A tcp socket bound but never listening is no listener.
  const std::string idle = "tcp 127.0.0.1:" + printed_.at("idle");
  EXPECT_TRUE(has(idle + " (bound)")) << report.out;
  EXPECT_FALSE(has(idle + " (listening)")) << report.out;

  // No socket keeps its kernel object's name: each was named by an address.
  for (const auto& [path, f] : files) EXPECT_NE(path.rfind("socket:[", 0), 0u) << path;

  const std::string db = dir_ + "/t.db";
  ASSERT_TRUE(has(db)) << report.out;
  EXPECT_EQ(files[db]["opens"], 5) << "t.db (failed), absolute, sub/../t.db, openat, ./t.db";
  EXPECT_EQ(files[db]["errors"], 1);
  EXPECT_EQ(files[db]["bytes_written"], 5);
  EXPECT_EQ(files[db]["bytes_read"], 15);
  for (const char* relative : {"t.db", "./t.db", "sub/../t.db"}) EXPECT_FALSE(has(relative)) << relative;
}

}  // namespace
