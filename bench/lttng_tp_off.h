/* The same event under a provider no LTTng session enables: what a
 * tracepoint() costs when it is compiled in but off (BM_LttngUst_Disabled).
 * bench/run.sh's 'spoor_bench:*' does not match 'spoor_bench_off:*'. */
#undef TRACEPOINT_PROVIDER
#define TRACEPOINT_PROVIDER spoor_bench_off

#undef TRACEPOINT_INCLUDE
#define TRACEPOINT_INCLUDE "./lttng_tp_off.h"

#if !defined(SPOOR_BENCH_LTTNG_TP_OFF_H) || defined(TRACEPOINT_HEADER_MULTI_READ)
#define SPOOR_BENCH_LTTNG_TP_OFF_H

#include <stdint.h>
#include <lttng/tracepoint.h>

TRACEPOINT_EVENT(
  spoor_bench_off,
  three_fields,
  TP_ARGS(int32_t, a_arg, int32_t, b_arg, const char*, s_arg),
  TP_FIELDS(
    ctf_integer(int32_t, a, a_arg)
    ctf_integer(int32_t, b, b_arg)
    ctf_string(s, s_arg)
  )
)

#endif /* SPOOR_BENCH_LTTNG_TP_OFF_H */

#include <lttng/tracepoint-event.h>
