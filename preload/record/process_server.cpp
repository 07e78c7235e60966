#include "process_server.h"

#include <poll.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>

#include "rule_store.h"

namespace spoor::record {

ProcessServer::~ProcessServer() {
  for (Connection& c : connections_) close(c.fd);
  if (listen_fd_ >= 0) close(listen_fd_);
  if (path_fd_ >= 0) close(path_fd_);
  if (rule_store_fd_ >= 0) close(rule_store_fd_);
  if (!directory_.empty()) {
    unlink(name_.c_str());
    rmdir(directory_.c_str());
  }
}

namespace {

int listening_socket(const sockaddr_un& addr, socklen_t len) {
  const int fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
  if (fd >= 0 && (bind(fd, reinterpret_cast<const sockaddr*>(&addr), len) != 0 || ::listen(fd, 128) != 0)) {
    const int err = errno;
    close(fd);
    errno = err;
    return -1;
  }
  return fd;
}

}  // namespace

bool ProcessServer::listen(std::string* error) {
  rule_store_fd_ = create_rule_store();
  // The directory: in $TMPDIR (when its socket path fits), else /tmp.
  const char* tmp = std::getenv("TMPDIR");
  std::string directory;
  for (const std::string& base : {std::string(tmp != nullptr && *tmp == '/' ? tmp : ""), std::string("/tmp")}) {
    directory = base + "/spoor-XXXXXX";
    if (!base.empty() && directory.size() + sizeof "/socket" <= sizeof(sockaddr_un::sun_path) &&
        mkdtemp(directory.data()) != nullptr) {
      directory_ = directory;
      break;
    }
  }
  if (!directory_.empty()) {
    name_ = directory_ + "/socket";
  } else {
    // No directory to be had: the abstract address alone, under a name
    // that is no path (the shim then tries no file).
    uint64_t nonce = 0;
    if (getrandom(&nonce, sizeof nonce, 0) != sizeof nonce) nonce = static_cast<uint64_t>(getpid()) * 2654435761u;
    char name[64];
    std::snprintf(name, sizeof name, "spoor-%d-%016llx", static_cast<int>(getpid()),
                  static_cast<unsigned long long>(nonce));
    name_ = name;
  }
  sockaddr_un addr;
  listen_fd_ = listening_socket(addr, preload::abstract_address(name_.c_str(), &addr));
  if (listen_fd_ >= 0 && !directory_.empty()) path_fd_ = listening_socket(addr, preload::path_address(name_.c_str(), &addr));
  if (listen_fd_ < 0 || (!directory_.empty() && path_fd_ < 0)) {
    *error = std::string("cannot listen for traced processes: ") + std::strerror(errno);
    return false;
  }
  return true;
}

void ProcessServer::serve(Connection& c, const std::function<Reply(uint32_t, uint32_t)>& on_hello) {
  preload::Hello hello{};
  int stray_fd = -1;
  errno = 0;
  const bool ok = preload::receive_message(c.fd, &hello, sizeof hello, &stray_fd, 1);
  if (stray_fd >= 0) close(stray_fd);
  if (!ok && (errno == EAGAIN || errno == EWOULDBLOCK)) return;  // not sent yet: the next poll
  ucred peer{};
  socklen_t peer_len = sizeof peer;
  preload::Welcome welcome{preload::kProtocolMagic, preload::Answer::not_traced, 0, 0, 0, 0};
  Reply reply;
  if (ok && hello.magic == preload::kProtocolMagic && hello.version == preload::kProtocolVersion &&
      getsockopt(c.fd, SOL_SOCKET, SO_PEERCRED, &peer, &peer_len) == 0 &&
      (peer.uid == getuid() || getuid() == 0)) {
    c.pid = static_cast<uint32_t>(peer.pid);
    reply = on_hello(c.pid, hello.ppid);
    welcome.answer = reply.answer;
    welcome.exec_count = reply.exec_count;
    welcome.pid = c.pid;
    welcome.ppid = reply.ppid;
  }
  const int fds[] = {reply.region_fd, rule_store_fd_};
  const int count = welcome.answer != preload::Answer::traced ? 0 : rule_store_fd_ >= 0 ? 2 : 1;
  preload::send_message(c.fd, &welcome, sizeof welcome, fds, count);
  c.answered = welcome.answer == preload::Answer::traced;
}

std::vector<std::string> ProcessServer::untraceable() const {
  std::vector<std::string> ran;
  for (const Untraceable& u : untraceable_)
    if (u.runs > 0) ran.push_back(u.text);
  return ran;
}

bool ProcessServer::take_notes(const Connection& c) {
  // Every note queued, not one per poll: a process that tries PATH's
  // directories one exec at a time sends a note and its take-back for
  // each, then closes the connection when an exec succeeds. Read one at a
  // time, the hangup would drop the rest.
  for (;;) {
    preload::UntraceableNote note{};
    const ssize_t n = recv(c.fd, &note, sizeof note, MSG_DONTWAIT);
    if (n == 0) return false;
    if (n < 0) return errno != ECONNRESET;
    if (n != static_cast<ssize_t>(sizeof note) || note.magic != preload::kProtocolMagic) continue;
    note.path[sizeof note.path - 1] = note.why[sizeof note.why - 1] = '\0';
    const bool own = note.kind == preload::kNoteOwnAllocator;
    const std::string text = own ? std::string(note.path) : std::string(note.path) + " (" + note.why + ")";
    if (own || note.kind == preload::kNoteSamplesOff) {
      std::vector<std::string>& list = own ? own_allocators_ : samples_off_;
      if (std::find(list.begin(), list.end(), text) == list.end()) list.push_back(text);
      continue;
    }
    // Counted: one process's failed exec of a program takes back its own
    // note, not another's that ran.
    auto it = std::find_if(untraceable_.begin(), untraceable_.end(),
                           [&](const Untraceable& u) { return u.text == text; });
    if (it == untraceable_.end()) it = untraceable_.insert(untraceable_.end(), Untraceable{text, 0});
    it->runs += note.kind == preload::kNoteExecFailed ? -1 : 1;
  }
}

void ProcessServer::take_queued_notes() {
  for (const Connection& c : connections_)
    if (c.answered) (void)take_notes(c);
}

bool ProcessServer::poll(int timeout_ms, const std::function<Reply(uint32_t, uint32_t)>& on_hello,
                         const std::function<void(uint32_t)>& on_closed, int wake_fd) {
  std::vector<pollfd> fds;
  fds.push_back({listen_fd_, POLLIN, 0});
  fds.push_back({path_fd_, POLLIN, 0});
  constexpr size_t kListening = 2;
  for (const Connection& c : connections_) fds.push_back({c.fd, POLLIN, 0});
  if (wake_fd >= 0) fds.push_back({wake_fd, POLLIN, 0});  // last: the indexes above stay
  if (::poll(fds.data(), fds.size(), timeout_ms) <= 0) return false;
  const bool woken = wake_fd >= 0 && (fds.back().revents & POLLIN);
  // Connections first (their indexes match fds[kListening..]), then new ones.
  std::vector<Connection> kept;
  for (size_t i = 0; i < connections_.size(); ++i) {
    Connection& c = connections_[i];
    const short ev = fds[i + kListening].revents;
    if (ev & POLLIN && c.pid == 0) {
      serve(c, on_hello);
    } else if (ev & POLLIN) {
      if (!take_notes(c)) fds[i + kListening].revents |= POLLHUP;
    }
    const short ev_now = fds[i + kListening].revents;
    const bool closed = (ev_now & (POLLHUP | POLLERR)) || (c.pid != 0 && !c.answered);
    if (closed) {
      if (c.answered) on_closed(c.pid);
      close(c.fd);
      continue;
    }
    kept.push_back(c);
  }
  connections_ = std::move(kept);
  for (size_t l = 0; l < kListening; ++l) {
    if (!(fds[l].revents & POLLIN)) continue;
    for (;;) {
      const int fd = accept4(fds[l].fd, nullptr, nullptr, SOCK_CLOEXEC | SOCK_NONBLOCK);
      if (fd < 0) break;
      // The Hello follows the connect at once: answer it now, not a poll
      // later, since the process waits for the answer before it runs on.
      Connection c{fd, 0, false};
      serve(c, on_hello);
      if (c.pid != 0 && !c.answered) {
        close(fd);  // refused
        continue;
      }
      connections_.push_back(c);
    }
  }
  return woken;
}

}  // namespace spoor::record
