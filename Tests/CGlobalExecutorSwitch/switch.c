/* Lets the test runner re-run its own async tests with a Bolts pool as Swift Concurrency's
 * global executor: installing must happen before the first Swift task, so it happens in a
 * constructor, when the process was started with BOLTS_TEST_GLOBAL_EXECUTOR set (only
 * GlobalExecutorTests does that, for a child process of the test runner). */
#include "CGlobalExecutorSwitch.h"
#include "CBoltsRuntime.h"

#include <stdio.h>
#include <stdlib.h>

static bool installed;

__attribute__((constructor)) static void install_if_asked(void) {
    if (getenv("BOLTS_TEST_GLOBAL_EXECUTOR") == NULL) return;
    bolts_pool_t *pool = bolts_pool_create(0, "global");
    bolts_concurrency_status_t status = pool ? bolts_concurrency_install(pool) : BOLTS_CONCURRENCY_NO_HOOK;
    if (status != BOLTS_CONCURRENCY_INSTALLED) {
        fprintf(stderr, "BOLTS_TEST_GLOBAL_EXECUTOR: could not install the pool (status %d)\n", (int)status);
        abort();
    }
    installed = true; /* the pool stays for the life of the process, as installing requires */
    fprintf(stderr, "BOLTS_TEST_GLOBAL_EXECUTOR: a Bolts pool is Swift Concurrency's global executor\n");
}

bool bolts_test_global_executor_installed(void) { return installed; }
