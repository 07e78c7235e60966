// spoor_bench_uring: what following a program's io_uring ring adds per
// request. Reads 1 byte of /dev/zero per request, REQUESTS requests in
// batches of 8 handed over and waited for with one io_uring_submit_and_wait
// each, the completions reaped with the inline io_uring_for_each_cqe (the
// way a liburing program is written); prints the wall and the thread's CPU
// time per request:
//
//   spoor_bench_uring [REQUESTS]
//   spoor_bench_uring: requests=1000000 ns_per_request=... cpu_ns_per_request=...
//
// Run it plain, under spoor record, and under perf record of the kernel's
// io_uring tracepoints (bench/uring_compare.sh). A benchmark, not a test:
// exits 0 whatever it measured (1: io_uring not allowed here).
#include <fcntl.h>
#include <liburing.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static double now_ns(clockid_t clock) {
  struct timespec ts;
  clock_gettime(clock, &ts);
  return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

int main(int argc, char** argv) {
  const long requests = argc > 1 ? atol(argv[1]) : 1000000;
  const int fd = open("/dev/zero", O_RDONLY);
  struct io_uring ring;
  const int error = io_uring_queue_init(8, &ring, 0);
  if (fd < 0 || error < 0) {
    fprintf(stderr, "spoor_bench_uring: %s\n", fd < 0 ? "cannot open /dev/zero" : strerror(-error));
    return 1;
  }
  static char buffers[8][64];
  const double wall = now_ns(CLOCK_MONOTONIC), cpu = now_ns(CLOCK_THREAD_CPUTIME_ID);
  long done = 0, bad = 0;
  while (done < requests) {
    const int batch = requests - done < 8 ? (int)(requests - done) : 8;
    for (int i = 0; i < batch; ++i) {
      struct io_uring_sqe* sqe = io_uring_get_sqe(&ring);
      io_uring_prep_read(sqe, fd, buffers[i], 1, 0);
      io_uring_sqe_set_data64(sqe, (unsigned long long)(done + i));
    }
    io_uring_submit_and_wait(&ring, (unsigned)batch);
    unsigned head, seen = 0;
    struct io_uring_cqe* cqe;
    io_uring_for_each_cqe(&ring, head, cqe) {
      bad += cqe->res != 1;
      ++seen;
    }
    io_uring_cq_advance(&ring, seen);
    done += seen;
  }
  const double wall_ns = now_ns(CLOCK_MONOTONIC) - wall, cpu_ns = now_ns(CLOCK_THREAD_CPUTIME_ID) - cpu;
  io_uring_queue_exit(&ring);
  printf("spoor_bench_uring: requests=%ld ns_per_request=%.1f cpu_ns_per_request=%.1f failed=%ld\n", requests,
         wall_ns / (double)requests, cpu_ns / (double)requests, bad);
  return 0;
}
