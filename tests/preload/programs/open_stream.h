/* The stdio test programs' files: each lives in the directory the test
 * gives as argv[1] (g_dir), and a program that cannot open one says which
 * and exits 1. */
#ifndef SPOOR_TESTS_PRELOAD_PROGRAMS_OPEN_STREAM_H
#define SPOOR_TESTS_PRELOAD_PROGRAMS_OPEN_STREAM_H

#include <stdio.h>
#include <stdlib.h>

static const char* g_dir;

static FILE* open_stream(const char* name, const char* mode) {
  char path[4096];
  snprintf(path, sizeof path, "%s/%s", g_dir, name);
  FILE* f = fopen(path, mode);
  if (f == NULL) {
    perror(path);
    exit(1);
  }
  return f;
}

#endif
