// File I/O attributed to paths through descriptors, with known times.
#include <gtest/gtest.h>

#include "analysis_test_support.h"
#include "spoor/analysis/io.h"

namespace {

using namespace spoor::testing;
namespace an = spoor::analysis;

const an::IoFile* file(const an::IoAnalysis& io, const std::string& path) {
  for (const an::IoFile& f : io.files())
    if (f.path == path) return &f;
  return nullptr;
}

SpoorTrace io_trace() {
  SpoorTrace t;
  t.process(100, 1, "prog", {"prog"});
  t.open(100, 100, 1100, 100, "/data/in", 3);
  t.read(100, 100, 1200, 50, 3, 4096);
  t.read(100, 100, 1300, 20, 3, 100);
  t.dup(100, 100, 1400, 3, 5);            // fd 5 is /data/in too
  t.read(100, 101, 1500, 10, 5, 10);      // on another thread
  t.close(100, 100, 1600, 5, 3);
  t.read(100, 100, 1700, 1000, 5, 7);     // still /data/in through 5: the slowest call
  t.close(100, 100, 1800, 5, 5);
  t.open(100, 100, 1900, 30, "/data/out", 3);  // fd 3 reused
  t.write(100, 100, 2000, 40, 3, 300);
  t.write(100, 100, 2100, 40, 3, -28);    // ENOSPC
  t.write(100, 100, 2200, 5, 1, 12);      // never opened: stdout
  t.open(100, 100, 2300, 8, "/data/missing", -2);
  return t;
}

// Bytes over time, from the first call that moved any (the read at 1200)
// to the last (the write at 2200): 1000 ns in 16 ns columns, 63 of them;
// each call's bytes in the column it ended in, failed calls none.
TEST(Io, BytesOverTimeAreEachCallsBytesInTheColumnItEndedIn) {
  an::IoAnalysis io(spoor::reader::Clock{});
  SpoorTrace t = io_trace();
  Loaded l = load(t, {&io});
  const an::IoTimeline& tl = io.timeline();
  EXPECT_EQ(tl.start_ns, 1200);
  EXPECT_EQ(tl.column_ns, 16);
  ASSERT_EQ(tl.read_bytes.size(), 63u);
  ASSERT_EQ(tl.written_bytes.size(), 63u);
  std::vector<uint64_t> read(63, 0), written(63, 0);
  read[0] = 4096;    // at 1200
  read[6] = 100;     // at 1300: 100 / 16
  read[18] = 10;     // at 1500
  read[31] = 7;      // at 1700
  written[50] = 300; // at 2000; the failed write at 2100 moved nothing
  written[62] = 12;  // at 2200
  EXPECT_EQ(tl.read_bytes, read);
  EXPECT_EQ(tl.written_bytes, written);
}

// A trace whose calls moved no byte has no timeline.
TEST(Io, NoBytesNoTimeline) {
  SpoorTrace t;
  t.process(100, 1, "prog", {"prog"});
  t.open(100, 100, 1100, 100, "/data/in", 3);
  t.read(100, 100, 1200, 50, 3, 0);  // end of file
  an::IoAnalysis io(spoor::reader::Clock{});
  Loaded l = load(t, {&io});
  EXPECT_EQ(io.timeline().column_ns, 0);
  EXPECT_TRUE(io.timeline().read_bytes.empty());
}

TEST(Io, ReadsAndWritesFollowTheirDescriptorToThePathOpened) {
  an::IoAnalysis io(spoor::reader::Clock{});
  SpoorTrace t = io_trace();
  Loaded l = load(t, {&io});
  const an::IoFile* in = file(io, "/data/in");
  ASSERT_NE(in, nullptr);
  EXPECT_EQ(in->totals.opens, 1u);
  EXPECT_EQ(in->totals.reads, 4u);
  EXPECT_EQ(in->totals.bytes_read, 4096u + 100 + 10 + 7);
  EXPECT_EQ(in->totals.read_ns, 50 + 20 + 10 + 1000);
  EXPECT_EQ(in->totals.total_ns, 100 + 50 + 20 + 0 + 10 + 5 + 1000 + 5);
  const an::IoFile* out = file(io, "/data/out");
  ASSERT_NE(out, nullptr);
  EXPECT_EQ(out->totals.writes, 2u);
  EXPECT_EQ(out->totals.bytes_written, 300u);
  EXPECT_EQ(out->totals.errors, 1u);
  const an::IoFile* stdout_file = file(io, "stdout");
  ASSERT_NE(stdout_file, nullptr);
  EXPECT_EQ(stdout_file->totals.bytes_written, 12u);
  const an::IoFile* missing = file(io, "/data/missing");
  ASSERT_NE(missing, nullptr);
  EXPECT_EQ(missing->totals.opens, 1u);
  EXPECT_EQ(missing->totals.errors, 1u);
  EXPECT_EQ(io.totals().bytes_read, 4213u);
  EXPECT_EQ(io.totals().opens, 3u);
}

TEST(Io, ThreadsAndSlowestCallsAreKept) {
  an::IoAnalysis io(spoor::reader::Clock{}, 3);
  SpoorTrace t = io_trace();
  Loaded l = load(t, {&io});
  ASSERT_EQ(io.threads().size(), 2u);
  const an::IoThread& other = io.threads()[1];
  EXPECT_EQ(l.model.threads[other.thread].tid, 101u);
  EXPECT_EQ(other.totals.reads, 1u);
  EXPECT_EQ(other.totals.bytes_read, 10u);
  const std::vector<an::IoOperation> slow = io.slowest();
  ASSERT_EQ(slow.size(), 3u);
  EXPECT_EQ(slow[0].duration_ns, 1000);
  EXPECT_EQ(slow[0].call, "Read");
  EXPECT_EQ(io.files()[slow[0].file].path, "/data/in");
  EXPECT_EQ(slow[0].start_ns, 700);
  EXPECT_EQ(slow[1].duration_ns, 100);
  EXPECT_EQ(slow[2].duration_ns, 50);
}

TEST(Io, AForkChildInheritsItsParentsDescriptors) {
  SpoorTrace t;
  t.process(100, 1, "prog", {"prog"});
  t.process(200, 100, "prog", {"prog"});
  t.open(100, 100, 1000, 10, "/data/shared", 4);
  t.read(200, 200, 2000, 10, 4, 99);
  an::IoAnalysis io(spoor::reader::Clock{});
  Loaded l = load(t, {&io});
  const an::IoFile* shared = file(io, "/data/shared");
  ASSERT_NE(shared, nullptr);
  EXPECT_EQ(shared->totals.bytes_read, 99u);
  EXPECT_EQ(shared->pids, (std::vector<uint32_t>{100, 200}));
}

// fd 6 of one process and fd 6 of another are unrelated descriptors: with
// no name for them, each process's is its own row, never one "fd 6".
TEST(Io, UnnamedDescriptorsOfDifferentProcessesStayApart) {
  SpoorTrace t;
  t.process(100, 1, "sort", {"sort"});
  t.process(200, 1, "uniq", {"uniq"});
  t.read(100, 100, 1000, 10, 6, 40);
  t.write(200, 200, 2000, 10, 6, 7);
  t.read(100, 100, 3000, 10, 6, 2);
  an::IoAnalysis io(spoor::reader::Clock{});
  Loaded l = load(t, {&io});
  EXPECT_EQ(file(io, "fd 6"), nullptr);
  const an::IoFile* in_100 = file(io, "fd 6 in pid 100");
  const an::IoFile* in_200 = file(io, "fd 6 in pid 200");
  ASSERT_NE(in_100, nullptr);
  ASSERT_NE(in_200, nullptr);
  EXPECT_EQ(in_100->totals.bytes_read, 42u);
  EXPECT_EQ(in_100->totals.bytes_written, 0u);
  EXPECT_EQ(in_100->pids, (std::vector<uint32_t>{100}));
  EXPECT_EQ(in_200->totals.bytes_written, 7u);
  EXPECT_EQ(in_200->totals.bytes_read, 0u);
  EXPECT_EQ(in_200->pids, (std::vector<uint32_t>{200}));
}

// A call given no descriptor (a shell's close(-1), a write to a stream
// that has none) is one row that says so, not "fd -1 in pid P" and not a
// stdio stream.
TEST(Io, ANegativeDescriptorIsARowSayingThereIsNone) {
  SpoorTrace t;
  t.process(100, 1, "sh", {"sh"});
  t.write(100, 100, 1000, 10, -1, -9);
  an::IoAnalysis io(spoor::reader::Clock{});
  Loaded l = load(t, {&io});
  EXPECT_EQ(file(io, "fd -1 in pid 100"), nullptr);
  const an::IoFile* none = file(io, "(no descriptor: fd -1)");
  ASSERT_NE(none, nullptr);
  EXPECT_EQ(none->totals.errors, 1u);
  EXPECT_EQ(none->totals.writes, 1u);
}

// A pipe named by its inode is one object wherever it is held: the writes
// into one end (here by the process that made it) and the reads from the
// other (by a process that has it as stdin, possibly under another
// number) are one row; another pipe stays another row. Each is named by
// the programs that wrote to it and read from it.
TEST(Io, OnePipeIsOneRowAcrossItsEndsAndProcesses) {
  SpoorTrace t;
  t.process(100, 1, "sh", {"sh"});
  t.process(200, 1, "wc", {"wc"});
  t.fd_created(100, 100, 1000, 5, "pipe:[777]");
  t.fd_created(100, 100, 1000, 6, "pipe:[777]");
  t.fd_created(100, 100, 1100, 7, "pipe:[888]");
  t.write(100, 100, 2000, 10, 6, 30);
  t.write(100, 100, 2100, 10, 7, 5);
  t.fd_created(200, 200, 2600, 9, "pipe:[777]");
  t.read(200, 200, 3000, 10, 9, 30);
  an::IoAnalysis io(spoor::reader::Clock{});
  Loaded l = load(t, {&io});
  const an::IoFile* pipe = file(io, "pipe:[777]");
  ASSERT_NE(pipe, nullptr);
  EXPECT_EQ(pipe->writers, std::vector<std::string>{"sh"});
  EXPECT_EQ(pipe->readers, std::vector<std::string>{"wc"});
  EXPECT_EQ(pipe->totals.bytes_written, 30u);
  EXPECT_EQ(pipe->totals.bytes_read, 30u);
  EXPECT_EQ(pipe->totals.opens, 3u);
  EXPECT_EQ(pipe->pids, (std::vector<uint32_t>{100, 200}));
  const an::IoFile* other = file(io, "pipe:[888]");
  ASSERT_NE(other, nullptr);
  EXPECT_EQ(other->writers, std::vector<std::string>{"sh"});
  EXPECT_TRUE(other->readers.empty()) << "no traced program read it";
  EXPECT_EQ(other->totals.bytes_written, 5u);
  EXPECT_EQ(other->totals.bytes_read, 0u);
}

// Every program that wrote, in order of its first write, each once; a
// program on both sides is on both.
TEST(Io, APipeKeepsEveryWriterAndReaderOnce) {
  SpoorTrace t;
  t.process(100, 1, "make", {"/usr/bin/make", "-j4"});
  t.process(200, 100, "cc1", {"cc1", "a.c"});
  t.process(300, 100, "as", {"as"});
  t.process(400, 100, "ld", {"ld"});
  for (uint32_t pid : {100u, 200u, 300u, 400u}) t.fd_created(pid, pid, 1000, 5, "pipe:[9]");
  t.write(200, 200, 2000, 10, 5, 1);
  t.write(300, 300, 2100, 10, 5, 1);
  t.write(400, 400, 2200, 10, 5, 1);
  t.write(200, 200, 2300, 10, 5, 1);
  t.read(100, 100, 2400, 10, 5, 4);
  t.write(100, 100, 2500, 10, 5, 1);
  an::IoAnalysis io(spoor::reader::Clock{});
  Loaded l = load(t, {&io});
  const an::IoFile* pipe = file(io, "pipe:[9]");
  ASSERT_NE(pipe, nullptr);
  EXPECT_EQ(pipe->writers, (std::vector<std::string>{"cc1", "as", "ld", "make"}));
  EXPECT_EQ(pipe->readers, std::vector<std::string>{"make"});
}

// The parent reuses a number right after the fork, before the child's first
// event: the child's descriptors are the parent's at the Fork event.
TEST(Io, AForkChildGetsItsParentsDescriptorsAsAtTheFork) {
  SpoorTrace t;
  t.process(100, 1, "sh", {"sh"});
  t.process(200, 100, "sh", {"sh"});
  t.fd_created(100, 100, 1000, 4, "pipe:[1]");
  t.fork(100, 1100, 200);
  t.close(100, 100, 1200, 5, 4);
  t.fd_created(100, 100, 1300, 4, "pipe:[2]");
  t.write(200, 200, 1400, 10, 4, 9);
  an::IoAnalysis io(spoor::reader::Clock{});
  Loaded l = load(t, {&io});
  const an::IoFile* first = file(io, "pipe:[1]");
  ASSERT_NE(first, nullptr);
  EXPECT_EQ(first->totals.bytes_written, 9u);
  const an::IoFile* second = file(io, "pipe:[2]");
  ASSERT_NE(second, nullptr);
  EXPECT_EQ(second->totals.bytes_written, 0u);
}

// A relative path is the file under the working directory the process had
// then: ProcessStart's ("/work" in these traces), then each Chdir's; an
// openat's is under its directory descriptor's path.
TEST(Io, RelativeOpensAreTheirAbsoluteFile) {
  SpoorTrace t;
  t.process(100, 1, "db", {"db"});
  t.process_start(100, 900, 1, 0, "/bin/db");
  t.open(100, 100, 1000, 10, "t.db", -2);           // ENOENT: not made yet
  t.open(100, 100, 1100, 10, "/work/t.db", 3);
  t.write(100, 100, 1200, 10, 3, 5);
  t.open(100, 100, 1300, 10, "sub/.././t.db", 4);
  t.read(100, 100, 1400, 10, 4, 5);
  t.open(100, 100, 1500, 10, "/data", 5);
  t.open_at(100, 100, 1600, 5, "x/../y", 6);
  t.chdir(100, 100, 1700, -1, "/tmp/q", "", -2);    // failed: the directory stays
  t.open(100, 100, 1800, 10, "t.db", 7);
  t.chdir(100, 100, 1900, -1, "../srv", "/srv", 0);
  t.open(100, 100, 2000, 10, "t.db", 8);
  t.chdir(100, 100, 2100, 5, "", "", 0);            // fchdir(/data), no cwd given: from the descriptor
  t.open(100, 100, 2200, 10, "./z", 9);
  an::IoAnalysis io(spoor::reader::Clock{});
  Loaded l = load(t, {&io});
  const an::IoFile* db = file(io, "/work/t.db");
  ASSERT_NE(db, nullptr);
  EXPECT_EQ(db->totals.opens, 4u);
  EXPECT_EQ(db->totals.errors, 1u);
  EXPECT_EQ(db->totals.bytes_written, 5u);
  EXPECT_EQ(db->totals.bytes_read, 5u);
  EXPECT_EQ(file(io, "t.db"), nullptr);
  EXPECT_EQ(file(io, "sub/.././t.db"), nullptr);
  EXPECT_NE(file(io, "/data/y"), nullptr) << "openat on /data";
  EXPECT_NE(file(io, "/srv/t.db"), nullptr) << "after chdir";
  EXPECT_NE(file(io, "/data/z"), nullptr) << "after fchdir";
}

// Without ProcessStart the working directory is unknown: paths stay as passed.
TEST(Io, RelativeOpensStayRelativeWhenTheDirectoryIsUnknown) {
  SpoorTrace t;
  t.process(100, 1, "db", {"db"});
  t.open(100, 100, 1000, 10, "t.db", 3);
  an::IoAnalysis io(spoor::reader::Clock{});
  Loaded l = load(t, {&io});
  EXPECT_NE(file(io, "t.db"), nullptr);
}

// A socket's row is its peer's from its connect on, also one in progress
// (non-blocking); what its "socket:[ino]" row counted before, and what a
// fork child does with its copy, fold into it. A refused connect is an
// error of the peer it tried, and leaves the socket unnamed.
TEST(Io, ASocketIsNamedByItsPeer) {
  const Bytes peer = {2, 0, 0x1f, 0x90, 127, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0};  // 127.0.0.1:8080
  const Bytes refused = {2, 0, 0, 9, 127, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0};    // 127.0.0.1:9
  SpoorTrace t;
  t.process(100, 1, "client", {"client"});
  t.process(200, 100, "client", {"client"});
  t.fd_created(100, 100, 1000, 3, "socket:[77]");
  t.connect(100, 100, 1100, 3, peer, 1, -115);  // EINPROGRESS
  t.write(100, 100, 1200, 10, 3, 10);
  t.fork(100, 1300, 200);
  t.read(200, 200, 1400, 10, 3, 4);
  t.fd_created(100, 100, 1500, 4, "socket:[78]");
  t.connect(100, 100, 1600, 4, refused, 1, -111);  // ECONNREFUSED
  an::IoAnalysis io(spoor::reader::Clock{}, 10);
  Loaded l = load(t, {&io});
  const an::IoFile* named = file(io, "tcp 127.0.0.1:8080 (socket)");
  ASSERT_NE(named, nullptr);
  EXPECT_EQ(named->totals.opens, 1u) << "the socket() call, folded in";
  EXPECT_EQ(named->totals.other, 1u) << "the connect";
  EXPECT_EQ(named->totals.errors, 0u) << "EINPROGRESS is no failure";
  EXPECT_EQ(named->totals.bytes_written, 10u);
  EXPECT_EQ(named->totals.bytes_read, 4u) << "the fork child's copy";
  EXPECT_EQ(named->pids, (std::vector<uint32_t>{100, 200}));
  EXPECT_EQ(file(io, "socket:[77]"), nullptr);
  const an::IoFile* tried = file(io, "tcp 127.0.0.1:9 (socket)");
  ASSERT_NE(tried, nullptr);
  EXPECT_EQ(tried->totals.errors, 1u);
  EXPECT_NE(file(io, "socket:[78]"), nullptr) << "never connected";
  for (const an::IoOperation& op : io.slowest()) EXPECT_LT(op.file, io.files().size());
}

// A datagram socket that only sends to destinations it names (sendto),
// never connected nor bound, is named by the first destination; a second
// one in the same row is counted in the name. Receives on it count there.
TEST(Io, ADatagramSenderIsNamedByItsDestinations) {
  const Bytes dns = {2, 0, 0, 53, 10, 0, 0, 53, 0, 0, 0, 0, 0, 0, 0, 0};      // 10.0.0.53:53
  const Bytes other = {2, 0, 0, 53, 10, 0, 0, 54, 0, 0, 0, 0, 0, 0, 0, 0};    // 10.0.0.54:53
  const Bytes third = {2, 0, 0, 53, 10, 0, 0, 55, 0, 0, 0, 0, 0, 0, 0, 0};    // 10.0.0.55:53
  SpoorTrace t;
  t.process(100, 1, "resolver", {"resolver"});
  t.fd_created(100, 100, 1000, 3, "socket:[50]");
  t.socket(100, 100, 1000, 3, 2, 2, 0);
  t.send(100, 100, 1100, 3, dns, 30);
  t.receive(100, 100, 1200, 3, dns, 120);
  t.send(100, 100, 1300, 3, dns, 31);
  // A second socket: two destinations, one of them twice.
  t.fd_created(100, 100, 2000, 4, "socket:[51]");
  t.socket(100, 100, 2000, 4, 2, 2, 17);
  t.send(100, 100, 2100, 4, other, 10);
  t.send(100, 100, 2200, 4, third, 11);
  t.send(100, 100, 2300, 4, third, 12);
  t.send(100, 100, 2400, 4, other, -111);  // a failure names nothing new
  an::IoAnalysis io(spoor::reader::Clock{}, 10);
  Loaded l = load(t, {&io});
  const an::IoFile* one = file(io, "udp 10.0.0.53:53 (sendto)");
  ASSERT_NE(one, nullptr);
  EXPECT_EQ(one->totals.opens, 1u) << "the socket() call, folded in";
  EXPECT_EQ(one->totals.bytes_written, 61u);
  EXPECT_EQ(one->totals.bytes_read, 120u);
  EXPECT_EQ(file(io, "socket:[50]"), nullptr);
  const an::IoFile* two = file(io, "udp 10.0.0.54:53 (sendto, +1 more destination)");
  ASSERT_NE(two, nullptr);
  EXPECT_EQ(two->totals.writes, 4u);
  EXPECT_EQ(two->totals.bytes_written, 33u);
  EXPECT_EQ(two->totals.errors, 1u);
  EXPECT_EQ(file(io, "socket:[51]"), nullptr);
  for (const an::IoOperation& op : io.slowest()) EXPECT_LT(op.file, io.files().size());
}

// A datagram socket that sends to its peer, then connects to it, is one
// row, the connected one; one that sent elsewhere first keeps both rows.
TEST(Io, ADatagramSocketThatConnectsToWhereItSentIsOneRow) {
  const Bytes dns = {2, 0, 0, 53, 10, 0, 0, 53, 0, 0, 0, 0, 0, 0, 0, 0};    // 10.0.0.53:53
  const Bytes other = {2, 0, 0, 53, 10, 0, 0, 54, 0, 0, 0, 0, 0, 0, 0, 0};  // 10.0.0.54:53
  SpoorTrace t;
  t.process(100, 1, "resolver", {"resolver"});
  t.fd_created(100, 100, 1000, 3, "socket:[70]");
  t.socket(100, 100, 1000, 3, 2, 2, 0);
  t.send(100, 100, 1100, 3, dns, 30);
  t.connect(100, 100, 1200, 3, dns, 2, 0);
  t.write(100, 100, 1300, 10, 3, 40);
  t.fd_created(100, 100, 2000, 4, "socket:[71]");
  t.socket(100, 100, 2000, 4, 2, 2, 0);
  t.send(100, 100, 2100, 4, other, 5);
  t.connect(100, 100, 2200, 4, dns, 2, 0);
  an::IoAnalysis io(spoor::reader::Clock{}, 10);
  Loaded l = load(t, {&io});
  const an::IoFile* connected = file(io, "udp 10.0.0.53:53 (socket)");
  ASSERT_NE(connected, nullptr);
  EXPECT_EQ(connected->totals.bytes_written, 70u) << "the send before the connect and the write after";
  EXPECT_EQ(connected->totals.opens, 1u) << "its socket() call, folded in through the sends' row";
  EXPECT_EQ(file(io, "udp 10.0.0.53:53 (sendto)"), nullptr);
  const an::IoFile* elsewhere = file(io, "udp 10.0.0.54:53 (sendto)");
  ASSERT_NE(elsewhere, nullptr) << "its send went to another destination";
  EXPECT_EQ(elsewhere->totals.bytes_written, 5u);
  for (const an::IoOperation& op : io.slowest()) EXPECT_LT(op.file, io.files().size());
}

// What the trace says the socket is decides its protocol: an ICMP
// datagram socket (an unprivileged ping) is no udp; without a Socket event
// a socket sending to named destinations is taken for a datagram one; a
// stream socket's destination (TCP fast open) does not name it, nor does
// a send to a socket already named.
TEST(Io, ASendersProtocolIsItsSocketsKind) {
  const Bytes host = {2, 0, 0, 0, 192, 0, 2, 1, 0, 0, 0, 0, 0, 0, 0, 0};   // 192.0.2.1, port 0
  const Bytes peer = {2, 0, 0x1f, 0x90, 192, 0, 2, 2, 0, 0, 0, 0, 0, 0, 0, 0};  // 192.0.2.2:8080
  const Bytes local = {2, 0, 0x13, 0x88, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0};  // 0.0.0.0:5000
  SpoorTrace t;
  t.process(100, 1, "ping", {"ping"});
  t.fd_created(100, 100, 1000, 3, "socket:[60]");
  t.socket(100, 100, 1000, 3, 2, 2, 1);  // AF_INET, SOCK_DGRAM, IPPROTO_ICMP
  t.send(100, 100, 1100, 3, host, 64);
  t.fd_created(100, 100, 1200, 4, "socket:[61]");  // no Socket event
  t.send(100, 100, 1300, 4, peer, 5);
  t.fd_created(100, 100, 1400, 5, "socket:[62]");
  t.socket(100, 100, 1400, 5, 2, 1, 0);  // SOCK_STREAM
  t.send(100, 100, 1500, 5, peer, 7);
  t.fd_created(100, 100, 1600, 6, "socket:[63]");
  t.bind(100, 100, 1700, 6, local, 2, 0);
  t.send(100, 100, 1800, 6, peer, 9);
  an::IoAnalysis io(spoor::reader::Clock{}, 10);
  Loaded l = load(t, {&io});
  EXPECT_NE(file(io, "icmp 192.0.2.1:0 (sendto)"), nullptr);
  const an::IoFile* guessed = file(io, "udp 192.0.2.2:8080 (sendto)");
  ASSERT_NE(guessed, nullptr);
  EXPECT_EQ(guessed->totals.bytes_written, 5u) << "the stream socket's send is not in it";
  EXPECT_NE(file(io, "socket:[62]"), nullptr);
  const an::IoFile* bound = file(io, "udp 0.0.0.0:5000 (bound)");
  ASSERT_NE(bound, nullptr);
  EXPECT_EQ(bound->totals.bytes_written, 9u);
}

// A stream socket is a listener from its listen on, not from its bind:
// one bound and never listening stays "(bound)". A listen without a bind
// is named by the address the kernel gave it. In a trace without Listen
// events, an accept shows that the bound socket listens.
TEST(Io, AStreamSocketListensOnlyAfterListen) {
  const Bytes server = {2, 0, 0x1f, 0x90, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0};  // 0.0.0.0:8080
  const Bytes idle = {2, 0, 0x1f, 0x91, 127, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0};  // 127.0.0.1:8081
  const Bytes chosen = {2, 0, 0x9c, 0x40, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0};  // 0.0.0.0:40000
  const Bytes old = {2, 0, 0x1f, 0x92, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0};     // 0.0.0.0:8082
  const Bytes client = {2, 0, 0xc3, 0x50, 127, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0};  // 127.0.0.1:50000
  SpoorTrace t;
  t.process(100, 1, "server", {"server"});
  t.fd_created(100, 100, 1000, 3, "socket:[70]");
  t.bind(100, 100, 1100, 3, server, 1, 0);
  t.listen(100, 100, 1200, 3, server, 1, 0);
  t.fd_created(100, 100, 1300, 5, "socket:[90]");
  t.accept(100, 100, 1300, 3, client, 1, 5);
  t.fd_created(100, 100, 1400, 4, "socket:[71]");
  t.bind(100, 100, 1500, 4, idle, 1, 0);
  t.listen(100, 100, 1550, 4, {}, 1, -22);  // a failed listen leaves it bound
  t.fd_created(100, 100, 1600, 6, "socket:[72]");
  t.listen(100, 100, 1700, 6, chosen, 1, 0);
  t.fd_created(100, 100, 1800, 7, "socket:[73]");
  t.bind(100, 100, 1900, 7, old, 1, 0);
  t.fd_created(100, 100, 2000, 8, "socket:[91]");
  t.accept(100, 100, 2000, 7, client, 1, 8);
  an::IoAnalysis io(spoor::reader::Clock{}, 10);
  Loaded l = load(t, {&io});
  const an::IoFile* listening = file(io, "tcp 0.0.0.0:8080 (listening)");
  ASSERT_NE(listening, nullptr);
  EXPECT_EQ(listening->totals.opens, 1u) << "the socket() call, folded in";
  EXPECT_EQ(listening->totals.other, 3u) << "bind, listen and accept";
  EXPECT_EQ(file(io, "tcp 0.0.0.0:8080 (bound)"), nullptr) << "folded into the listener";
  const an::IoFile* bound = file(io, "tcp 127.0.0.1:8081 (bound)");
  ASSERT_NE(bound, nullptr);
  EXPECT_EQ(bound->totals.errors, 1u) << "the failed listen";
  EXPECT_EQ(file(io, "tcp 127.0.0.1:8081 (listening)"), nullptr);
  EXPECT_NE(file(io, "tcp 0.0.0.0:40000 (listening)"), nullptr);
  EXPECT_NE(file(io, "tcp 0.0.0.0:8082 (listening)"), nullptr);
  EXPECT_EQ(file(io, "tcp 0.0.0.0:8082 (bound)"), nullptr);
  EXPECT_NE(file(io, "tcp 127.0.0.1:50000 (socket)"), nullptr);
  for (const an::IoOperation& op : io.slowest()) EXPECT_LT(op.file, io.files().size());
}

}  // namespace
