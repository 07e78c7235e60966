// Linux's own asynchronous I/O, through libaio (io_setup, io_submit,
// io_getevents) or, with "syscall", through syscall() itself: a 4,096-byte
// write, then a 1,000-byte read and a 100 + 100-byte vectored read of it,
// and an fdatasync, each batch submitted with one io_submit and collected
// with io_getevents.
//
//   spoor_test_linux_aio DIR [syscall|ring]
//
// ring: through libaio's io_submit, but each result reaped from the
// kernel's ring of results in user space, as qemu does, without
// io_getevents.
// Writes DIR/linux_aio.bin (4,096 bytes; 1,200 read back). Prints each
// result to stderr and "linux_aio: all results as expected", and exits 0
// when they are.
#define _GNU_SOURCE
#include <fcntl.h>
#include <libaio.h>
#include <sched.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <unistd.h>

static int use_syscall, reap_ring;
static int failures;

// The kernel's ring of results, at the context's address (fs/aio.c).
struct aio_ring {
  unsigned id, nr, head, tail, magic, compat_features, incompat_features, header_length;
  struct io_event events[];
};

// The next `count` results from the ring itself, spinning until they come.
static int reap_from_ring(io_context_t context, long count, struct io_event* events) {
  struct aio_ring* ring = (struct aio_ring*)context;
  for (long i = 0; i < count; ++i) {
    while (__atomic_load_n(&ring->tail, __ATOMIC_ACQUIRE) == ring->head) sched_yield();
    events[i] = ring->events[ring->head];
    __atomic_store_n(&ring->head, (ring->head + 1) % ring->nr, __ATOMIC_RELEASE);
  }
  return (int)count;
}

static int submit(io_context_t context, long count, struct iocb** blocks) {
  if (use_syscall) return (int)syscall(SYS_io_submit, context, count, blocks);
  return io_submit(context, count, blocks);
}

static int collect(io_context_t context, long count, struct io_event* events) {
  if (reap_ring) return reap_from_ring(context, count, events);
  if (use_syscall) return (int)syscall(SYS_io_getevents, context, count, count, events, NULL);
  return io_getevents(context, count, count, events, NULL);
}

// Submits `count` blocks and checks each result against its block's data.
static void run(io_context_t context, long count, struct iocb** blocks) {
  if (submit(context, count, blocks) != count) {
    fprintf(stderr, "linux_aio: io_submit failed\n");
    failures++;
    return;
  }
  struct io_event events[4];
  long got = 0;
  while (got < count) {
    const int n = collect(context, count - got, events);
    if (n <= 0) {
      fprintf(stderr, "linux_aio: io_getevents failed\n");
      failures++;
      return;
    }
    for (int i = 0; i < n; ++i) {
      fprintf(stderr, "linux_aio: %ld (expected %ld)\n", (long)events[i].res, (long)(size_t)events[i].data);
      if ((long)events[i].res != (long)(size_t)events[i].data) failures++;
    }
    got += n;
  }
}

int main(int argc, char** argv) {
  if (argc < 2) {
    fprintf(stderr, "usage: %s DIR [syscall]\n", argv[0]);
    return 2;
  }
  use_syscall = argc > 2 && strcmp(argv[2], "syscall") == 0;
  reap_ring = argc > 2 && strcmp(argv[2], "ring") == 0;
  char path[4096];
  snprintf(path, sizeof path, "%s/linux_aio.bin", argv[1]);
  const int fd = open(path, O_CREAT | O_RDWR | O_TRUNC, 0644);
  if (fd < 0) {
    perror(path);
    return 1;
  }
  io_context_t context = 0;
  const int error = use_syscall ? (int)syscall(SYS_io_setup, 8, &context) : io_setup(8, &context);
  if (error != 0) {
    fprintf(stderr, "linux_aio: io_setup failed\n");
    return 77;
  }
  static char out[4096], in[1000], a[100], b[100];
  memset(out, 'l', sizeof out);
  struct iocb write_block, read_block, vector_block, sync_block;
  struct iocb* blocks[2];
  // Each block's data is its expected result.
  io_prep_pwrite(&write_block, fd, out, sizeof out, 0);
  write_block.data = (void*)(size_t)4096;
  blocks[0] = &write_block;
  run(context, 1, blocks);
  io_prep_pread(&read_block, fd, in, sizeof in, 0);
  read_block.data = (void*)(size_t)1000;
  struct iovec vector[2] = {{a, sizeof a}, {b, sizeof b}};
  io_prep_preadv(&vector_block, fd, vector, 2, 100);
  vector_block.data = (void*)(size_t)200;
  blocks[0] = &read_block;
  blocks[1] = &vector_block;
  run(context, 2, blocks);
  io_prep_fdsync(&sync_block, fd);
  sync_block.data = (void*)(size_t)0;
  blocks[0] = &sync_block;
  run(context, 1, blocks);
  if (use_syscall) syscall(SYS_io_destroy, context);
  else io_destroy(context);
  close(fd);
  fprintf(stderr, "linux_aio: %s\n", failures == 0 ? "all results as expected" : "unexpected results");
  return failures == 0 ? 0 : 1;
}
