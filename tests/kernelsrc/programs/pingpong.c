// Two threads passing a byte back and forth over two pipes, N round trips:
// each blocks in read() until the other writes, so every round trip is two
// context switches out while blocked (and two back in).
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

static int to_peer[2], to_main[2];
static int rounds;

static void* peer(void* arg) {
  (void)arg;
  char c;
  for (int i = 0; i < rounds; ++i) {
    if (read(to_peer[0], &c, 1) != 1) break;
    if (write(to_main[1], &c, 1) != 1) break;
  }
  return NULL;
}

int main(int argc, char** argv) {
  rounds = argc > 1 ? atoi(argv[1]) : 1000;
  if (pipe(to_peer) != 0 || pipe(to_main) != 0) return 1;
  pthread_t t;
  pthread_create(&t, NULL, peer, NULL);
  char c = 'x';
  for (int i = 0; i < rounds; ++i) {
    if (write(to_peer[1], &c, 1) != 1) return 2;
    if (read(to_main[0], &c, 1) != 1) return 3;
  }
  pthread_join(t, NULL);
  printf("%d rounds\n", rounds);
  return 0;
}
