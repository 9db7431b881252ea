/* hooks/osrt/: the blocking OS calls of the C library (TPROF_TRACE=osrt),
 * on hooks/ and sampling/. */
/* The one shape of an osrt hook:
 *
 *   OSRT_HOOK(ssize_t, read, 0, (int fd, void *b, size_t n), (fd, b, n),
 *             tp_sys(SYS_read, fd, b, n, 0, 0, 0), OSRT_NOTHING,
 *             tp_osrt_rec_fd(TP_OSRT_ID(READ), t0, t1, fd, n, ret, err))
 *
 * defines read with the real signature: the real one found once (the
 * fallback expression when none can be), the sampling signal blocked
 * around the call when guard is 1, `pre` run just before it, and when
 * recording, the clock read on both sides; a call over the threshold
 * runs `rec`, which sees the params, ret, err (errno after the call,
 * restored after rec), t0 and t1.
 */
#ifndef TP_OSRT_HOOK_H
#define TP_OSRT_HOOK_H

#include <errno.h>
#include <unistd.h>

#include "osrt.h"

#define TP_EXPORT __attribute__((visibility("default")))

/* A system call made directly, for a hook whose real function cannot be
 * found yet (a lookup in progress on this thread): never through a
 * function a hook may interpose (syscall() is one). */
static inline long tp_sys(long n, long a, long b, long c, long d, long e,
			  long f)
{
#if defined(__x86_64__)
	register long r10 __asm__("r10") = d;
	register long r8 __asm__("r8") = e;
	register long r9 __asm__("r9") = f;
	long ret;

	__asm__ volatile("syscall"
			 : "=a"(ret)
			 : "a"(n), "D"(a), "S"(b), "d"(c), "r"(r10), "r"(r8),
			   "r"(r9)
			 : "rcx", "r11", "memory");
	if (ret < 0 && ret > -4096) {
		errno = (int)-ret;
		return -1;
	}
	return ret;
#else
	(void)n, (void)a, (void)b, (void)c, (void)d, (void)e, (void)f;
	errno = ENOSYS;
	return -1;
#endif
}

/* The fast path is the exported function itself: one load and one
 * branch, then a jump to the real function with no frame of its own
 * (the slow path is out of line, so no register is saved first). The
 * load is of the real function from tp_osrt_fast ([1] for a hook with
 * the guard), which holds it only in a process that never
 * records blocking calls (nor samples, for the guard): otherwise, and
 * before the real one is found, it is NULL and the slow path decides. */
#define OSRT_HOOK(rtype, name, guard, params, args, fallback, pre, rec)   \
	OSRT_HOOK_M(rtype, name, guard, params, args, args, fallback, pre, rec)

/* The same where the real function gets other args than the hook's own
 * (names): a mask `pre` made with the sampling signal added. The fast
 * path passes the hook's own: it runs only where nothing is sampled. */
#define OSRT_HOOK_M(rtype, name, guard, params, names, args, fallback,    \
		    pre, rec)                                             \
	static rtype name##_slow params __attribute__((noinline));       \
	TP_EXPORT rtype name params                                      \
	{                                                                \
		rtype (*fn) params = (rtype (*) params)__atomic_load_n(  \
			&tp_osrt_fast[!!(guard)][TP_OSRT_S_##name],      \
			__ATOMIC_RELAXED);                               \
                                                                         \
		if (__builtin_expect(fn != NULL, 1))                     \
			return fn names;                                 \
		return name##_slow names;                                \
	}                                                                \
	static rtype name##_slow params                                  \
	{                                                                \
		rtype (*fn) params = (rtype (*) params)__atomic_load_n(  \
			&tp_osrt_fn[TP_OSRT_S_##name], __ATOMIC_RELAXED); \
		struct tp_osrt_guard g = { 0 };                          \
		uint64_t t0 = 0, t1;                                     \
		int on, err;                                             \
		rtype ret;                                               \
                                                                         \
		if (!fn)                                                 \
			fn = (rtype (*) params)tp_osrt_resolve(          \
				TP_OSRT_S_##name);                       \
		on = tp_osrt_begin(&t0);                                 \
		if (guard)                                               \
			tp_osrt_block(&g);                               \
		pre;                                                     \
		ret = fn ? fn args : (rtype)(fallback);                  \
		if (guard)                                               \
			tp_osrt_unblock(&g);                             \
		if (!on || !tp_osrt_over(t0, &t1))                       \
			return ret;                                      \
		err = errno;                                             \
		rec;                                                     \
		errno = err;                                             \
		return ret;                                              \
	}

#define OSRT_NOTHING ((void)0)

#endif
