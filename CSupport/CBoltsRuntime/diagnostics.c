/* Capturing a blocked thread from outside it, and naming what was captured. The contract is
 * include/bolts_diagnostics.h; this file says how.
 *
 * Four parts, each with its own state:
 * - the capture (`bolts_capture_thread`): captures run one at a time under `capture_lock`,
 *   which owns the stack copy, the candidate list and the table of executable ranges;
 * - the system call names: a switch, no state;
 * - the symbolizer: a table of objects, each with its function symbols sorted once, under
 *   `symbolize_lock`, never freed (the names and paths it hands out live as long as the
 *   process);
 * - the demangler: the Swift runtime's `swift_demangle`, looked up until found.
 *
 * Lock order: `capture_lock` is held across `dl_iterate_phdr` (which takes the loader's
 * lock), so nothing here takes `capture_lock` from inside the loader: no capture runs in
 * a `dl_iterate_phdr` callback or in a constructor. `symbolize_lock` is never held across
 * `dl_iterate_phdr`.
 *
 * Why the call-site check runs inside `dl_iterate_phdr`. A candidate return address is
 * accepted only after reading the bytes before it, which are code of some loaded object.
 * glibc unmaps an object that `dlclose` unloads while it holds the loader's write lock,
 * and `dl_iterate_phdr` holds that lock across all its callbacks: code read in the callback
 * for the object that holds it cannot be unmapped under the read. The cached range table
 * only filters the stack's words cheaply (no memory is read through it). */
#define _GNU_SOURCE
#include "internal.h"

#include <dlfcn.h>
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <link.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <unistd.h>

/* ---- The capture ------------------------------------------------------------------- */

/* How much of the stack, from the stack pointer up, a capture copies and scans. */
#define CAPTURE_SCAN_BYTES (64 * 1024)
#define CAPTURE_SCAN_WORDS (CAPTURE_SCAN_BYTES / sizeof(uintptr_t))

/* Enough for "nr", six arguments, sp and pc, each at most 18 characters wide. */
#define SYSCALL_FILE_BYTES 256

/* The system_call values of the header that are not system call numbers. */
enum {
    CAPTURE_NOT_IN_CALL = -1,
    CAPTURE_RUNNING = -2,
    CAPTURE_UNREADABLE = -3,
};

/* An executable PT_LOAD segment of a loaded object, as mapped: [low, high). */
typedef struct code_range {
    uintptr_t low;
    uintptr_t high;
} code_range_t;

/* One capture at a time: the buffers below are static (a 64 KiB copy is too much for a
 * small thread stack and would be a malloc per capture), and captures are a monitor's and
 * a snapshot's, not a job's. */
static pthread_mutex_t capture_lock = PTHREAD_MUTEX_INITIALIZER;
/* The stack words copied from the captured thread. */
static uintptr_t capture_stack[CAPTURE_SCAN_WORDS];
/* Indices into capture_stack of the words that point into a cached code range, in stack
 * order, and whether the bytes before each were found to be a call. */
static uint32_t capture_candidates[CAPTURE_SCAN_WORDS];
static bool capture_accepted[CAPTURE_SCAN_WORDS];
/* The executable ranges of the objects loaded when the table was built, sorted by `low`,
 * and the loader's counts of objects added and removed at that time. */
static code_range_t *code_ranges;
static size_t code_range_count;
static size_t code_range_capacity;
static unsigned long long code_ranges_adds;
static unsigned long long code_ranges_subs;
static bool code_ranges_built;

/* The return address a stack word holds, as an address in a mapping. On aarch64 a return
 * address saved by a function built with pointer authentication carries its signature in
 * the bits above the 48-bit user address space (Linux gives user space 48 bits unless a
 * mapping asks for more); clearing them gives the address back. */
static inline uintptr_t return_address_of(uintptr_t word) {
#if defined(__aarch64__)
    return word & (((uintptr_t)1 << 48) - 1);
#else
    return word;
#endif
}

/* Reads /proc/self/task/<tid>/syscall. Returns the system call number, or one of the
 * CAPTURE_* values; sets *sp and *pc when it returns a number or CAPTURE_NOT_IN_CALL. */
static int64_t read_system_call(int tid, uintptr_t *sp, uintptr_t *pc) {
    char path[64];
    snprintf(path, sizeof path, "/proc/self/task/%d/syscall", tid);
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) return CAPTURE_UNREADABLE;
    char text[SYSCALL_FILE_BYTES];
    ssize_t length = read(fd, text, sizeof text - 1);
    close(fd);
    if (length <= 0) return CAPTURE_UNREADABLE;
    text[length] = '\0';
    if (strncmp(text, "running", 7) == 0) return CAPTURE_RUNNING;

    /* "nr a1 a2 a3 a4 a5 a6 sp pc" (nr in decimal, the rest 0x-prefixed hex) in a system
     * call, "nr sp pc" with a negative nr when blocked outside one. */
    char *cursor = text;
    char *end;
    errno = 0;
    long long number = strtoll(cursor, &end, 10);
    if (end == cursor || errno != 0) return CAPTURE_UNREADABLE;
    cursor = end;
    unsigned long long fields[8];
    int wanted = number < 0 ? 2 : 8;
    for (int i = 0; i < wanted; i++) {
        fields[i] = strtoull(cursor, &end, 16);
        if (end == cursor || errno != 0) return CAPTURE_UNREADABLE;
        cursor = end;
    }
    *sp = (uintptr_t)fields[wanted - 2];
    *pc = (uintptr_t)fields[wanted - 1];
    return number < 0 ? CAPTURE_NOT_IN_CALL : (int64_t)number;
}

/* Copies up to `length` bytes of this process's memory at `from` into capture_stack, in
 * pieces if a read stops short (a read stops at an unmapped page; the next piece then fails
 * and the copy ends there). Returns the bytes copied. `process_vm_readv` reads through the
 * kernel, so memory unmapped meanwhile gives an error, never a fault; where a sandbox
 * forbids the call (ENOSYS, EPERM), /proc/self/mem, which the kernel reads the same way,
 * serves instead. Under capture_lock. */
static size_t copy_stack(uintptr_t from, size_t length) {
    pid_t self = getpid();
    size_t copied = 0;
    while (copied < length) {
        struct iovec local = {.iov_base = (char *)capture_stack + copied, .iov_len = length - copied};
        struct iovec remote = {.iov_base = (void *)(from + copied), .iov_len = length - copied};
        ssize_t n = process_vm_readv(self, &local, 1, &remote, 1, 0);
        if (n > 0) {
            copied += (size_t)n;
            continue;
        }
        if (n < 0 && copied == 0 && (errno == ENOSYS || errno == EPERM)) break;
        return copied;
    }
    if (copied == length) return copied;
    int fd = open("/proc/self/mem", O_RDONLY | O_CLOEXEC);
    if (fd < 0) return 0;
    while (copied < length) {
        ssize_t n = pread(fd, (char *)capture_stack + copied, length - copied, (off_t)(from + copied));
        if (n <= 0) break;
        copied += (size_t)n;
    }
    close(fd);
    return copied;
}

/* Whether dl_phdr_info has the adds/subs counters (glibc has had them since 2.3.4). */
static bool has_load_counts(size_t size) {
    return size >= offsetof(struct dl_phdr_info, dlpi_subs) + sizeof(unsigned long long);
}

/* The loader's current counts of objects added and removed. */
typedef struct load_counts {
    unsigned long long adds;
    unsigned long long subs;
    bool known;
} load_counts_t;

/* dl_iterate_phdr callback: reads the counts from the first object and stops. */
static int read_load_counts(struct dl_phdr_info *info, size_t size, void *context) {
    load_counts_t *counts = context;
    if (has_load_counts(size)) {
        counts->adds = info->dlpi_adds;
        counts->subs = info->dlpi_subs;
        counts->known = true;
    }
    return 1;
}

/* dl_iterate_phdr callback: appends the object's executable segments to code_ranges (and
 * records the counts the table matches: the loader's list cannot change during the walk).
 * Under capture_lock. Returns 1 (stop) when out of memory, the table then being partial. */
static int collect_code_ranges(struct dl_phdr_info *info, size_t size, void *context) {
    bool *complete = context;
    if (has_load_counts(size)) {
        code_ranges_adds = info->dlpi_adds;
        code_ranges_subs = info->dlpi_subs;
    }
    for (ElfW(Half) i = 0; i < info->dlpi_phnum; i++) {
        const ElfW(Phdr) *segment = &info->dlpi_phdr[i];
        if (segment->p_type != PT_LOAD || !(segment->p_flags & PF_X) || segment->p_memsz == 0) continue;
        if (code_range_count == code_range_capacity) {
            size_t capacity = code_range_capacity ? 2 * code_range_capacity : 64;
            code_range_t *grown = realloc(code_ranges, capacity * sizeof *grown);
            if (grown == NULL) {
                *complete = false;
                return 1;
            }
            code_ranges = grown;
            code_range_capacity = capacity;
        }
        uintptr_t low = (uintptr_t)info->dlpi_addr + (uintptr_t)segment->p_vaddr;
        code_ranges[code_range_count++] = (code_range_t){.low = low, .high = low + (uintptr_t)segment->p_memsz};
    }
    return 0;
}

static int compare_code_ranges(const void *a, const void *b) {
    const code_range_t *x = a, *y = b;
    return x->low < y->low ? -1 : x->low > y->low;
}

/* Rebuilds code_ranges from the loader's list. Under capture_lock. */
static void rebuild_code_ranges(void) {
    code_range_count = 0;
    bool complete = true;
    dl_iterate_phdr(collect_code_ranges, &complete);
    qsort(code_ranges, code_range_count, sizeof *code_ranges, compare_code_ranges);
    /* A partial table is used as it is, and rebuilt at the next capture. */
    code_ranges_built = complete;
}

/* The cached range that holds `address`, or NULL. Under capture_lock. */
static const code_range_t *code_range_holding(uintptr_t address) {
    size_t low = 0, high = code_range_count;
    while (low < high) {
        size_t mid = low + (high - low) / 2;
        if (code_ranges[mid].low <= address)
            low = mid + 1;
        else
            high = mid;
    }
    if (low == 0) return NULL;
    const code_range_t *range = &code_ranges[low - 1];
    return address < range->high ? range : NULL;
}

/* Whether return address `r` has a whole instruction's room before it in [low, high]: the
 * longest call form read below is 7 bytes on x86_64, 4 on aarch64. */
static bool room_before(uintptr_t r, uintptr_t low, uintptr_t high) {
    return r >= low + 8 && r <= high;
}

#if defined(__x86_64__)
/* Whether the bytes at `op` are an FF /2 (near indirect call) exactly `length` bytes long,
 * from the FF to the end of its displacement: ModRM (and SIB) decide the length. A REX or
 * segment prefix sits before the FF and changes nothing here. `op[length - 1]` is the last
 * byte read. */
static bool is_indirect_call(const uint8_t *op, unsigned length) {
    uint8_t modrm = op[1];
    if (((modrm >> 3) & 7) != 2) return false;
    unsigned mod = modrm >> 6, rm = modrm & 7;
    if (mod == 3) return length == 2; /* call *%reg */
    unsigned needed = 2;
    bool sib = rm == 4;
    if (sib) {
        if (length < 3) return false; /* the SIB byte would lie at or past the return address */
        needed += 1;
    }
    if (mod == 1)
        needed += 1; /* disp8 */
    else if (mod == 2)
        needed += 4; /* disp32 */
    else if (rm == 5 || (sib && (op[2] & 7) == 5))
        needed += 4; /* mod 00: RIP-relative, or SIB without a base: disp32 */
    return needed == length;
}

/* Whether the instruction that ends at `r` is a call: E8 rel32 whose target is code, or
 * FF /2 in any of its lengths (2, 3, 4, 6 or 7 bytes). The caller checked room_before, and
 * holds the loader's lock with r's object in its list. */
static bool is_call_before(uintptr_t r) {
    const uint8_t *p = (const uint8_t *)r;
    if (p[-5] == 0xE8) {
        int32_t rel;
        memcpy(&rel, p - 4, sizeof rel);
        if (code_range_holding(r + (uintptr_t)(intptr_t)rel) != NULL) return true;
    }
    static const unsigned lengths[] = {2, 3, 4, 6, 7};
    for (size_t i = 0; i < sizeof lengths / sizeof lengths[0]; i++) {
        if (p[-(ptrdiff_t)lengths[i]] == 0xFF && is_indirect_call(p - lengths[i], lengths[i])) return true;
    }
    return false;
}
#elif defined(__aarch64__)
/* Whether the instruction at r - 4 is a call: BL whose target is code, BLR, or the
 * pointer-authenticating BLRAA/BLRAB (with a modifier register) and BLRAAZ/BLRABZ. The
 * caller checked room_before, and holds the loader's lock with r's object in its list. */
static bool is_call_before(uintptr_t r) {
    if (r & 3) return false;
    uint32_t insn;
    memcpy(&insn, (const void *)(r - 4), sizeof insn);
    if ((insn & 0xFC000000u) == 0x94000000u) { /* BL imm26: target = pc + imm26 * 4 */
        int64_t imm = (int64_t)((uint64_t)(insn & 0x03FFFFFFu) << 38) >> 36;
        return code_range_holding(r - 4 + (uintptr_t)imm) != NULL;
    }
    return (insn & 0xFFFFFC1Fu) == 0xD63F0000u    /* BLR Xn */
           || (insn & 0xFFFFF800u) == 0xD73F0800u /* BLRAA, BLRAB Xn, Xm */
           || (insn & 0xFFFFF81Fu) == 0xD63F081Fu;   /* BLRAAZ, BLRABZ Xn */
}
#else
/* No call decoder for this architecture: the scan accepts no stack frame, and a capture
 * holds the program counter alone. */
static bool is_call_before(uintptr_t r) {
    (void)r;
    return false;
}
#endif

/* dl_iterate_phdr callback: checks the call site of every candidate (their count is at
 * `context`) that lies in one of this object's executable segments. The loader's lock is
 * held for the whole walk, so the object stays mapped while its code is read. Under
 * capture_lock. */
static int check_candidates(struct dl_phdr_info *info, size_t size, void *context) {
    (void)size;
    size_t count = *(const size_t *)context;
    for (ElfW(Half) i = 0; i < info->dlpi_phnum; i++) {
        const ElfW(Phdr) *segment = &info->dlpi_phdr[i];
        if (segment->p_type != PT_LOAD || !(segment->p_flags & PF_X) || segment->p_memsz == 0) continue;
        uintptr_t low = (uintptr_t)info->dlpi_addr + (uintptr_t)segment->p_vaddr;
        uintptr_t high = low + (uintptr_t)segment->p_memsz;
        for (size_t c = 0; c < count; c++) {
            if (capture_accepted[c]) continue;
            uintptr_t r = return_address_of(capture_stack[capture_candidates[c]]);
            if (room_before(r, low, high)) capture_accepted[c] = is_call_before(r);
        }
    }
    return 0;
}

/* Appends to `out` the return addresses among the first `words` words of capture_stack.
 * Under capture_lock. */
static void scan_stack(size_t words, bolts_thread_capture_t *out) {
    load_counts_t counts = {0};
    dl_iterate_phdr(read_load_counts, &counts);
    if (!code_ranges_built || !counts.known || counts.adds != code_ranges_adds || counts.subs != code_ranges_subs) {
        rebuild_code_ranges();
    }
    /* The cheap filter: words that point just past at least 8 bytes of cached code. */
    size_t count = 0;
    for (size_t i = 0; i < words; i++) {
        uintptr_t r = return_address_of(capture_stack[i]);
        const code_range_t *range = r > 0 ? code_range_holding(r - 1) : NULL;
        if (range == NULL || !room_before(r, range->low, range->high)) continue;
        capture_candidates[count] = (uint32_t)i;
        capture_accepted[count] = false;
        count++;
    }
    if (count == 0) return;
    dl_iterate_phdr(check_candidates, &count);
    for (size_t c = 0; c < count && out->frame_count < BOLTS_CAPTURE_MAX_FRAMES; c++) {
        if (!capture_accepted[c]) continue;
        out->frames[out->frame_count++] = return_address_of(capture_stack[capture_candidates[c]]);
    }
}

bool bolts_capture_thread(int tid, uintptr_t stack_low, uintptr_t stack_high, bolts_thread_capture_t *out) {
    out->frame_count = 0;
    uintptr_t sp = 0, pc = 0;
    out->system_call = read_system_call(tid, &sp, &pc);
    if (out->system_call < CAPTURE_NOT_IN_CALL) return false;
    out->frames[0] = pc;
    out->frame_count = 1;

    /* Return addresses sit in aligned words. The scan ends at the stack's top when the
     * stack pointer lies in the bounds given; bounds that do not hold it (a signal stack,
     * wrong bounds) are treated as unknown. */
    uintptr_t begin = (sp + (sizeof(uintptr_t) - 1)) & ~(uintptr_t)(sizeof(uintptr_t) - 1);
    if (begin < sp) return false; /* sp within a word of the top of the address space */
    uintptr_t end = begin + CAPTURE_SCAN_BYTES < begin ? UINTPTR_MAX : begin + CAPTURE_SCAN_BYTES;
    if (stack_low < stack_high && begin >= stack_low && begin < stack_high && stack_high < end) end = stack_high;

    pthread_mutex_lock(&capture_lock);
    size_t words = copy_stack(begin, end - begin) / sizeof(uintptr_t);
    if (words > 0) scan_stack(words, out);
    pthread_mutex_unlock(&capture_lock);
    return words > 0;
}

/* ---- System call names ------------------------------------------------------------- */

/* Each name is guarded by its own #ifdef: architectures differ (aarch64 has no open, poll,
 * select, pause or epoll_wait, only their *at, ppoll, pselect6 and epoll_pwait forms). */
const char *bolts_system_call_name(int64_t number) {
    switch (number) {
#ifdef SYS_read
    case SYS_read: return "read";
#endif
#ifdef SYS_write
    case SYS_write: return "write";
#endif
#ifdef SYS_pread64
    case SYS_pread64: return "pread64";
#endif
#ifdef SYS_pwrite64
    case SYS_pwrite64: return "pwrite64";
#endif
#ifdef SYS_readv
    case SYS_readv: return "readv";
#endif
#ifdef SYS_writev
    case SYS_writev: return "writev";
#endif
#ifdef SYS_preadv
    case SYS_preadv: return "preadv";
#endif
#ifdef SYS_pwritev
    case SYS_pwritev: return "pwritev";
#endif
#ifdef SYS_preadv2
    case SYS_preadv2: return "preadv2";
#endif
#ifdef SYS_pwritev2
    case SYS_pwritev2: return "pwritev2";
#endif
#ifdef SYS_futex
    case SYS_futex: return "futex";
#endif
#ifdef SYS_futex_waitv
    case SYS_futex_waitv: return "futex_waitv";
#endif
#ifdef SYS_nanosleep
    case SYS_nanosleep: return "nanosleep";
#endif
#ifdef SYS_clock_nanosleep
    case SYS_clock_nanosleep: return "clock_nanosleep";
#endif
#ifdef SYS_poll
    case SYS_poll: return "poll";
#endif
#ifdef SYS_ppoll
    case SYS_ppoll: return "ppoll";
#endif
#ifdef SYS_select
    case SYS_select: return "select";
#endif
#ifdef SYS_pselect6
    case SYS_pselect6: return "pselect6";
#endif
#ifdef SYS_epoll_wait
    case SYS_epoll_wait: return "epoll_wait";
#endif
#ifdef SYS_epoll_pwait
    case SYS_epoll_pwait: return "epoll_pwait";
#endif
#ifdef SYS_epoll_pwait2
    case SYS_epoll_pwait2: return "epoll_pwait2";
#endif
#ifdef SYS_accept
    case SYS_accept: return "accept";
#endif
#ifdef SYS_accept4
    case SYS_accept4: return "accept4";
#endif
#ifdef SYS_connect
    case SYS_connect: return "connect";
#endif
#ifdef SYS_recvfrom
    case SYS_recvfrom: return "recvfrom";
#endif
#ifdef SYS_recvmsg
    case SYS_recvmsg: return "recvmsg";
#endif
#ifdef SYS_recvmmsg
    case SYS_recvmmsg: return "recvmmsg";
#endif
#ifdef SYS_sendto
    case SYS_sendto: return "sendto";
#endif
#ifdef SYS_sendmsg
    case SYS_sendmsg: return "sendmsg";
#endif
#ifdef SYS_sendmmsg
    case SYS_sendmmsg: return "sendmmsg";
#endif
#ifdef SYS_wait4
    case SYS_wait4: return "wait4";
#endif
#ifdef SYS_waitid
    case SYS_waitid: return "waitid";
#endif
#ifdef SYS_open
    case SYS_open: return "open";
#endif
#ifdef SYS_openat
    case SYS_openat: return "openat";
#endif
#ifdef SYS_openat2
    case SYS_openat2: return "openat2";
#endif
#ifdef SYS_close
    case SYS_close: return "close";
#endif
#ifdef SYS_fsync
    case SYS_fsync: return "fsync";
#endif
#ifdef SYS_fdatasync
    case SYS_fdatasync: return "fdatasync";
#endif
#ifdef SYS_sync_file_range
    case SYS_sync_file_range: return "sync_file_range";
#endif
#ifdef SYS_flock
    case SYS_flock: return "flock";
#endif
#ifdef SYS_fcntl
    case SYS_fcntl: return "fcntl";
#endif
#ifdef SYS_ioctl
    case SYS_ioctl: return "ioctl";
#endif
#ifdef SYS_io_getevents
    case SYS_io_getevents: return "io_getevents";
#endif
#ifdef SYS_io_pgetevents
    case SYS_io_pgetevents: return "io_pgetevents";
#endif
#ifdef SYS_io_uring_enter
    case SYS_io_uring_enter: return "io_uring_enter";
#endif
#ifdef SYS_msgrcv
    case SYS_msgrcv: return "msgrcv";
#endif
#ifdef SYS_msgsnd
    case SYS_msgsnd: return "msgsnd";
#endif
#ifdef SYS_semop
    case SYS_semop: return "semop";
#endif
#ifdef SYS_semtimedop
    case SYS_semtimedop: return "semtimedop";
#endif
#ifdef SYS_mq_timedreceive
    case SYS_mq_timedreceive: return "mq_timedreceive";
#endif
#ifdef SYS_mq_timedsend
    case SYS_mq_timedsend: return "mq_timedsend";
#endif
#ifdef SYS_pause
    case SYS_pause: return "pause";
#endif
#ifdef SYS_rt_sigsuspend
    case SYS_rt_sigsuspend: return "rt_sigsuspend";
#endif
#ifdef SYS_rt_sigtimedwait
    case SYS_rt_sigtimedwait: return "rt_sigtimedwait";
#endif
#ifdef SYS_sched_yield
    case SYS_sched_yield: return "sched_yield";
#endif
#ifdef SYS_mmap
    case SYS_mmap: return "mmap";
#endif
#ifdef SYS_munmap
    case SYS_munmap: return "munmap";
#endif
#ifdef SYS_mprotect
    case SYS_mprotect: return "mprotect";
#endif
#ifdef SYS_madvise
    case SYS_madvise: return "madvise";
#endif
#ifdef SYS_msync
    case SYS_msync: return "msync";
#endif
#ifdef SYS_splice
    case SYS_splice: return "splice";
#endif
#ifdef SYS_sendfile
    case SYS_sendfile: return "sendfile";
#endif
#ifdef SYS_copy_file_range
    case SYS_copy_file_range: return "copy_file_range";
#endif
#ifdef SYS_fallocate
    case SYS_fallocate: return "fallocate";
#endif
#ifdef SYS_ftruncate
    case SYS_ftruncate: return "ftruncate";
#endif
#ifdef SYS_getrandom
    case SYS_getrandom: return "getrandom";
#endif
#ifdef SYS_statx
    case SYS_statx: return "statx";
#endif
#ifdef SYS_newfstatat
    case SYS_newfstatat: return "newfstatat";
#endif
#ifdef SYS_fstat
    case SYS_fstat: return "fstat";
#endif
#ifdef SYS_lseek
    case SYS_lseek: return "lseek";
#endif
#ifdef SYS_getdents64
    case SYS_getdents64: return "getdents64";
#endif
#ifdef SYS_unlinkat
    case SYS_unlinkat: return "unlinkat";
#endif
#ifdef SYS_renameat2
    case SYS_renameat2: return "renameat2";
#endif
#ifdef SYS_membarrier
    case SYS_membarrier: return "membarrier";
#endif
#ifdef SYS_clone
    case SYS_clone: return "clone";
#endif
#ifdef SYS_clone3
    case SYS_clone3: return "clone3";
#endif
#ifdef SYS_exit_group
    case SYS_exit_group: return "exit_group";
#endif
    default: return NULL;
    }
}

/* ---- The symbolizer ---------------------------------------------------------------- */

/* The most objects whose symbols are kept; an address in an object beyond them has no
 * name (a process of Swift tests loads about fifty). */
#define SYMBOLIZE_MAX_OBJECTS 256

/* A function symbol: its file address range [value, value + size) and its name, which
 * points into the object's mapped string table. */
typedef struct elf_function {
    uintptr_t value;
    uintptr_t size;
    const char *name;
} elf_function_t;

/* What the symbolizer keeps of one loaded object. An object whose file could not be read
 * keeps no functions, so that it is not read again. */
typedef struct symbol_object {
    uintptr_t bias;    /* dlpi_addr: file address = address - bias */
    char *loader_name; /* dlpi_name, with bias the key ("" for the main program) */
    char *path;        /* the file, as `bolts_symbolize` reports it */
    elf_function_t *functions; /* sorted by value, then by size, largest first */
    size_t function_count;
} symbol_object_t;

static pthread_mutex_t symbolize_lock = PTHREAD_MUTEX_INITIALIZER;
static symbol_object_t symbol_objects[SYMBOLIZE_MAX_OBJECTS];
static size_t symbol_object_count;

/* The loaded object that holds an address, as dl_iterate_phdr reports it. */
typedef struct object_query {
    uintptr_t address;
    unsigned index; /* of the object being looked at: 0 is the main program */
    bool found;
    bool main_program;
    uintptr_t bias;
    char name[PATH_MAX];
} object_query_t;

/* dl_iterate_phdr callback: stops at the object one of whose segments holds the address.
 * dl_iterate_phdr rather than dladdr: it gives the load bias itself (dladdr gives the
 * mapping's start, which is the bias only when the first segment's address is 0). */
static int find_object(struct dl_phdr_info *info, size_t size, void *context) {
    (void)size;
    object_query_t *query = context;
    unsigned index = query->index++;
    for (ElfW(Half) i = 0; i < info->dlpi_phnum; i++) {
        const ElfW(Phdr) *segment = &info->dlpi_phdr[i];
        if (segment->p_type != PT_LOAD) continue;
        uintptr_t low = (uintptr_t)info->dlpi_addr + (uintptr_t)segment->p_vaddr;
        if (query->address - low >= (uintptr_t)segment->p_memsz) continue;
        query->found = true;
        query->main_program = index == 0;
        query->bias = (uintptr_t)info->dlpi_addr;
        snprintf(query->name, sizeof query->name, "%s", info->dlpi_name ? info->dlpi_name : "");
        return 1;
    }
    return 0;
}

static int compare_functions(const void *a, const void *b) {
    const elf_function_t *x = a, *y = b;
    if (x->value != y->value) return x->value < y->value ? -1 : 1;
    return x->size > y->size ? -1 : x->size < y->size;
}

/* Whether [offset, offset + length) lies within a file of `size` bytes. */
static bool within_file(uint64_t offset, uint64_t length, size_t size) {
    return offset <= size && length <= size - offset;
}

/* Reads the function symbols of symbol table section `table` of the ELF file mapped at
 * `file` into `object`. Returns whether it found any. */
static bool read_functions(const uint8_t *file, size_t size, const Elf64_Shdr *sections, size_t section_count,
                           const Elf64_Shdr *table, symbol_object_t *object) {
    if (table->sh_entsize != sizeof(Elf64_Sym) || table->sh_offset % _Alignof(Elf64_Sym) != 0 ||
        !within_file(table->sh_offset, table->sh_size, size) || table->sh_link >= section_count) {
        return false;
    }
    const Elf64_Shdr *strings = &sections[table->sh_link];
    if (strings->sh_type != SHT_STRTAB || strings->sh_size == 0 ||
        !within_file(strings->sh_offset, strings->sh_size, size)) {
        return false;
    }
    const char *names = (const char *)file + strings->sh_offset;
    /* A string table ends with NUL, so every name that starts in it ends in it. */
    if (names[strings->sh_size - 1] != '\0') return false;

    const Elf64_Sym *symbols = (const Elf64_Sym *)(const void *)(file + table->sh_offset);
    size_t symbol_count = table->sh_size / sizeof(Elf64_Sym);
    size_t count = 0;
    for (int pass = 0; pass < 2; pass++) {
        for (size_t i = 0; i < symbol_count; i++) {
            const Elf64_Sym *symbol = &symbols[i];
            unsigned type = ELF64_ST_TYPE(symbol->st_info);
            if ((type != STT_FUNC && type != STT_GNU_IFUNC) || symbol->st_shndx == SHN_UNDEF || symbol->st_size == 0 ||
                symbol->st_name >= strings->sh_size) {
                continue;
            }
            if (pass == 1) {
                object->functions[count] = (elf_function_t){.value = (uintptr_t)symbol->st_value,
                                                            .size = (uintptr_t)symbol->st_size,
                                                            .name = names + symbol->st_name};
            }
            count++;
        }
        if (pass == 0) {
            if (count == 0) return false;
            object->functions = malloc(count * sizeof *object->functions);
            if (object->functions == NULL) return false;
            count = 0;
        }
    }
    qsort(object->functions, count, sizeof *object->functions, compare_functions);
    object->function_count = count;
    return true;
}

/* Reads the functions of the ELF file `path` into `object`: `.symtab` if it has any, else
 * `.dynsym`. The file stays mapped (read-only, pages read on demand) while the names point
 * into it, for the life of the process. Under symbolize_lock. */
static void load_functions(symbol_object_t *object, const char *path) {
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) return;
    struct stat status;
    if (fstat(fd, &status) != 0 || status.st_size < (off_t)sizeof(Elf64_Ehdr)) {
        close(fd);
        return;
    }
    size_t size = (size_t)status.st_size;
    void *mapping = mmap(NULL, size, PROT_READ, MAP_PRIVATE, fd, 0);
    close(fd);
    if (mapping == MAP_FAILED) return;

    const uint8_t *file = mapping;
    const Elf64_Ehdr *header = mapping;
    bool found = false;
    if (memcmp(header->e_ident, ELFMAG, SELFMAG) == 0 && header->e_ident[EI_CLASS] == ELFCLASS64 &&
        header->e_shentsize == sizeof(Elf64_Shdr) && header->e_shoff % _Alignof(Elf64_Shdr) == 0 &&
        within_file(header->e_shoff, (uint64_t)header->e_shnum * sizeof(Elf64_Shdr), size)) {
        const Elf64_Shdr *sections = (const Elf64_Shdr *)(const void *)(file + header->e_shoff);
        const uint32_t kinds[] = {SHT_SYMTAB, SHT_DYNSYM};
        for (size_t k = 0; k < 2 && !found; k++) {
            for (size_t i = 0; i < header->e_shnum && !found; i++) {
                if (sections[i].sh_type == kinds[k]) {
                    found = read_functions(file, size, sections, header->e_shnum, &sections[i], object);
                }
            }
        }
    }
    if (!found) munmap(mapping, size);
}

/* The entry of the object `query` found, read on first use; NULL when the table is full or
 * memory ran out. Under symbolize_lock. */
static const symbol_object_t *symbol_object_for(const object_query_t *query) {
    for (size_t i = 0; i < symbol_object_count; i++) {
        const symbol_object_t *object = &symbol_objects[i];
        if (object->bias == query->bias && strcmp(object->loader_name, query->name) == 0) return object;
    }
    if (symbol_object_count == SYMBOLIZE_MAX_OBJECTS) return NULL;

    /* The main program's name is empty (or argv[0]); /proc/self/exe is its file, even if it
     * has been moved or deleted since. */
    const char *file = query->main_program ? "/proc/self/exe" : query->name;
    char path[PATH_MAX];
    ssize_t length = query->main_program ? readlink("/proc/self/exe", path, sizeof path - 1) : -1;
    if (length > 0)
        path[length] = '\0';
    else
        snprintf(path, sizeof path, "%s", file);

    symbol_object_t *object = &symbol_objects[symbol_object_count];
    *object = (symbol_object_t){.bias = query->bias, .loader_name = strdup(query->name), .path = strdup(path)};
    if (object->loader_name == NULL || object->path == NULL) {
        free(object->loader_name);
        free(object->path);
        return NULL;
    }
    load_functions(object, file);
    symbol_object_count++;
    return object;
}

/* The function of `object` that holds file address `address`, or NULL. Among symbols
 * that overlap (aliases, a function inside another's range), the innermost one that starts
 * at or before the address. */
static const elf_function_t *function_holding(const symbol_object_t *object, uintptr_t address) {
    size_t low = 0, high = object->function_count;
    while (low < high) { /* the first function that starts after the address */
        size_t mid = low + (high - low) / 2;
        if (object->functions[mid].value <= address)
            low = mid + 1;
        else
            high = mid;
    }
    /* Look back a little for one whose range reaches the address; overlaps are rare and
     * shallow, so a bounded walk finds it. */
    for (size_t i = low, looked = 0; i > 0 && looked < 16; i--, looked++) {
        const elf_function_t *function = &object->functions[i - 1];
        if (address - function->value < function->size) return function;
    }
    return NULL;
}

bool bolts_symbolize(uintptr_t address, char *name, size_t capacity, uintptr_t *offset, const char **image) {
    object_query_t query = {.address = address};
    dl_iterate_phdr(find_object, &query);
    if (!query.found) return false;

    pthread_mutex_lock(&symbolize_lock);
    const symbol_object_t *object = symbol_object_for(&query);
    const elf_function_t *function = object ? function_holding(object, address - query.bias) : NULL;
    if (function != NULL) {
        if (capacity > 0) snprintf(name, capacity, "%s", function->name);
        *offset = address - query.bias - function->value;
        *image = object->path;
    }
    pthread_mutex_unlock(&symbolize_lock);
    return function != NULL;
}

/* ---- The demangler ----------------------------------------------------------------- */

/* The Swift runtime's demangler (exported by libswiftCore): with a NULL buffer it returns
 * the demangled name in memory from malloc; NULL for a name without a Swift prefix, and a
 * copy of the name itself for one with a prefix that does not demangle. */
typedef char *(*swift_demangle_fn)(const char *mangled, size_t length, char *buffer, size_t *buffer_size,
                                   uint32_t flags);

/* swift_demangle's address once found; 0 until then (looked up again at each call, so a
 * Swift runtime loaded later is found). */
static _Atomic uintptr_t swift_demangler;

static bool is_swift_mangled(const char *name) {
    static const char *const prefixes[] = {"$s", "_$s", "$S", "_$S", "$e", "_$e", "_T0"};
    for (size_t i = 0; i < sizeof prefixes / sizeof prefixes[0]; i++) {
        if (strncmp(name, prefixes[i], strlen(prefixes[i])) == 0) return true;
    }
    return false;
}

bool bolts_demangle(const char *mangled, char *out, size_t capacity) {
    if (!is_swift_mangled(mangled)) return false;
    /* Relaxed, load and store: the word is the whole message, a code address dlsym gives
     * every thread alike, and nothing else is published with it; callers that race to look
     * it up store the same value. */
    uintptr_t word = atomic_load_explicit(&swift_demangler, memory_order_relaxed);
    if (word == 0) {
        word = (uintptr_t)dlsym(RTLD_DEFAULT, "swift_demangle");
        if (word == 0) return false;
        atomic_store_explicit(&swift_demangler, word, memory_order_relaxed);
    }
    char *demangled = ((swift_demangle_fn)word)(mangled, strlen(mangled), NULL, NULL, 0);
    if (demangled == NULL) return false;
    /* A name with a Swift prefix that does not demangle comes back as it went in. */
    bool changed = strcmp(demangled, mangled) != 0;
    if (changed && capacity > 0) snprintf(out, capacity, "%s", demangled);
    free(demangled);
    return changed;
}
