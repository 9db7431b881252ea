/* hooks/osrt/: the blocking OS calls of the C library (TPROF_TRACE=osrt),
 * on hooks/ and sampling/. */
/* Locks, conditions, semaphores, joins: the futex waits of the C
 * library, named by the call that waits (the library's own futex calls
 * are not functions anyone can hook). A program's own futex waits made
 * with syscall(SYS_futex, ...) are timed as "futex". Futex waits
 * restart after a handler (or are retried by the library): no guard. */
#define _GNU_SOURCE
#include <linux/futex.h>
#include <pthread.h>
#include <semaphore.h>
#include <stdarg.h>
#include <sys/syscall.h>

#include "osrt_hook.h"

#define OBJ_REC(id, obj) \
	tp_osrt_rec_val(TP_OSRT_ID(id), t0, t1, (uint64_t)(uintptr_t)(obj), 0, \
			(int64_t)ret, err)

OSRT_HOOK(int, pthread_mutex_lock, 0, (pthread_mutex_t *m), (m), EINVAL,
	  OSRT_NOTHING, OBJ_REC(MUTEX_LOCK, m))
OSRT_HOOK(int, pthread_mutex_timedlock, 0,
	  (pthread_mutex_t *m, const struct timespec *ts), (m, ts), EINVAL,
	  OSRT_NOTHING, OBJ_REC(MUTEX_TIMEDLOCK, m))
OSRT_HOOK(int, pthread_cond_wait, 0, (pthread_cond_t *c, pthread_mutex_t *m),
	  (c, m), EINVAL, OSRT_NOTHING, OBJ_REC(COND_WAIT, c))
OSRT_HOOK(int, pthread_cond_timedwait, 0,
	  (pthread_cond_t *c, pthread_mutex_t *m, const struct timespec *ts),
	  (c, m, ts), EINVAL, OSRT_NOTHING, OBJ_REC(COND_TIMEDWAIT, c))
OSRT_HOOK(int, pthread_cond_clockwait, 0,
	  (pthread_cond_t *c, pthread_mutex_t *m, clockid_t k,
	   const struct timespec *ts), (c, m, k, ts), EINVAL, OSRT_NOTHING,
	  OBJ_REC(COND_CLOCKWAIT, c))
OSRT_HOOK(int, pthread_rwlock_rdlock, 0, (pthread_rwlock_t *l), (l), EINVAL,
	  OSRT_NOTHING, OBJ_REC(RWLOCK_RDLOCK, l))
OSRT_HOOK(int, pthread_rwlock_wrlock, 0, (pthread_rwlock_t *l), (l), EINVAL,
	  OSRT_NOTHING, OBJ_REC(RWLOCK_WRLOCK, l))
OSRT_HOOK(int, pthread_barrier_wait, 0, (pthread_barrier_t *b), (b), EINVAL,
	  OSRT_NOTHING, OBJ_REC(BARRIER_WAIT, b))
OSRT_HOOK(int, sem_wait, 0, (sem_t *s), (s), -1, OSRT_NOTHING,
	  OBJ_REC(SEM_WAIT, s))
OSRT_HOOK(int, sem_timedwait, 0, (sem_t *s, const struct timespec *ts),
	  (s, ts), -1, OSRT_NOTHING, OBJ_REC(SEM_TIMEDWAIT, s))
OSRT_HOOK(int, sem_clockwait, 0,
	  (sem_t *s, clockid_t k, const struct timespec *ts), (s, k, ts), -1,
	  OSRT_NOTHING, OBJ_REC(SEM_CLOCKWAIT, s))
OSRT_HOOK(int, pthread_join, 0, (pthread_t t, void **rv), (t, rv), EINVAL,
	  OSRT_NOTHING, OBJ_REC(JOIN, t))

/* The futex operations that wait. */
static int futex_waits(long op)
{
	switch (op & FUTEX_CMD_MASK) {
	case FUTEX_WAIT:
	case FUTEX_WAIT_BITSET:
	case FUTEX_LOCK_PI:
	case FUTEX_WAIT_REQUEUE_PI:
		return 1;
	}
	return 0;
}

/* syscall(2) takes up to six arguments in registers; all six are passed
 * on, as the C library's own syscall does. */
TP_EXPORT long syscall(long n, ...)
{
	long (*fn)(long, ...) = (long (*)(long, ...))__atomic_load_n(
		&tp_osrt_fn[TP_OSRT_S_syscall], __ATOMIC_RELAXED);
	long a[6], ret;
	uint64_t t0 = 0, t1;
	va_list ap;
	int i, on, err;

	va_start(ap, n);
	for (i = 0; i < 6; i++)
		a[i] = va_arg(ap, long);
	va_end(ap);
	if (__builtin_expect(!fn, 0))
		fn = (long (*)(long, ...))tp_osrt_resolve(TP_OSRT_S_syscall);
	on = n == SYS_futex && futex_waits(a[1]) && tp_osrt_begin(&t0);
	ret = fn ? fn(n, a[0], a[1], a[2], a[3], a[4], a[5]) :
		   tp_sys(n, a[0], a[1], a[2], a[3], a[4], a[5]);
	if (!on || !tp_osrt_over(t0, &t1))
		return ret;
	err = errno;
	tp_osrt_rec_val(TP_OSRT_ID(FUTEX), t0, t1, (uint64_t)a[0],
			(uint64_t)a[1], ret, err);
	errno = err;
	return ret;
}
