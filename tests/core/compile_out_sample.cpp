// A program with tracing in it. Built three ways by compile_out_test.sh:
// tracing on, SPOOR_COMPILE_OUT=1, and SPOOR_SAMPLE_NO_TRACING (the tracing
// lines removed by the preprocessor). Compiled out must equal removed.
#include <stdint.h>
#include <stdio.h>

#ifndef SPOOR_SAMPLE_NO_TRACING
#include "spoor/event.h"
SPOOR_DEFINE_PROVIDER(g_sample, "Spoor.Test.CompileOut");
SPOOR_EVENT(kStep, g_sample, (spoor::EventInfo{.name = "Step", .id = 1}), spoor::Field<int32_t>{"i"},
            spoor::Field<spoor::Str>{"what"});
#endif

int main(int argc, char**) {
  int32_t sum = 0;
  for (int32_t i = 0; i < argc * 10; ++i) {
    sum += i;
#ifndef SPOOR_SAMPLE_NO_TRACING
    kStep.write(i, "step");
#endif
  }
  printf("%d\n", sum);
  return 0;
}
