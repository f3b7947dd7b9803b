#ifndef BOLTS_POOL_H
#define BOLTS_POOL_H
/* Thread pool: owned by the executor work (see issue 4). */
#include "bolts_job.h"
#ifdef __cplusplus
extern "C" {
#endif
typedef struct bolts_pool bolts_pool_t;
/** Submits a job to run on one of the pool's workers (via bolts_job_run). */
void bolts_pool_submit(bolts_pool_t *_Nonnull pool, bolts_job_t *_Nonnull job);
#ifdef __cplusplus
}
#endif
#endif
