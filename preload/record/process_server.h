// The recorder's end of protocol.h: a listening socket in the abstract
// namespace, the connections of traced images, and their Hello messages.
#ifndef SPOOR_PRELOAD_RECORD_PROCESS_SERVER_H
#define SPOOR_PRELOAD_RECORD_PROCESS_SERVER_H

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "../protocol.h"

namespace spoor::record {

struct Reply {
  preload::Answer answer = preload::Answer::not_traced;
  int region_fd = -1;       // sent with a traced answer
  uint32_t exec_count = 0;
  uint32_t ppid = 0;        // the process's parent, in the recorder's pid namespace
};

class ProcessServer {
 public:
  ProcessServer() = default;
  ProcessServer(const ProcessServer&) = delete;
  ProcessServer& operator=(const ProcessServer&) = delete;
  ~ProcessServer();

  // Listens on a fresh name, "<tmp>/spoor-XXXXXX/socket", twice: as an
  // abstract socket address (no file to clean up after a crash, reachable
  // from another mount namespace or a chroot) and as that file, in a
  // directory of mode 0700 (reachable from another network namespace,
  // where the abstract names are another set: unshare -n, ip netns exec, a
  // sandbox without network). False with *error set.
  bool listen(std::string* error);
  // The name for $SPOOR_SOCKET: both addresses (protocol.h).
  const std::string& name() const { return name_; }
  // The recording's unwind rule store (rule_store.h), -1 if none.
  int rule_store_fd() const { return rule_store_fd_; }

  // Waits up to timeout_ms for activity, accepts new connections, answers
  // their Hello with on_hello(pid, ppid) (the pid is the kernel's word for
  // the peer, not the message's), and reports connections that closed
  // after being answered with on_closed(pid). Peers of another user are
  // refused. `wake_fd` (recorder_wake.h), when not -1, ends the wait too:
  // returns whether it was readable.
  bool poll(int timeout_ms, const std::function<Reply(uint32_t pid, uint32_t ppid)>& on_hello,
            const std::function<void(uint32_t pid)>& on_closed, int wake_fd = -1);

  // Reads the notes still queued on every connection. A process may end,
  // and the recording with it, before a poll has read the notes it sent
  // just before it ended: call it before untraceable() and
  // own_allocators() are read at the end.
  void take_queued_notes();

  // Programs the traced processes exec'd but that could not be traced:
  // "PATH (WHY)", once each; not those whose every exec failed.
  std::vector<std::string> untraceable() const;
  // The objects whose own malloc kept images' heap calls from the hooks.
  const std::vector<std::string>& own_allocators() const { return own_allocators_; }
  // Programs that got no CPU samples, a debugger or tracer holding them
  // from their start, as "PROGRAM (TRACER)", each once.
  const std::vector<std::string>& samples_off() const { return samples_off_; }

  // Connections answered and still open.
  size_t open_connections() const { return connections_.size(); }

 private:
  struct Connection {
    int fd;
    uint32_t pid;
    bool answered;
  };
  void serve(Connection& c, const std::function<Reply(uint32_t, uint32_t)>& on_hello);
  // Reads every note queued on a traced process's connection; false when
  // the process closed it.
  bool take_notes(const Connection& c);

  int listen_fd_ = -1;  // the abstract address
  int rule_store_fd_ = -1;  // rule_store.h's, sent with every traced answer
  int path_fd_ = -1;    // the file; removed with its directory at the end
  std::string name_;
  std::string directory_;
  std::vector<Connection> connections_;
  // Per "PATH (WHY)": execs announced minus those that failed.
  struct Untraceable {
    std::string text;
    int runs;
  };
  std::vector<Untraceable> untraceable_;
  std::vector<std::string> own_allocators_;
  std::vector<std::string> samples_off_;
};

}  // namespace spoor::record

#endif  // SPOOR_PRELOAD_RECORD_PROCESS_SERVER_H
