#ifndef CBOLTSRUNTIME_H
#define CBOLTSRUNTIME_H
/** Umbrella header of the task runtime's C core. Every exported symbol is `bolts_`. */
#include "bolts_job.h"
#include "bolts_task.h"
#include "bolts_token.h"
#include "bolts_pool.h"
#include "bolts_concurrency.h"
#include "bolts_diagnostics.h"
/* Not API: the tunable constants and test hooks, which the tests read through the module. */
#include "bolts_tuning.h"
#endif
