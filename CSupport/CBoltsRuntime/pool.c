/* Placeholder until the thread pool lands: the blocking hooks do nothing. */
#include "internal.h"
#include <stdlib.h>
void bolts__pool_blocking_begin(void) {}
void bolts__pool_blocking_end(void) {}
void bolts_pool_submit(bolts_pool_t *pool, bolts_job_t *job) { (void)pool; bolts_job_run(job); }
