// File I/O through io_uring with liburing, the way a program uses it:
// requests prepared with the inline io_uring_prep_* functions and handed
// over with io_uring_submit, completions reaped with the inline
// io_uring_wait_cqe / io_uring_cqe_seen (the first wait goes through
// __io_uring_get_cqe when nothing has arrived yet).
//
//   spoor_test_uring DIR
//   spoor_test_uring --reaped-unseen
//
// Writes DIR/uring.bin: a 4,096-byte write and a 1,000 + 500-byte writev
// (5,596 bytes), an fsync, then reads them back: a 5,596-byte read and a
// 100 + 100-byte readv, a read on a closed descriptor (-EBADF), and a
// 100-byte read of the file registered with the ring (IOSQE_FIXED_FILE,
// index 0): 5,896 bytes read. Prints each completion's user_data and result to
// stderr, and exits 0 when every result is the expected one.
//
// --reaped-unseen: eight 200 ms timeouts handed over in one io_uring_submit
// on a ring of 8 entries and 8 completion slots, waited for with
// usleep and reaped with the inline io_uring_for_each_cqe and
// io_uring_cq_advance, then io_uring_queue_exit. No liburing call
// happens while they complete, so at the exit the completion ring has
// been reaped to its end: the slots of its newest completions (fewer than
// half a ring before the tail) still hold what the kernel wrote, the older
// ones may have been reused.
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <liburing.h>
#include <stdio.h>
#include <string.h>
#include <sys/uio.h>
#include <unistd.h>

static int failures;

// Reaps `count` completions, checking each against expected[user_data].
static void reap(struct io_uring* ring, int count, const int* expected) {
  for (int i = 0; i < count; ++i) {
    struct io_uring_cqe* cqe;
    const int error = io_uring_wait_cqe(ring, &cqe);
    if (error < 0) {
      fprintf(stderr, "uring: wait: %s\n", strerror(-error));
      failures++;
      return;
    }
    const unsigned long long data = io_uring_cqe_get_data64(cqe);
    fprintf(stderr, "uring: %llu -> %d\n", data, cqe->res);
    if (cqe->res != expected[data]) failures++;
    io_uring_cqe_seen(ring, cqe);
  }
}

static int reaped_unseen(void) {
  struct io_uring ring;
  struct io_uring_params params = {.flags = IORING_SETUP_CQSIZE, .cq_entries = 8};
  const int error = io_uring_queue_init_params(8, &ring, &params);
  if (error < 0) {
    fprintf(stderr, "uring: io_uring_queue_init_params: %s\n", strerror(-error));
    return 77;
  }
  struct __kernel_timespec wait = {.tv_sec = 0, .tv_nsec = 200 * 1000 * 1000};
  for (int i = 0; i < 8; ++i) {
    struct io_uring_sqe* sqe = io_uring_get_sqe(&ring);
    io_uring_prep_timeout(sqe, &wait, 0, 0);
    io_uring_sqe_set_data64(sqe, (unsigned long long)(i + 1));
  }
  io_uring_submit(&ring);
  // Wait without liburing (io_uring_peek_cqe calls it when nothing has
  // arrived), then reap with the inline io_uring_for_each_cqe.
  unsigned reaped = 0;
  for (int tries = 0; tries < 100 && io_uring_cq_ready(&ring) < 8; ++tries) usleep(20 * 1000);
  unsigned head;
  struct io_uring_cqe* cqe;
  io_uring_for_each_cqe(&ring, head, cqe) {
    if (cqe->res != -ETIME) failures++;
    ++reaped;
  }
  io_uring_cq_advance(&ring, reaped);
  io_uring_queue_exit(&ring);
  fprintf(stderr, "uring: reaped %u timeouts%s\n", reaped, failures == 0 ? "" : ", some unexpected");
  return failures == 0 && reaped == 8 ? 0 : 1;
}

int main(int argc, char** argv) {
  if (argc == 2 && strcmp(argv[1], "--reaped-unseen") == 0) return reaped_unseen();
  if (argc != 2) {
    fprintf(stderr, "usage: %s DIR\n", argv[0]);
    return 2;
  }
  char path[4096];
  snprintf(path, sizeof path, "%s/uring.bin", argv[1]);
  const int fd = open(path, O_CREAT | O_RDWR | O_TRUNC, 0644);
  if (fd < 0) {
    perror(path);
    return 1;
  }
  struct io_uring ring;
  const int error = io_uring_queue_init(8, &ring, 0);
  if (error < 0) {
    fprintf(stderr, "uring: io_uring_queue_init: %s\n", strerror(-error));
    return 77;  // io_uring is not allowed here
  }
  static char block[4096], first[1000], second[500], back[5596], small_a[100], small_b[100];
  memset(block, 'a', sizeof block);
  memset(first, 'b', sizeof first);
  memset(second, 'c', sizeof second);
  const int closed = dup(fd);
  close(closed);
  //             user_data: 0  1     2     3  4     5    6              7
  const int expected[] = {0, 4096, 1500, 0, 5596, 200, -9 /* EBADF */, 100};

  struct io_uring_sqe* sqe = io_uring_get_sqe(&ring);
  io_uring_prep_write(sqe, fd, block, sizeof block, 0);
  io_uring_sqe_set_data64(sqe, 1);
  struct iovec out[2] = {{first, sizeof first}, {second, sizeof second}};
  sqe = io_uring_get_sqe(&ring);
  io_uring_prep_writev(sqe, fd, out, 2, sizeof block);
  io_uring_sqe_set_data64(sqe, 2);
  io_uring_submit(&ring);
  reap(&ring, 2, expected);

  sqe = io_uring_get_sqe(&ring);
  io_uring_prep_fsync(sqe, fd, 0);
  io_uring_sqe_set_data64(sqe, 3);
  io_uring_submit_and_wait(&ring, 1);
  reap(&ring, 1, expected);

  sqe = io_uring_get_sqe(&ring);
  io_uring_prep_read(sqe, fd, back, sizeof back, 0);
  io_uring_sqe_set_data64(sqe, 4);
  struct iovec in[2] = {{small_a, sizeof small_a}, {small_b, sizeof small_b}};
  sqe = io_uring_get_sqe(&ring);
  io_uring_prep_readv(sqe, fd, in, 2, 0);
  io_uring_sqe_set_data64(sqe, 5);
  sqe = io_uring_get_sqe(&ring);
  io_uring_prep_read(sqe, closed, small_a, sizeof small_a, 0);
  io_uring_sqe_set_data64(sqe, 6);
  io_uring_submit(&ring);
  reap(&ring, 3, expected);

  // The file registered with the ring, then read by its index there.
  if (io_uring_register_files(&ring, &fd, 1) != 0) {
    fprintf(stderr, "uring: io_uring_register_files failed\n");
    failures++;
  }
  sqe = io_uring_get_sqe(&ring);
  io_uring_prep_read(sqe, 0, small_b, sizeof small_b, 0);
  sqe->flags |= IOSQE_FIXED_FILE;
  io_uring_sqe_set_data64(sqe, 7);
  io_uring_submit(&ring);
  reap(&ring, 1, expected);

  io_uring_queue_exit(&ring);
  close(fd);
  fprintf(stderr, "uring: %s\n", failures == 0 ? "all results as expected" : "unexpected results");
  return failures == 0 ? 0 : 1;
}
