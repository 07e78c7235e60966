/* libspoor-bench-peak-rss.so: preloaded next to a tracer's own library, it
 * writes each process's peak resident set size (VmHWM of /proc/self/status,
 * KiB) when the process exits, to the file PREFIX.NAME.PID, where PREFIX is
 * $SPOOR_BENCH_PEAK_RSS and NAME the program's file name, followed by its
 * shared memory resident then (RssShmem, KiB): spoor record's rings, which
 * stay mapped to the end and are the recorder's memory as much as the
 * program's. The traced
 * program's peak then includes what the tracer added inside it; the
 * tracer's own processes (recorder, interpreter, compressor) inherit the
 * preload too and report under their own names. heaptrack and spoor record
 * both keep an LD_PRELOAD they find, after their own library.
 *
 * Why not getrusage's ru_maxrss (or /usr/bin/time's %M): it survives exec,
 * so it also holds the peak of whatever forked the program before the exec
 * (for spoor record, the recorder); VmHWM belongs to this image's memory
 * only. No stdio streams, which would allocate (snprintf into a stack
 * buffer does not). */
#define _GNU_SOURCE /* program_invocation_short_name, from errno.h */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* The number after `name` in /proc/self/status text, and its length. */
static const char* kib_field(const char* status, const char* name, size_t* digits) {
  const char* at = strstr(status, name);
  if (at == NULL) return NULL;
  at += strlen(name);
  while (*at == ' ' || *at == '\t') ++at;
  *digits = strspn(at, "0123456789");
  return at;
}

__attribute__((destructor)) static void report_peak_rss(void) {
  const char* prefix = getenv("SPOOR_BENCH_PEAK_RSS");
  if (prefix == NULL || *prefix == '\0') return;
  char path[4096];
  const int len = snprintf(path, sizeof path, "%s.%s.%ld", prefix, program_invocation_short_name, (long)getpid());
  if (len < 0 || (size_t)len >= sizeof path) return;
  char status[4096];
  const int in = open("/proc/self/status", O_RDONLY | O_CLOEXEC);
  if (in < 0) return;
  const ssize_t n = read(in, status, sizeof status - 1);
  close(in);
  if (n <= 0) return;
  status[n] = '\0';
  size_t hwm_digits = 0, shmem_digits = 0;
  const char* hwm = kib_field(status, "VmHWM:", &hwm_digits);
  if (hwm == NULL) return;
  const char* shmem = kib_field(status, "RssShmem:", &shmem_digits);
  const int out = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (out < 0) return;
  if (write(out, hwm, hwm_digits) != (ssize_t)hwm_digits ||
      (shmem != NULL && (write(out, " ", 1) != 1 || write(out, shmem, shmem_digits) != (ssize_t)shmem_digits)) ||
      write(out, "\n", 1) != 1) { /* nowhere to report */ }
  close(out);
}
