/* N threads (argv[1], default 200) that allocate a little, then wait at a
 * barrier while main prints the process's peak RSS (VmHWM, in kB): a
 * server's idle threads. Used to bound what tracing adds per thread. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
static pthread_barrier_t b;
static void* f(void* a) { (void)a; for (int i = 0; i < 100; ++i) free(malloc(64 + i)); pthread_barrier_wait(&b); pthread_barrier_wait(&b); return NULL; }
int main(int argc, char** argv) {
  int n = argc > 1 ? atoi(argv[1]) : 200;
  pthread_barrier_init(&b, NULL, n + 1);
  pthread_t* t = calloc(n, sizeof *t);
  for (int i = 0; i < n; ++i) pthread_create(&t[i], NULL, f, NULL);
  pthread_barrier_wait(&b);
  FILE* s = fopen("/proc/self/status", "r");
  char line[256];
  while (fgets(line, sizeof line, s))
    if (!strncmp(line, "VmHWM:", 6)) printf("%ld\n", strtol(line + 6, NULL, 10));
  fclose(s);
  pthread_barrier_wait(&b);
  for (int i = 0; i < n; ++i) pthread_join(t[i], NULL);
  return 0;
}
