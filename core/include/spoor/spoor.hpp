// Spoor's C++ API in one include: providers, events, and (for firmware and
// custom drainers) the rings and the trace writer.
#ifndef SPOOR_SPOOR_HPP
#define SPOOR_SPOOR_HPP

#include "spoor/control.h"
#include "spoor/drain.h"
#include "spoor/event.h"
#include "spoor/provider.h"
#include "spoor/registry.h"
#include "spoor/ring.h"
#include "spoor/trace_writer.h"

#endif  // SPOOR_SPOOR_HPP
