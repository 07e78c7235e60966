/* Prints the descriptor numbers the program's first open() and pipe() get
 * after it has allocated (so the shim has walked a stack by then): 3, 4 and
 * 5 when nothing else holds a descriptor above 2. */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

int main(void) {
  void* volatile block = malloc(100);
  const int fd = open("/dev/null", O_RDONLY);
  int ends[2] = {-1, -1};
  if (pipe(ends) != 0) return 1;
  printf("open %d, pipe %d %d\n", fd, ends[0], ends[1]);
  free(block);
  return 0;
}
