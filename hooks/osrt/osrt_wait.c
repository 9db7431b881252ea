/* hooks/osrt/: the blocking OS calls of the C library (TPROF_TRACE=osrt),
 * on hooks/ and sampling/. */
/* Waits the kernel never restarts after a signal handler ran, whatever
 * SA_RESTART says (signal(7)): poll, select, epoll_wait, the sleeps, the
 * waits for signals. While CPU sampling is on, each blocks the sampling
 * signal around itself (or adds it to the mask it installs for its
 * wait), so sampling never makes one fail with EINTR; and each is timed
 * as a blocking call. Process waits restart: no guard. */
#define _GNU_SOURCE
#include <poll.h>
#include <signal.h>
#include <sys/epoll.h>
#include <sys/select.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>

#include "osrt_hook.h"

#define L(x) ((long)(x))

static uint64_t ts_ns(const struct timespec *ts)
{
	return ts ? (uint64_t)ts->tv_sec * 1000000000u + (uint64_t)ts->tv_nsec :
		    UINT64_MAX;
}

static uint64_t tv_ns(const struct timeval *tv)
{
	return tv ? (uint64_t)tv->tv_sec * 1000000000u +
		    (uint64_t)tv->tv_usec * 1000u : UINT64_MAX;
}

static uint64_t ms_ns(int ms)
{
	return ms < 0 ? UINT64_MAX : (uint64_t)ms * 1000000u;
}

#define VAL_REC(id, a, b) \
	tp_osrt_rec_val(TP_OSRT_ID(id), t0, t1, (uint64_t)(a), (uint64_t)(b), \
			(int64_t)ret, err)

OSRT_HOOK(int, poll, 1, (struct pollfd *f, nfds_t n, int ms), (f, n, ms),
	  tp_sys(SYS_poll, L(f), L(n), ms, 0, 0, 0), OSRT_NOTHING,
	  VAL_REC(POLL, n, ms_ns(ms)))
OSRT_HOOK(int, __poll_chk, 1,
	  (struct pollfd *f, nfds_t n, int ms, size_t len), (f, n, ms, len),
	  tp_sys(SYS_poll, L(f), L(n), ms, 0, 0, 0), OSRT_NOTHING,
	  VAL_REC(POLL, n, ms_ns(ms)))
/* The kernel takes the mask's size: 8 bytes on Linux. */
OSRT_HOOK_M(int, ppoll, 1,
	  (struct pollfd *f, nfds_t n, const struct timespec *ts,
	   const sigset_t *m), (f, n, ts, m), (f, n, ts, mm),
	  tp_sys(SYS_ppoll, L(f), L(n), L(ts), L(mm), 8, 0),
	  sigset_t mc; const sigset_t *mm = tp_osrt_mask(m, &mc),
	  VAL_REC(POLL, n, ts_ns(ts)))
OSRT_HOOK(int, select, 1,
	  (int n, fd_set *r, fd_set *w, fd_set *x, struct timeval *tv),
	  (n, r, w, x, tv), tp_sys(SYS_select, n, L(r), L(w), L(x), L(tv), 0),
	  uint64_t asked __attribute__((unused)) = tv_ns(tv),
	  VAL_REC(SELECT, n, asked))
OSRT_HOOK_M(int, pselect, 1,
	  (int n, fd_set *r, fd_set *w, fd_set *x, const struct timespec *ts,
	   const sigset_t *m), (n, r, w, x, ts, m), (n, r, w, x, ts, mm), -1,
	  sigset_t mc; const sigset_t *mm = tp_osrt_mask(m, &mc),
	  VAL_REC(SELECT, n, ts_ns(ts)))
OSRT_HOOK(int, epoll_wait, 1,
	  (int ep, struct epoll_event *ev, int n, int ms), (ep, ev, n, ms),
	  tp_sys(SYS_epoll_wait, ep, L(ev), n, ms, 0, 0), OSRT_NOTHING,
	  VAL_REC(EPOLL_WAIT, n, ms_ns(ms)))
OSRT_HOOK_M(int, epoll_pwait, 1,
	  (int ep, struct epoll_event *ev, int n, int ms, const sigset_t *m),
	  (ep, ev, n, ms, m), (ep, ev, n, ms, mm),
	  tp_sys(SYS_epoll_pwait, ep, L(ev), n, ms, L(mm), 8),
	  sigset_t mc; const sigset_t *mm = tp_osrt_mask(m, &mc),
	  VAL_REC(EPOLL_WAIT, n, ms_ns(ms)))

OSRT_HOOK(int, nanosleep, 1,
	  (const struct timespec *req, struct timespec *rem), (req, rem),
	  tp_sys(SYS_nanosleep, L(req), L(rem), 0, 0, 0, 0), OSRT_NOTHING,
	  VAL_REC(NANOSLEEP, 0, ts_ns(req)))
/* clock_nanosleep returns the error instead of setting errno. */
OSRT_HOOK(int, clock_nanosleep, 1,
	  (clockid_t c, int fl, const struct timespec *req,
	   struct timespec *rem), (c, fl, req, rem), ENOSYS, OSRT_NOTHING,
	  VAL_REC(CLOCK_NANOSLEEP, c, ts_ns(req)))
OSRT_HOOK(int, usleep, 1, (useconds_t us), (us), -1, OSRT_NOTHING,
	  VAL_REC(USLEEP, 0, (uint64_t)us * 1000u))
OSRT_HOOK(unsigned, sleep, 1, (unsigned s), (s), s, OSRT_NOTHING,
	  VAL_REC(SLEEP, 0, (uint64_t)s * 1000000000u))

OSRT_HOOK(pid_t, waitpid, 0, (pid_t p, int *st, int fl), (p, st, fl),
	  tp_sys(SYS_wait4, p, L(st), fl, 0, 0, 0), OSRT_NOTHING,
	  VAL_REC(WAITPID, (int64_t)p, fl))
OSRT_HOOK(pid_t, wait, 0, (int *st), (st),
	  tp_sys(SYS_wait4, -1, L(st), 0, 0, 0, 0), OSRT_NOTHING,
	  VAL_REC(WAIT, -1, 0))

/* Waits for signals: pause and sigsuspend end when any handler runs,
 * sigtimedwait when one runs for a signal it does not wait for. The
 * sampling signal is added to the mask they wait with, and taken out of
 * the set a program waits for (a thread that blocks every signal and
 * waits for them all must never be handed a sample's signal). */
static const sigset_t *without_sampling(const sigset_t *set, sigset_t *copy)
{
	int sig = __atomic_load_n(&tp_sampler_signal, __ATOMIC_RELAXED);

	if (!set || !sig || !sigismember(set, sig))
		return set;
	*copy = *set;
	sigdelset(copy, sig);
	return copy;
}

TP_EXPORT int pause(void)
{
	int (*fn)(void) = (int (*)(void))__atomic_load_n(
		&tp_osrt_fn[TP_OSRT_S_pause], __ATOMIC_RELAXED);
	uint64_t t0 = 0, t1;
	sigset_t cur, mc;
	int on, err, ret;

	if (__builtin_expect(!fn, 0))
		fn = (int (*)(void))tp_osrt_resolve(TP_OSRT_S_pause);
	on = tp_osrt_begin(&t0);
	if (tp_osrt_sampling() && pthread_sigmask(SIG_BLOCK, NULL, &cur) == 0)
		ret = (int)tp_sys(SYS_rt_sigsuspend, L(tp_osrt_mask(&cur, &mc)),
				  8, 0, 0, 0, 0);
	else
		ret = fn ? fn() : (int)tp_sys(SYS_pause, 0, 0, 0, 0, 0, 0);
	if (!on || !tp_osrt_over(t0, &t1))
		return ret;
	err = errno;
	VAL_REC(PAUSE, 0, 0);
	errno = err;
	return ret;
}

OSRT_HOOK_M(int, sigsuspend, 1, (const sigset_t *m), (m), (mm),
	  tp_sys(SYS_rt_sigsuspend, L(mm), 8, 0, 0, 0, 0),
	  sigset_t mc; const sigset_t *mm = tp_osrt_mask(m, &mc),
	  VAL_REC(SIGSUSPEND, 0, 0))
OSRT_HOOK_M(int, sigtimedwait, 1,
	  (const sigset_t *set, siginfo_t *si, const struct timespec *ts),
	  (set, si, ts), (ws, si, ts), tp_sys(SYS_rt_sigtimedwait, L(ws), L(si), L(ts), 8,
			       0, 0),
	  sigset_t wc; const sigset_t *ws = without_sampling(set, &wc),
	  VAL_REC(SIGTIMEDWAIT, 0, ts_ns(ts)))
OSRT_HOOK_M(int, sigwaitinfo, 1, (const sigset_t *set, siginfo_t *si),
	  (set, si), (ws, si), tp_sys(SYS_rt_sigtimedwait, L(ws), L(si), 0, 8, 0, 0),
	  sigset_t wc; const sigset_t *ws = without_sampling(set, &wc),
	  VAL_REC(SIGTIMEDWAIT, 0, UINT64_MAX))

/* sigwait restarts by itself; signalfd reads signals instead of
 * waiting: neither is timed, both leave the sampling signal out. */
TP_EXPORT int sigwait(const sigset_t *set, int *sig)
{
	int (*fn)(const sigset_t *, int *) =
		(int (*)(const sigset_t *, int *))__atomic_load_n(
			&tp_osrt_fn[TP_OSRT_S_sigwait], __ATOMIC_RELAXED);
	sigset_t wc;

	if (__builtin_expect(!fn, 0))
		fn = (int (*)(const sigset_t *, int *))tp_osrt_resolve(
			TP_OSRT_S_sigwait);
	return fn ? fn(without_sampling(set, &wc), sig) : ENOSYS;
}

TP_EXPORT int signalfd(int fd, const sigset_t *mask, int flags)
{
	int (*fn)(int, const sigset_t *, int) =
		(int (*)(int, const sigset_t *, int))__atomic_load_n(
			&tp_osrt_fn[TP_OSRT_S_signalfd], __ATOMIC_RELAXED);
	sigset_t wc;

	if (__builtin_expect(!fn, 0))
		fn = (int (*)(int, const sigset_t *, int))tp_osrt_resolve(
			TP_OSRT_S_signalfd);
	if (!fn) {
		errno = ENOSYS;
		return -1;
	}
	return fn(fd, without_sampling(mask, &wc), flags);
}
