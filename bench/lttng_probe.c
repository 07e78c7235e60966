/* The LTTng-UST tracepoint provider package, linked statically into
 * spoor_bench_core: this file defines the tracepoint structures
 * (TRACEPOINT_DEFINE) and generates the probes that serialize the fields
 * (TRACEPOINT_CREATE_PROBES), as the LTTng-UST documentation prescribes for
 * a provider built into the application. Other files only include the
 * headers and call tracepoint(). */
#define TRACEPOINT_CREATE_PROBES
#define TRACEPOINT_DEFINE
#include "lttng_tp.h"
#include "lttng_tp_off.h"
