/* Streams with no descriptor behind them: open_memstream and
 * open_wmemstream (written with fprintf and fputws), fmemopen (read with
 * fgets) and fopencookie (written through the program's own function with
 * fputs). Prints what each moved: "memstream B wmemstream B fmemopen B
 * cookie B" (bytes), which a trace's rows for them must match. Exit 0. */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <wchar.h>

static ssize_t count_bytes(void* cookie, const char* buffer, size_t n) {
  (void)buffer;
  *(size_t*)cookie += n;
  return (ssize_t)n;
}

int main(void) {
  char* text = NULL;
  size_t text_size = 0;
  FILE* memstream = open_memstream(&text, &text_size);
  size_t memstream_bytes = 0;
  for (int i = 0; i < 1000; i++) memstream_bytes += (size_t)fprintf(memstream, "line %d\n", i);
  fclose(memstream);

  wchar_t* wide = NULL;
  size_t wide_size = 0;
  FILE* wmemstream = open_wmemstream(&wide, &wide_size);
  for (int i = 0; i < 10; i++) fputws(L"wide\n", wmemstream);
  fclose(wmemstream);

  char source[] = "first line\nsecond line\nthird\n";
  FILE* in = fmemopen(source, strlen(source), "r");
  char line[64];
  size_t fmemopen_bytes = 0;
  while (fgets(line, sizeof line, in)) fmemopen_bytes += strlen(line);
  fclose(in);

  size_t cookie_bytes = 0;
  cookie_io_functions_t functions = {NULL, count_bytes, NULL, NULL};
  FILE* cookie = fopencookie(&cookie_bytes, "w", functions);
  for (int i = 0; i < 100; i++) fputs("12345678", cookie);
  fclose(cookie);

  printf("memstream %zu wmemstream %zu fmemopen %zu cookie %zu\n", memstream_bytes, wide_size, fmemopen_bytes,
         cookie_bytes);
  free(text);
  free(wide);
  return memstream_bytes == text_size && cookie_bytes == 800 ? 0 : 1;
}
