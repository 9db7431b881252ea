/* test_unwind.c with frame pointers kept in the test's own functions, as
 * in an interpreter built with -fno-omit-frame-pointer (and in make test
 * SANITIZE=...): libunwind's frame-pointer fallback then walks through a
 * 3.12 trampoline instead of stopping at it. */
#pragma GCC optimize("no-omit-frame-pointer")
#include "test_unwind.c"
