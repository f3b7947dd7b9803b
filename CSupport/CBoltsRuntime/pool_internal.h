#ifndef BOLTS_POOL_INTERNAL_H
#define BOLTS_POOL_INTERNAL_H
/* Private definitions shared by pool.c, pool_serial.c and pool_blocks.c. The platform
 * primitives they use (futex, clock, spin hint) are in platform.h, through internal.h. */
#include "internal.h"

/* Destructive-interference size used to keep producer, consumer and owner fields apart. */
#define BOLTS_CACHE_LINE 64

#endif
