// The platform hooks as extern "C" functions, when they are not the core's
// inline SPOOR_PORT_HEADER (port_hooks.h).
#include "spoor/port.h"

#if !defined(SPOOR_PORT_HEADER)
#include "port_hooks.h"
#endif
