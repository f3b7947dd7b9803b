/* The harness maps C11 atomics itself (relacy_shim.h); this header stands in for the
 * C library's so that the C files' #include <stdatomic.h> adds nothing. */
