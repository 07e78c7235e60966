// Sockets and relative paths with known traffic, in one process, all on
// this machine (loopback and unix sockets, a directory given as argv[1],
// which must be absolute and free of symbolic links):
//
//   tcp   a listener on 127.0.0.1 (port from the kernel); a non-blocking
//         connect to it (EINPROGRESS, then blocking again); accept with no
//         address buffer; client send 1000, server recv 1000; server
//         sendmsg 300 (two vectors), client recvfrom 300 with no address;
//         client write 50, server read 50.
//   udp   a socket bound to 127.0.0.1 (port from the kernel); another
//         connects to it and sends 64; the first recvfroms 64 with the
//         source address.
//   unix  a stream listener bound to DIR/s.sock; a client connects and
//         sends 20; accept4 gives the server end, which receives 20. A
//         datagram socket bound to the abstract name "spoor-net-PID" gets
//         7 bytes sent with sendto from an unbound one.
//   dgram a udp socket bound to 127.0.0.1 (port from the kernel) gets,
//         from a socket never connected nor bound, 40 bytes by sendto,
//         then 10, 20 and 30 bytes in one sendmmsg; it receives the 40
//         with recv and the three with one recvmmsg (60 bytes). A tcp
//         socket is bound to 127.0.0.1 (port from the kernel) and never
//         listens.
//   cwd   chdir(DIR); open("t.db") fails (not there yet); DIR/t.db made
//         by its absolute path (5 bytes written); mkdir sub; reopened as
//         "sub/../t.db" (5 read), then as "t.db" through openat on a
//         descriptor of DIR after chdir("sub") (5 read), then after
//         fchdir back to DIR as "./t.db" (5 read).
//
// Prints "tcp PORT", "udp PORT", "abstract NAME", "dgram PORT" and "idle
// PORT" lines; exits 0 when
// every byte arrived.
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <sys/un.h>
#include <unistd.h>

static char buffer[4096];

static int bound_inet(int type, struct sockaddr_in* address) {
  const int fd = socket(AF_INET, type, 0);
  memset(address, 0, sizeof *address);
  address->sin_family = AF_INET;
  address->sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t length = sizeof *address;
  if (fd < 0 || bind(fd, (struct sockaddr*)address, sizeof *address) != 0 ||
      getsockname(fd, (struct sockaddr*)address, &length) != 0)
    return -1;
  return fd;
}

// Receives exactly n bytes with recv (recvfrom when `from` is set).
static int receive_all(int fd, size_t n, int from) {
  size_t got = 0;
  while (got < n) {
    const ssize_t r = from ? recvfrom(fd, buffer, n - got, 0, NULL, NULL) : recv(fd, buffer, n - got, 0);
    if (r <= 0) return -1;
    got += (size_t)r;
  }
  return 0;
}

static int tcp(void) {
  struct sockaddr_in address;
  const int listener = bound_inet(SOCK_STREAM, &address);
  if (listener < 0 || listen(listener, 4) != 0) return 10;
  printf("tcp %u\n", ntohs(address.sin_port));
  const int client = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK, 0);
  if (client < 0) return 11;
  if (connect(client, (struct sockaddr*)&address, sizeof address) != 0) {
    if (errno != EINPROGRESS) return 12;
    struct pollfd p = {.fd = client, .events = POLLOUT};
    if (poll(&p, 1, 5000) != 1) return 13;
  }
  if (fcntl(client, F_SETFL, 0) != 0) return 14;
  const int server = accept(listener, NULL, NULL);
  if (server < 0) return 15;
  memset(buffer, 't', sizeof buffer);
  if (send(client, buffer, 1000, 0) != 1000 || receive_all(server, 1000, 0) != 0) return 16;
  struct iovec parts[2] = {{buffer, 100}, {buffer + 100, 200}};
  struct msghdr message = {.msg_iov = parts, .msg_iovlen = 2};
  if (sendmsg(server, &message, 0) != 300 || receive_all(client, 300, 1) != 0) return 17;
  if (write(client, buffer, 50) != 50 || read(server, buffer, 50) != 50) return 18;
  close(server);
  close(client);
  close(listener);
  return 0;
}

static int udp(void) {
  struct sockaddr_in address, source;
  const int receiver = bound_inet(SOCK_DGRAM, &address);
  const int sender = socket(AF_INET, SOCK_DGRAM, 0);
  if (receiver < 0 || sender < 0) return 20;
  printf("udp %u\n", ntohs(address.sin_port));
  if (connect(sender, (struct sockaddr*)&address, sizeof address) != 0) return 21;
  if (send(sender, buffer, 64, 0) != 64) return 22;
  socklen_t length = sizeof source;
  if (recvfrom(receiver, buffer, sizeof buffer, 0, (struct sockaddr*)&source, &length) != 64) return 23;
  close(sender);
  close(receiver);
  return 0;
}

static int unix_sockets(const char* dir) {
  struct sockaddr_un address = {.sun_family = AF_UNIX};
  snprintf(address.sun_path, sizeof address.sun_path, "%s/s.sock", dir);
  const int listener = socket(AF_UNIX, SOCK_STREAM, 0);
  if (listener < 0 || bind(listener, (struct sockaddr*)&address, sizeof address) != 0 || listen(listener, 4) != 0)
    return 30;
  const int client = socket(AF_UNIX, SOCK_STREAM, 0);
  if (client < 0 || connect(client, (struct sockaddr*)&address, sizeof address) != 0) return 31;
  struct sockaddr_un peer;
  socklen_t length = sizeof peer;
  const int server = accept4(listener, (struct sockaddr*)&peer, &length, SOCK_CLOEXEC);
  if (server < 0) return 32;
  if (send(client, buffer, 20, 0) != 20 || receive_all(server, 20, 0) != 0) return 33;
  close(server);
  close(client);
  close(listener);
  unlink(address.sun_path);

  // Abstract: no file, the name starts with a NUL; the length says where
  // it ends.
  struct sockaddr_un abstract = {.sun_family = AF_UNIX};
  const int n = snprintf(abstract.sun_path + 1, sizeof abstract.sun_path - 1, "spoor-net-%d", (int)getpid());
  const socklen_t abstract_length = (socklen_t)(offsetof(struct sockaddr_un, sun_path) + 1 + (size_t)n);
  printf("abstract %s\n", abstract.sun_path + 1);
  const int receiver = socket(AF_UNIX, SOCK_DGRAM, 0), sender = socket(AF_UNIX, SOCK_DGRAM, 0);
  if (receiver < 0 || sender < 0 || bind(receiver, (struct sockaddr*)&abstract, abstract_length) != 0) return 34;
  if (sendto(sender, buffer, 7, 0, (struct sockaddr*)&abstract, abstract_length) != 7) return 35;
  if (recv(receiver, buffer, sizeof buffer, 0) != 7) return 36;
  close(sender);
  close(receiver);
  return 0;
}

static int datagrams(void) {
  struct sockaddr_in address;
  const int receiver = bound_inet(SOCK_DGRAM, &address);
  const int sender = socket(AF_INET, SOCK_DGRAM, 0);
  if (receiver < 0 || sender < 0) return 50;
  printf("dgram %u\n", ntohs(address.sin_port));
  if (sendto(sender, buffer, 40, 0, (struct sockaddr*)&address, sizeof address) != 40) return 51;
  if (recv(receiver, buffer, sizeof buffer, 0) != 40) return 52;
  struct iovec parts[3] = {{buffer, 10}, {buffer, 20}, {buffer, 30}};
  struct mmsghdr out[3];
  memset(out, 0, sizeof out);
  for (int i = 0; i < 3; ++i) {
    out[i].msg_hdr.msg_name = &address;
    out[i].msg_hdr.msg_namelen = sizeof address;
    out[i].msg_hdr.msg_iov = &parts[i];
    out[i].msg_hdr.msg_iovlen = 1;
  }
  if (sendmmsg(sender, out, 3, 0) != 3) return 53;
  // Loopback queues the three at once: one recvmmsg gets them all.
  static char slots[3][100];
  struct iovec in_parts[3] = {{slots[0], 100}, {slots[1], 100}, {slots[2], 100}};
  struct mmsghdr in[3];
  memset(in, 0, sizeof in);
  for (int i = 0; i < 3; ++i) {
    in[i].msg_hdr.msg_iov = &in_parts[i];
    in[i].msg_hdr.msg_iovlen = 1;
  }
  if (recvmmsg(receiver, in, 3, MSG_WAITFORONE, NULL) != 3) return 54;
  if (in[0].msg_len + in[1].msg_len + in[2].msg_len != 60) return 55;
  close(sender);
  close(receiver);

  struct sockaddr_in idle_address;
  const int idle = bound_inet(SOCK_STREAM, &idle_address);
  if (idle < 0) return 56;
  printf("idle %u\n", ntohs(idle_address.sin_port));
  close(idle);
  return 0;
}

static int read_five(int fd) {
  const int ok = fd >= 0 && read(fd, buffer, sizeof buffer) == 5;
  if (fd >= 0) close(fd);
  return ok;
}

static int relative_paths(const char* dir) {
  if (chdir(dir) != 0) return 40;
  if (open("t.db", O_RDONLY) >= 0 || errno != ENOENT) return 41;
  char absolute[4096];
  snprintf(absolute, sizeof absolute, "%s/t.db", dir);
  const int made = open(absolute, O_CREAT | O_WRONLY | O_TRUNC, 0600);
  if (made < 0 || write(made, "hello", 5) != 5 || close(made) != 0) return 42;
  if (mkdir("sub", 0700) != 0) return 43;
  if (!read_five(open("sub/../t.db", O_RDONLY))) return 44;
  const int directory = open(dir, O_RDONLY | O_DIRECTORY);
  if (directory < 0 || chdir("sub") != 0) return 45;
  if (!read_five(openat(directory, "t.db", O_RDONLY))) return 46;
  if (fchdir(directory) != 0 || close(directory) != 0) return 47;
  if (!read_five(open("./t.db", O_RDONLY))) return 48;
  return 0;
}

int main(int argc, char** argv) {
  if (argc != 2 || argv[1][0] != '/') return 2;
  int status = tcp();
  if (status == 0) status = udp();
  if (status == 0) status = unix_sockets(argv[1]);
  if (status == 0) status = datagrams();
  if (status == 0) status = relative_paths(argv[1]);
  fflush(stdout);
  return status;
}
