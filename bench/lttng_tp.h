/* LTTng-UST tracepoint provider for the comparison in core_bench.cpp: the
 * same three fields as Spoor's benchmark event (two 32-bit integers and a
 * short string). bench/run.sh enables it with `lttng enable-event -u
 * 'spoor_bench:*'`. Written with the pre-2.13 macro names, which 2.13 still
 * accepts, so older distributions build it too. */
#undef TRACEPOINT_PROVIDER
#define TRACEPOINT_PROVIDER spoor_bench

#undef TRACEPOINT_INCLUDE
#define TRACEPOINT_INCLUDE "./lttng_tp.h"

#if !defined(SPOOR_BENCH_LTTNG_TP_H) || defined(TRACEPOINT_HEADER_MULTI_READ)
#define SPOOR_BENCH_LTTNG_TP_H

#include <stdint.h>
#include <lttng/tracepoint.h>

TRACEPOINT_EVENT(
  spoor_bench,
  three_fields,
  TP_ARGS(int32_t, a_arg, int32_t, b_arg, const char*, s_arg),
  TP_FIELDS(
    ctf_integer(int32_t, a, a_arg)
    ctf_integer(int32_t, b, b_arg)
    ctf_string(s, s_arg)
  )
)

#endif /* SPOOR_BENCH_LTTNG_TP_H */

#include <lttng/tracepoint-event.h>
