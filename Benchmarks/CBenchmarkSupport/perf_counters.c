/* Hardware instruction and cycle counts of the whole benchmark process, through
 * perf_event_open(2). See CBenchmarkSupport.h for the contract. */
#define _GNU_SOURCE
#include "CBenchmarkSupport.h"

#include <errno.h>
#include <linux/perf_event.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

static int instructions_fd = -1;
static int cycles_fd = -1;

static int open_counter(uint64_t config) {
    struct perf_event_attr attr;
    memset(&attr, 0, sizeof attr);
    attr.size = sizeof attr;
    attr.type = PERF_TYPE_HARDWARE;
    attr.config = config;
    /* Threads the process starts later count too; read() sums them. */
    attr.inherit = 1;
    /* User space only: what an unprivileged process may count under perf_event_paranoid 2. */
    attr.exclude_kernel = 1;
    attr.exclude_hv = 1;
    return (int)syscall(SYS_perf_event_open, &attr, 0, -1, -1, PERF_FLAG_FD_CLOEXEC);
}

int bench_perf_open(void) {
    if (instructions_fd >= 0) return 0;
    int fd = open_counter(PERF_COUNT_HW_INSTRUCTIONS);
    if (fd < 0) return errno;
    int cycles = open_counter(PERF_COUNT_HW_CPU_CYCLES);
    if (cycles < 0) {
        int error = errno;
        close(fd);
        return error;
    }
    instructions_fd = fd;
    cycles_fd = cycles;
    return 0;
}

static uint64_t read_counter(int fd) {
    uint64_t value = 0;
    if (fd < 0 || read(fd, &value, sizeof value) != (ssize_t)sizeof value) return 0;
    return value;
}

uint64_t bench_perf_instructions(void) { return read_counter(instructions_fd); }

uint64_t bench_perf_cycles(void) { return read_counter(cycles_fd); }
