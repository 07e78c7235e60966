/* Allocates and frees in a loop until the file argv[1] exists, having
 * first written its pid to argv[2]; then prints how it ended. For a test
 * that kills the recorder while it runs (recorder_gone_test.cpp). */
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

int main(int argc, char** argv) {
  if (argc < 3) return 2;
  FILE* pid = fopen(argv[2], "w");
  if (pid == NULL) return 1;
  fprintf(pid, "%d\n", (int)getpid());
  fclose(pid);
  unsigned long rounds = 0;
  while (access(argv[1], F_OK) != 0) {
    for (int i = 0; i < 1000; ++i) {
      void* volatile p = malloc(64 + (size_t)(i % 32));
      free(p);
    }
    ++rounds;
  }
  printf("stopped after %s\n", rounds > 0 ? "some rounds" : "no round");
  return 0;
}
