// POSIX asynchronous I/O through every call Spoor interposes: aio_write
// and aio_fsync waited for with aio_suspend, lio_listio with LIO_WAIT and
// a LIO_NOP entry, aio_read64, and a read on a closed descriptor, which
// glibc accepts and fails later (aio_error EBADF). Each result is
// collected with aio_return (aio_return64 for the aio_read64).
//
//   spoor_test_aio DIR
//
// Writes DIR/aio.bin: 5,096 bytes; reads 5,096 + 100 of them back.
#define _GNU_SOURCE
#include <aio.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

static void wait_for(const struct aiocb* block) {
  const struct aiocb* list[1] = {block};
  while (aio_error(block) == EINPROGRESS) aio_suspend(list, 1, NULL);
}

int main(int argc, char** argv) {
  if (argc != 2) {
    fprintf(stderr, "usage: %s DIR\n", argv[0]);
    return 2;
  }
  char path[4096];
  snprintf(path, sizeof path, "%s/aio.bin", argv[1]);
  const int fd = open(path, O_CREAT | O_RDWR | O_TRUNC, 0644);
  if (fd < 0) return 1;
  static char first[4096], second[1000], back[5096], again[100];
  memset(first, 'a', sizeof first);
  memset(second, 'b', sizeof second);

  struct aiocb w1 = {.aio_fildes = fd, .aio_buf = first, .aio_nbytes = sizeof first, .aio_offset = 0};
  struct aiocb w2 = {.aio_fildes = fd, .aio_buf = second, .aio_nbytes = sizeof second, .aio_offset = 4096};
  if (aio_write(&w1) != 0 || aio_write(&w2) != 0) return 1;
  wait_for(&w1);
  wait_for(&w2);
  const ssize_t wrote = aio_return(&w1) + aio_return(&w2);
  struct aiocb sync = {.aio_fildes = fd};
  if (aio_fsync(O_SYNC, &sync) != 0) return 1;
  wait_for(&sync);
  const ssize_t synced = aio_return(&sync);

  struct aiocb r1 = {.aio_fildes = fd, .aio_lio_opcode = LIO_READ, .aio_buf = back, .aio_nbytes = 3000, .aio_offset = 0};
  struct aiocb r2 = {.aio_fildes = fd, .aio_lio_opcode = LIO_READ, .aio_buf = back + 3000, .aio_nbytes = 2096,
                     .aio_offset = 3000};
  struct aiocb nop = {.aio_fildes = fd, .aio_lio_opcode = LIO_NOP};
  struct aiocb* list[3] = {&r1, &nop, &r2};
  if (lio_listio(LIO_WAIT, list, 3, NULL) != 0) return 1;
  const ssize_t listed = aio_return(&r1) + aio_return(&r2);

  struct aiocb64 r3 = {.aio_fildes = fd, .aio_buf = again, .aio_nbytes = sizeof again, .aio_offset = 4000};
  if (aio_read64(&r3) != 0) return 1;
  while (aio_error64(&r3) == EINPROGRESS) usleep(100);
  const ssize_t read64 = aio_return64(&r3);

  close(fd);
  struct aiocb bad = {.aio_fildes = fd, .aio_buf = again, .aio_nbytes = sizeof again};
  const int submitted = aio_read(&bad);
  if (submitted == 0) wait_for(&bad);
  const int bad_error = submitted == 0 ? aio_error(&bad) : errno;
  const ssize_t bad_result = submitted == 0 ? aio_return(&bad) : -1;

  const int same = memcmp(back, first, 4096) == 0 && memcmp(back + 4096, second, 1000) == 0 &&
                   memcmp(again, first + 4000, 96) == 0 && memcmp(again + 96, second, 4) == 0;
  fprintf(stderr, "aio: wrote %zd, synced %zd, listed %zd, read64 %zd, closed fd: %s (%zd), same %d\n", wrote,
          synced, listed, read64, strerror(bad_error), bad_result, same);
  return wrote == 5096 && synced == 0 && listed == 5096 && read64 == 100 && bad_error == EBADF && same ? 0 : 1;
}
