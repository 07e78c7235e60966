// spoor record's end of the traced processes' socket
// (preload/record/process_server.h), driven by a client that speaks the
// shim's side of protocol.h.
#include <gtest/gtest.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cstring>
#include <string>
#include <vector>

#include "process_server.h"

namespace {

namespace preload = spoor::preload;
using spoor::record::ProcessServer;
using spoor::record::Reply;

// A traced image's connection, answered and welcomed.
int connect_traced(ProcessServer& server) {
  const int fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
  sockaddr_un addr;
  const socklen_t len = preload::abstract_address(server.name().c_str(), &addr);
  EXPECT_EQ(connect(fd, reinterpret_cast<const sockaddr*>(&addr), len), 0) << std::strerror(errno);
  const preload::Hello hello{preload::kProtocolMagic, preload::kProtocolVersion, static_cast<uint32_t>(getpid()), 1};
  EXPECT_TRUE(preload::send_message(fd, &hello, sizeof hello, -1));
  const int region = memfd_create("region", MFD_CLOEXEC);
  server.poll(1000, [&](uint32_t, uint32_t) { return Reply{preload::Answer::traced, region, 0, 1}; },
              [](uint32_t) {});
  close(region);
  preload::Welcome welcome{};
  int region_fd = -1;
  EXPECT_TRUE(preload::receive_message(fd, &welcome, sizeof welcome, &region_fd));
  EXPECT_EQ(welcome.answer, preload::Answer::traced);
  if (region_fd >= 0) close(region_fd);
  return fd;
}

void send_note(int fd, preload::NoteKind kind, const char* path, const char* why) {
  preload::UntraceableNote note{};
  note.magic = preload::kProtocolMagic;
  note.pid = static_cast<uint32_t>(getpid());
  note.kind = kind;
  std::strncpy(note.path, path, sizeof note.path - 1);
  std::strncpy(note.why, why, sizeof note.why - 1);
  ASSERT_EQ(send(fd, &note, sizeof note, 0), static_cast<ssize_t>(sizeof note));
}

TEST(ProcessServer, NotesQueuedBeforeTheImageClosedItsConnectionAreAllRead) {
  // A shell running "sh" tries each PATH directory in turn: a note and its
  // take-back for each exec that failed, then the one that ran, and the
  // exec closes the connection, all before the recorder polls.
  ProcessServer server;
  std::string error;
  ASSERT_TRUE(server.listen(&error)) << error;
  const int fd = connect_traced(server);
  send_note(fd, preload::kNoteUntraceable, "/opt/bin/sh", "shim hidden");
  send_note(fd, preload::kNoteExecFailed, "/opt/bin/sh", "shim hidden");
  send_note(fd, preload::kNoteUntraceable, "/usr/local/bin/sh", "shim hidden");
  send_note(fd, preload::kNoteExecFailed, "/usr/local/bin/sh", "shim hidden");
  send_note(fd, preload::kNoteUntraceable, "/usr/bin/sh", "shim hidden");
  send_note(fd, preload::kNoteOwnAllocator, "/usr/lib/libjemalloc.so.2", "");
  close(fd);
  std::vector<uint32_t> closed;
  server.poll(1000, [](uint32_t, uint32_t) { return Reply{}; }, [&](uint32_t pid) { closed.push_back(pid); });
  EXPECT_EQ(server.untraceable(), std::vector<std::string>{"/usr/bin/sh (shim hidden)"});
  EXPECT_EQ(server.own_allocators(), std::vector<std::string>{"/usr/lib/libjemalloc.so.2"});
  EXPECT_EQ(closed, std::vector<uint32_t>{static_cast<uint32_t>(getpid())});
  EXPECT_EQ(server.open_connections(), 0u);
}

TEST(ProcessServer, NotesOfAnOpenConnectionAreReadAsTheyCome) {
  ProcessServer server;
  std::string error;
  ASSERT_TRUE(server.listen(&error)) << error;
  const int fd = connect_traced(server);
  send_note(fd, preload::kNoteUntraceable, "/bin/static", "static binary");
  server.poll(1000, [](uint32_t, uint32_t) { return Reply{}; }, [](uint32_t) {});
  EXPECT_EQ(server.untraceable(), std::vector<std::string>{"/bin/static (static binary)"});
  EXPECT_EQ(server.open_connections(), 1u);
  send_note(fd, preload::kNoteExecFailed, "/bin/static", "static binary");
  server.poll(1000, [](uint32_t, uint32_t) { return Reply{}; }, [](uint32_t) {});
  EXPECT_TRUE(server.untraceable().empty());
  close(fd);
}

}  // namespace
