#ifndef CBOLTSRUNTIME_H
#define CBOLTSRUNTIME_H
/** Umbrella header of the task runtime's C core. Every exported symbol is `bolts_`. */
#include "bolts_job.h"
#include "bolts_task.h"
#include "bolts_token.h"
#include "bolts_pool.h"
#include "bolts_concurrency.h"
#include "bolts_diagnostics.h"
#endif
