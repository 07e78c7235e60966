// File I/O through an io_uring ring driven with syscall(), without
// liburing, as fio's engine and Rust's io-uring crate drive theirs: the
// ring set up with io_uring_setup, its three parts mapped apart, entries
// written into the mapped queue, io_uring_enter to submit and wait,
// completions reaped by moving the queue's head.
//
//   spoor_test_uring_raw DIR
//   spoor_test_uring_raw --plain
//
// Writes DIR/uring_raw.bin: 3,000 bytes (user_data 1), then reads 1,000 of
// them back (user_data 2) and 50 on a closed descriptor (user_data 3,
// -EBADF), then registers the file with the ring (io_uring_register) and
// reads 100 bytes by its index there (user_data 4, IOSQE_FIXED_FILE). Prints each completion's user_data and result to stderr, and
// exits 0 when every result is the expected one (77 when io_uring is not
// allowed here).
//
// --plain: syscall() for other numbers behaves as glibc's: a result, -1
// and errno on failure, six arguments (mmap's offset the last), a clone
// without a stack of its own whose child returns 0 from it, and openat2
// (no glibc wrapper) of /dev/null with O_RDONLY | O_CLOEXEC, then with an
// open_how size too small (EINVAL). Prints "syscall: as expected" and
// exits 0, or says what differed.
#define _GNU_SOURCE
#include <errno.h>
#include <signal.h>
#include <sys/wait.h>
#include <fcntl.h>
#include <linux/io_uring.h>
#include <linux/openat2.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

struct ring {
  int fd;
  struct io_uring_params params;
  unsigned char* sq;
  unsigned char* cq;
  struct io_uring_sqe* sqes;
  size_t sq_size, cq_size, sqes_size;
};

static unsigned* at(unsigned char* base, unsigned offset) { return (unsigned*)(base + offset); }

static void queue(struct ring* r, unsigned char opcode, int fd, void* buffer, unsigned len, unsigned long long offset,
                  unsigned long long user_data) {
  unsigned* tail = at(r->sq, r->params.sq_off.tail);
  const unsigned mask = *at(r->sq, r->params.sq_off.ring_mask);
  const unsigned index = *tail & mask;
  struct io_uring_sqe* sqe = &r->sqes[index];
  memset(sqe, 0, sizeof *sqe);
  sqe->opcode = opcode;
  sqe->fd = fd;
  sqe->addr = (unsigned long long)buffer;
  sqe->len = len;
  sqe->off = offset;
  sqe->user_data = user_data;
  at(r->sq, r->params.sq_off.array)[index] = index;
  atomic_store_explicit((_Atomic unsigned*)tail, *tail + 1, memory_order_release);
}

static int failures;

static void submit_and_reap(struct ring* r, unsigned count, const int* expected) {
  const long submitted = syscall(SYS_io_uring_enter, r->fd, count, count, IORING_ENTER_GETEVENTS, NULL, 0);
  if (submitted != (long)count) {
    perror("io_uring_enter");
    failures++;
    return;
  }
  unsigned* head = at(r->cq, r->params.cq_off.head);
  const unsigned mask = *at(r->cq, r->params.cq_off.ring_mask);
  struct io_uring_cqe* cqes = (struct io_uring_cqe*)(r->cq + r->params.cq_off.cqes);
  unsigned reaped = 0;
  while (reaped < count) {
    const unsigned tail = atomic_load_explicit((_Atomic unsigned*)at(r->cq, r->params.cq_off.tail), memory_order_acquire);
    for (; *head != tail; ++reaped) {
      const struct io_uring_cqe* cqe = &cqes[*head & mask];
      fprintf(stderr, "uring_raw: %llu -> %d\n", (unsigned long long)cqe->user_data, cqe->res);
      if (cqe->res != expected[cqe->user_data]) failures++;
      atomic_store_explicit((_Atomic unsigned*)head, *head + 1, memory_order_release);
    }
  }
}

static int plain(void) {
  int bad = 0;
  if (syscall(SYS_getpid) != getpid()) bad |= 1;
  errno = 0;
  if (syscall(SYS_close, -1) != -1 || errno != EBADF) bad |= 2;
  // Six arguments: a page of a file mapped at offset 4096.
  char path[] = "/tmp/spoor-syscall-XXXXXX";
  const int fd = mkstemp(path);
  unlink(path);
  char page[8192];
  memset(page, 'x', 4096);
  memset(page + 4096, 'y', 4096);
  if (fd < 0 || write(fd, page, sizeof page) != (ssize_t)sizeof page) bad |= 4;
  const char* mapped = (const char*)syscall(SYS_mmap, NULL, 4096, PROT_READ, MAP_PRIVATE, fd, 4096);
  if (mapped == MAP_FAILED || mapped[0] != 'y') bad |= 8;
  else munmap((void*)mapped, 4096);
  close(fd);
  const long child = syscall(SYS_clone, SIGCHLD, 0, 0, 0, 0);
  if (child == 0) _exit(7);
  int status = 0;
  if (child < 0 || waitpid((pid_t)child, &status, 0) != child || !WIFEXITED(status) || WEXITSTATUS(status) != 7)
    bad |= 16;
  struct open_how how = {.flags = O_RDONLY | O_CLOEXEC, .mode = 0, .resolve = 0};
  const long null_fd = syscall(SYS_openat2, AT_FDCWD, "/dev/null", &how, sizeof how);
  if (null_fd < 0) bad |= 32;
  else close((int)null_fd);
  errno = 0;
  if (syscall(SYS_openat2, AT_FDCWD, "/dev/null", &how, 8) != -1 || errno != EINVAL) bad |= 64;
  if (bad != 0) fprintf(stderr, "syscall: differed (%d)\n", bad);
  else fprintf(stderr, "syscall: as expected\n");
  return bad == 0 ? 0 : 1;
}

int main(int argc, char** argv) {
  if (argc == 2 && strcmp(argv[1], "--plain") == 0) return plain();
  if (argc != 2) {
    fprintf(stderr, "usage: %s DIR\n", argv[0]);
    return 2;
  }
  char path[4096];
  snprintf(path, sizeof path, "%s/uring_raw.bin", argv[1]);
  const int fd = open(path, O_CREAT | O_RDWR | O_TRUNC, 0644);
  if (fd < 0) {
    perror(path);
    return 1;
  }
  struct ring r;
  memset(&r, 0, sizeof r);
  r.fd = (int)syscall(SYS_io_uring_setup, 4, &r.params);
  if (r.fd < 0) {
    perror("io_uring_setup");
    return 77;
  }
  r.sq_size = r.params.sq_off.array + r.params.sq_entries * sizeof(unsigned);
  r.cq_size = r.params.cq_off.cqes + r.params.cq_entries * sizeof(struct io_uring_cqe);
  r.sqes_size = r.params.sq_entries * sizeof(struct io_uring_sqe);
  r.sq = mmap(NULL, r.sq_size, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_POPULATE, r.fd, IORING_OFF_SQ_RING);
  r.cq = mmap(NULL, r.cq_size, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_POPULATE, r.fd, IORING_OFF_CQ_RING);
  r.sqes = mmap(NULL, r.sqes_size, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_POPULATE, r.fd, IORING_OFF_SQES);
  if (r.sq == MAP_FAILED || r.cq == MAP_FAILED || (void*)r.sqes == MAP_FAILED) {
    perror("mmap");
    return 1;
  }
  static char out[3000], in[1000];
  memset(out, 'r', sizeof out);
  const int closed = dup(fd);
  close(closed);
  //             user_data: 0  1     2     3              4
  const int expected[] = {0, 3000, 1000, -9 /* EBADF */, 100};
  queue(&r, IORING_OP_WRITE, fd, out, sizeof out, 0, 1);
  submit_and_reap(&r, 1, expected);
  queue(&r, IORING_OP_READ, fd, in, sizeof in, 0, 2);
  queue(&r, IORING_OP_READ, closed, in, 50, 0, 3);
  submit_and_reap(&r, 2, expected);
  // The file registered with the ring, then read by its index there.
  if (syscall(SYS_io_uring_register, r.fd, IORING_REGISTER_FILES, &fd, 1) != 0) {
    perror("io_uring_register");
    failures++;
  }
  queue(&r, IORING_OP_READ, 0, in, 100, 0, 4);
  r.sqes[(*at(r.sq, r.params.sq_off.tail) - 1) & *at(r.sq, r.params.sq_off.ring_mask)].flags |= IOSQE_FIXED_FILE;
  submit_and_reap(&r, 1, expected);
  munmap(r.sqes, r.sqes_size);
  munmap(r.cq, r.cq_size);
  munmap(r.sq, r.sq_size);
  close(r.fd);
  close(fd);
  fprintf(stderr, "uring_raw: %s\n", failures == 0 ? "all results as expected" : "unexpected results");
  return failures == 0 ? 0 : 1;
}
