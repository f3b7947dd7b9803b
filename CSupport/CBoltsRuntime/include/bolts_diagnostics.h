#ifndef BOLTS_DIAGNOSTICS_H
#define BOLTS_DIAGNOSTICS_H
/**
 * What a blocked thread is doing, found from outside it without stopping it: the system
 * call it sleeps in and the return addresses on its stack, then the names of those
 * addresses. The pool's monitor uses it for its stall reports (I12) and
 * `bolts_pool_snapshot` for its workers; both are diagnostics, never on a job's path.
 *
 * Nothing here sends a signal or uses ptrace: a signal would cut a sleeping thread's
 * `nanosleep`, `poll` or `epoll_wait` short (EINTR, whatever SA_RESTART says). The system
 * call and the user stack pointer come from `/proc/self/task/<tid>/syscall`, which the
 * kernel fills in from the registers the thread saved when it entered the call; the stack
 * is then copied with `process_vm_readv` on this process (or read from `/proc/self/mem`
 * where a sandbox forbids that call), so a thread that returns and reuses its stack
 * meanwhile, or exits, gives stale or no frames, never a fault.
 *
 * The frames after the first are found by scanning the copied stack for words that point
 * just after a call instruction in an executable mapping of this process: the way a
 * debugger without unwind tables finds frames. The calls recognized are x86_64's E8 rel32
 * (whose target must be code) and FF /2 in all its addressing forms, and aarch64's BL (whose
 * target must be code), BLR, BLRAA/BLRAB and BLRAAZ/BLRABZ (a saved return address's
 * pointer-authentication bits are cleared); on other architectures only the first frame is
 * reported. A scan may report a stale return address left in a live frame's unused slot;
 * it never misses a frame whose return address is on the stack between the stack pointer
 * and the scan's limit, up to BOLTS_CAPTURE_MAX_FRAMES. The call sites are read while the
 * dynamic loader's lock is held (inside `dl_iterate_phdr`), so a library unloaded
 * meanwhile is never read.
 */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/** The most frames a capture holds. */
#define BOLTS_CAPTURE_MAX_FRAMES 32

/** What a capture found of one thread. */
typedef struct bolts_thread_capture {
    /** The system call the thread sleeps in (its number, as in <sys/syscall.h>); -1 when it
     *  is blocked but not in a system call (a page fault), -2 when it is running or
     *  runnable, -3 when it could not be read (the thread has exited, or `tid` is no thread
     *  of this process). */
    int64_t system_call;
    /** Frames found, innermost first: the program counter in the system call's wrapper,
     *  then the return addresses found on the stack. */
    uint32_t frame_count;
    uintptr_t frames[BOLTS_CAPTURE_MAX_FRAMES];
} bolts_thread_capture_t;

/** Captures thread `tid` of this process (see the top of this file). `stack_low` and
 *  `stack_high` bound its stack (0, 0: unknown, scan at most 64 KiB above the stack
 *  pointer; bounds that do not hold the stack pointer count as unknown). Any thread;
 *  captures run one at a time (they share one 64 KiB copy buffer, under a mutex). Costs a
 *  few tens of microseconds (a /proc read, one copy, a walk of the loaded objects), and
 *  a few hundred the first time (the table of executable ranges, rebuilt whenever the
 *  loader adds or removes an object). Returns false, with `system_call` set and
 *  `frame_count` 0, when the thread has no stack pointer to report (running, runnable or
 *  gone); false with `frame_count` 1 (the program counter) when its stack could not be
 *  read; true otherwise. A thread that captures itself sees the `read` of the /proc file. */
bool bolts_capture_thread(int tid, uintptr_t stack_low, uintptr_t stack_high, bolts_thread_capture_t *_Nonnull out);

/** The name of system call `number` on this architecture ("read", "futex",
 *  "clock_nanosleep", …), or NULL if it is not one the table knows. */
const char *_Nullable bolts_system_call_name(int64_t number);

/** Writes into `name` (at most `capacity` bytes, NUL-terminated) the function symbol that
 *  contains `address`, as the object file names it (mangled), from its symbol table
 *  (`.symtab`, else `.dynsym`), and sets `*offset` to the distance from the symbol's start
 *  and `*image` to the path of the object (valid for the life of the process). Returns
 *  false, leaving the outputs untouched, when no symbol covers the address: an address in
 *  no loaded object, in a stripped object's local function (only `.dynsym` is left; no
 *  separate debug file is read), in the vDSO (no file to read), or in an object beyond the
 *  first 256 looked up. Any thread (look-ups run one at a time, under a mutex); the first
 *  look-up in an object maps its file for the life of the process and sorts its function
 *  symbols once. ELF64 only. */
bool bolts_symbolize(uintptr_t address, char *_Nonnull name, size_t capacity, uintptr_t *_Nonnull offset,
                     const char *_Nullable *_Nonnull image);

/** Writes the demangled form of Swift symbol `mangled` into `out` (at most `capacity`
 *  bytes, NUL-terminated, truncated to fit) with the Swift runtime's demangler
 *  (`swift_demangle`, looked up once found); returns false when the name has no Swift
 *  mangling prefix ("$s", "$S", "$e", "_T0", or one of the first three after "_"), does not
 *  demangle, or no Swift runtime is loaded, leaving `out` untouched. Any thread. */
bool bolts_demangle(const char *_Nonnull mangled, char *_Nonnull out, size_t capacity);

#ifdef __cplusplus
}
#endif
#endif
