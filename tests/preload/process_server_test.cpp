// spoor record's end of the traced processes' socket
// (preload/record/process_server.h), driven by a client that speaks the
// shim's side of protocol.h.
#include <gtest/gtest.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstring>
#include <string>
#include <vector>

#include "../shared_rules.h"
#include "process_server.h"

namespace {

namespace preload = spoor::preload;
using spoor::record::ProcessServer;
using spoor::record::Reply;

// A traced image's connection, answered and welcomed. *rule_store gets
// the rule store's descriptor when asked for (else it is closed).
int connect_traced(ProcessServer& server, int* rule_store = nullptr) {
  const int fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
  sockaddr_un addr;
  const socklen_t len = preload::abstract_address(server.name().c_str(), &addr);
  EXPECT_EQ(connect(fd, reinterpret_cast<const sockaddr*>(&addr), len), 0) << std::strerror(errno);
  const preload::Hello hello{preload::kProtocolMagic, preload::kProtocolVersion, static_cast<uint32_t>(getpid()), 1};
  EXPECT_TRUE(preload::send_message(fd, &hello, sizeof hello));
  const int region = memfd_create("region", MFD_CLOEXEC);
  server.poll(1000, [&](uint32_t, uint32_t) { return Reply{preload::Answer::traced, region, 0, 1}; },
              [](uint32_t) {});
  close(region);
  preload::Welcome welcome{};
  int fds[2];
  EXPECT_TRUE(preload::receive_message(fd, &welcome, sizeof welcome, fds, 2));
  EXPECT_EQ(welcome.answer, preload::Answer::traced);
  EXPECT_GE(fds[0], 0) << "the region";
  if (fds[0] >= 0) close(fds[0]);
  if (rule_store != nullptr) *rule_store = fds[1];
  else if (fds[1] >= 0) close(fds[1]);
  return fd;
}

TEST(ProcessServer, EveryTracedImageGetsTheRecordingsOneRuleStore) {
  ProcessServer server;
  std::string error;
  ASSERT_TRUE(server.listen(&error)) << error;
  int stores[2];
  const int first = connect_traced(server, &stores[0]);
  const int second = connect_traced(server, &stores[1]);
  struct stat st[2];
  for (int i = 0; i < 2; ++i) {
    ASSERT_GE(stores[i], 0) << "image " << i << " was sent no rule store";
    ASSERT_EQ(fstat(stores[i], &st[i]), 0);
  }
  EXPECT_EQ(st[0].st_ino, st[1].st_ino) << "one store for the recording, not one per image";
  EXPECT_EQ(st[0].st_size, static_cast<off_t>(preload::shared_rules_bytes()));
  void* p = mmap(nullptr, sizeof(preload::SharedRulesHeader), PROT_READ, MAP_SHARED, stores[0], 0);
  ASSERT_NE(p, MAP_FAILED);
  const auto* header = static_cast<const preload::SharedRulesHeader*>(p);
  EXPECT_EQ(header->magic, preload::kSharedRulesMagic);
  EXPECT_EQ(header->version, preload::kSharedRulesVersion);
  EXPECT_EQ(header->slot_count, uint64_t{1} << preload::kSharedRuleSlotsLog2);
  munmap(p, sizeof(preload::SharedRulesHeader));
  for (const int fd : {stores[0], stores[1], first, second}) close(fd);
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

// A process that ends right after it sent its notes can end the recording
// before any poll read them: the recorder reads what is queued at the end.
TEST(ProcessServer, NotesLeftUnpolledAtTheEndAreRead) {
  ProcessServer server;
  std::string error;
  ASSERT_TRUE(server.listen(&error)) << error;
  const int fd = connect_traced(server);
  send_note(fd, preload::kNoteOwnAllocator, "/usr/bin/own-malloc", "");
  send_note(fd, preload::kNoteUntraceable, "/bin/static", "static binary");
  close(fd);
  EXPECT_TRUE(server.own_allocators().empty()) << "nothing read before the end";
  server.take_queued_notes();
  EXPECT_EQ(server.own_allocators(), std::vector<std::string>{"/usr/bin/own-malloc"});
  EXPECT_EQ(server.untraceable(), std::vector<std::string>{"/bin/static (static binary)"});
}

}  // namespace
