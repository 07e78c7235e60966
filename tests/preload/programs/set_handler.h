/* The test programs' way to install a plain handler: sigaction with no
 * flags and an empty mask. */
#ifndef SPOOR_TEST_SET_HANDLER_H
#define SPOOR_TEST_SET_HANDLER_H

#include <signal.h>
#include <string.h>

static inline int set_handler(int sig, void (*handler)(int)) {
  struct sigaction sa;
  memset(&sa, 0, sizeof sa);
  sa.sa_handler = handler;
  return sigaction(sig, &sa, NULL);
}

#endif
