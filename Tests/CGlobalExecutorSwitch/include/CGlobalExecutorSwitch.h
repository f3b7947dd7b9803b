#ifndef CGLOBALEXECUTORSWITCH_H
#define CGLOBALEXECUTORSWITCH_H
#include <stdbool.h>
/** Whether this process started with BOLTS_TEST_GLOBAL_EXECUTOR set and a Bolts pool was
 *  installed as Swift Concurrency's global executor before any test ran (see switch.c). */
bool bolts_test_global_executor_installed(void);
#endif
