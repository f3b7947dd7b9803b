#ifndef CURCU_SHIM_H
#define CURCU_SHIM_H
/* System-library shim for liburcu (apt: liburcu-dev). Only CBoltsRuntime's .c files
 * include urcu headers; this target exists to carry the link flags. _LGPL_SOURCE is
 * deliberately not defined: liburcu is linked dynamically. */
#include <urcu/urcu-memb.h>
#endif
