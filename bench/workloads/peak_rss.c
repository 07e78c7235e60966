/* libspoor-bench-peak-rss.so: preloaded next to a tracer's own library, it
 * writes each process's peak resident set size (VmHWM of /proc/self/status,
 * KiB) when the process exits, to the file PREFIX.NAME.PID, where PREFIX is
 * $SPOOR_BENCH_PEAK_RSS and NAME the program's file name. The traced
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
  const char* hwm = strstr(status, "VmHWM:");
  if (hwm == NULL) return;
  hwm += strlen("VmHWM:");
  while (*hwm == ' ' || *hwm == '\t') ++hwm;
  const size_t digits = strspn(hwm, "0123456789");
  const int out = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (out < 0) return;
  if (write(out, hwm, digits) != (ssize_t)digits || write(out, "\n", 1) != 1) { /* nowhere to report */ }
  close(out);
}
