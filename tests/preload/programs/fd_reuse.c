/* A program that puts its own socket on every descriptor from 3 to 63,
 * over whatever was there (the shim's connection to spoor record among
 * them, as a daemon that closes and reopens its descriptors does). Then:
 * it starts the static program argv[1] (which spoor record cannot trace,
 * and is told so), and forks a child that writes one byte on each of those
 * descriptors. It prints how many bytes came out of the socket's other
 * end: 61 alone, and nothing else of the shim's may come out or go
 * missing under spoor record. */
#include <fcntl.h>
#include <spawn.h>
#include <stdio.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

extern char** environ;

int main(int argc, char** argv) {
  if (argc < 2) return 2;
  int sv[2];
  if (socketpair(AF_UNIX, SOCK_STREAM, 0, sv) != 0) return 3;
  int reader = sv[0];
  if (reader < 64) {  // keep the reading end out of the range
    reader = fcntl(sv[0], F_DUPFD, 64);
    close(sv[0]);
  }
  for (int fd = 3; fd < 64; ++fd)
    if (fd != sv[1]) dup2(sv[1], fd);
  pid_t spawned;
  char* spawn_argv[] = {argv[1], "1", "spawned", NULL};
  if (posix_spawn(&spawned, argv[1], NULL, NULL, spawn_argv, environ) != 0) return 4;
  waitpid(spawned, NULL, 0);
  const pid_t child = fork();
  if (child == 0) {
    for (int fd = 3; fd < 64; ++fd) (void)!write(fd, "x", 1);
    _exit(0);
  }
  waitpid(child, NULL, 0);
  for (int fd = 3; fd < 64; ++fd) close(fd);
  char buf[4096];
  long total = 0;
  ssize_t n;
  while ((n = read(reader, buf, sizeof buf)) > 0) total += n;
  printf("%ld bytes\n", total);
  return 0;
}
