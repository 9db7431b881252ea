/* hooks/osrt/: the blocking OS calls of the C library (TPROF_TRACE=osrt),
 * on hooks/ and sampling/. */
/* Blocking OS calls: each hook times the real call and records one that
 * took TPROF_OSRT_MIN_US or longer (sampling/osrt_rec.h), with its
 * args: the descriptor and the file it is (read from /proc/self/fd only
 * for a call being recorded), bytes asked and done, the object waited
 * on, the time asked for.
 *
 * The same hooks keep CPU sampling from adding EINTR: the calls the
 * kernel never restarts after a handler ran, whatever SA_RESTART says
 * (poll, select, epoll_wait, the sleeps, sigsuspend, sigtimedwait, ...),
 * block the sampling signal around themselves while sampling is on; a
 * sample due meanwhile is taken when the call returns.
 *
 * Each hook finds the real function at its first call (osrt_resolve.c),
 * which may come before tprof is set up (another library's constructor)
 * or from inside the lookup itself (a malloc that locks a mutex): the
 * lookup cannot recurse.
 */
#ifndef TP_OSRT_H
#define TP_OSRT_H

#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>

#include "record/api.h"
#include "sampling/osrt_rec.h"
#include "sampling/sampler.h"

/* What a record's args are (osrt_args.c). */
enum tp_osrt_kind {
	TP_OSRT_K_IO,		/* fd, path, bytes asked, bytes done */
	TP_OSRT_K_FD,		/* fd, path, result */
	TP_OSRT_K_OPEN,		/* path, flags, fd */
	TP_OSRT_K_POLL,		/* descriptors, timeout */
	TP_OSRT_K_SYNC,		/* the object waited on */
	TP_OSRT_K_SLEEP,	/* time asked for */
	TP_OSRT_K_WAIT,		/* pid waited for, pid reaped */
	TP_OSRT_K_SIG,		/* waits for signals */
};

/* id, the name in the trace, kind. Variants share a name: pread64 is
 * "pread", __read_chk "read", openat "open". */
#define TP_OSRT_APIS(X)                                                  \
	X(READ, "read", IO) X(PREAD, "pread", IO) X(READV, "readv", IO)  \
	X(WRITE, "write", IO) X(PWRITE, "pwrite", IO)                    \
	X(WRITEV, "writev", IO) X(RECV, "recv", IO)                      \
	X(RECVFROM, "recvfrom", IO) X(RECVMSG, "recvmsg", IO)            \
	X(SEND, "send", IO) X(SENDTO, "sendto", IO)                      \
	X(SENDMSG, "sendmsg", IO) X(ACCEPT, "accept", FD)                \
	X(CONNECT, "connect", FD) X(OPEN, "open", OPEN)                  \
	X(POLL, "poll", POLL) X(SELECT, "select", POLL)                  \
	X(EPOLL_WAIT, "epoll_wait", POLL)                                \
	X(MUTEX_LOCK, "pthread_mutex_lock", SYNC)                        \
	X(MUTEX_TIMEDLOCK, "pthread_mutex_timedlock", SYNC)              \
	X(COND_WAIT, "pthread_cond_wait", SYNC)                          \
	X(COND_TIMEDWAIT, "pthread_cond_timedwait", SYNC)                \
	X(COND_CLOCKWAIT, "pthread_cond_clockwait", SYNC)                \
	X(RWLOCK_RDLOCK, "pthread_rwlock_rdlock", SYNC)                  \
	X(RWLOCK_WRLOCK, "pthread_rwlock_wrlock", SYNC)                  \
	X(BARRIER_WAIT, "pthread_barrier_wait", SYNC)                    \
	X(SEM_WAIT, "sem_wait", SYNC) X(SEM_TIMEDWAIT, "sem_timedwait", SYNC) \
	X(SEM_CLOCKWAIT, "sem_clockwait", SYNC)                          \
	X(JOIN, "pthread_join", SYNC) X(FUTEX, "futex", SYNC)            \
	X(NANOSLEEP, "nanosleep", SLEEP)                                 \
	X(CLOCK_NANOSLEEP, "clock_nanosleep", SLEEP)                     \
	X(USLEEP, "usleep", SLEEP) X(SLEEP, "sleep", SLEEP)              \
	X(WAITPID, "waitpid", WAIT) X(WAIT, "wait", WAIT)                \
	X(PAUSE, "pause", SIG) X(SIGSUSPEND, "sigsuspend", SIG)          \
	X(SIGTIMEDWAIT, "sigtimedwait", SIG)

enum tp_osrt_api {
#define X(id, name, kind) TP_OSRT_##id,
	TP_OSRT_APIS(X)
#undef X
	TP_OSRT_N
};

#define TP_OSRT_ID(x) TP_API_ID(TP_TABLE_OSRT, TP_OSRT_##x)

void tp_osrt_register(void);

/* Every C library function hooked here: its real one is found at
 * load (tp_osrt_prime), or at its first call if that comes first. */
#define TP_OSRT_SYMS(X) \
	X(__poll_chk) X(__read_chk) X(__recv_chk) X(accept) X(accept4) \
	X(clock_nanosleep) X(connect) X(epoll_pwait) X(epoll_wait) \
	X(nanosleep) X(open) X(open64) X(openat) X(openat64) X(pause) \
	X(poll) X(ppoll) X(pread) X(pread64) X(pselect) \
	X(pthread_barrier_wait) X(pthread_cond_clockwait) \
	X(pthread_cond_timedwait) X(pthread_cond_wait) X(pthread_join) \
	X(pthread_mutex_lock) X(pthread_mutex_timedlock) \
	X(pthread_rwlock_rdlock) X(pthread_rwlock_wrlock) X(pwrite) \
	X(pwrite64) X(read) X(readv) X(recv) X(recvfrom) X(recvmsg) \
	X(select) X(sem_clockwait) X(sem_timedwait) X(sem_wait) X(send) \
	X(sendmsg) X(sendto) X(signalfd) X(sigsuspend) X(sigtimedwait) \
	X(sigwait) X(sigwaitinfo) X(sleep) X(syscall) X(usleep) X(wait) \
	X(waitpid) X(write) X(writev)

enum tp_osrt_sym {
#define X(name) TP_OSRT_S_##name,
	TP_OSRT_SYMS(X)
#undef X
	TP_OSRT_S_N
};

extern void *tp_osrt_fn[TP_OSRT_S_N];
/* The hooks' fast path (osrt_hook.h): the real function where the hook
 * has nothing to do in this process, else NULL. [1]: for the hooks that
 * keep the sampling signal out of calls the kernel does not restart. */
extern void *tp_osrt_fast[2][TP_OSRT_S_N]
	__attribute__((visibility("hidden")));	/* one load, no GOT */
/* Fills them for a process that traces `sources` (TPROF_TRACE's
 * TP_SRC_* bits, fixed for its life): a hook forwards at once when
 * osrt is not among them (nor cpu, for one with the guard). 0: tprof
 * is off in this process. */
void tp_osrt_set_fast(unsigned sources);

/* osrt_resolve.c: the real function of sym, stored in tp_osrt_fn; NULL
 * when none can be found (the hook then makes the system call itself). */
void *tp_osrt_resolve(enum tp_osrt_sym sym);
/* Finds them all now (at load: before the sampler's handler can run
 * one, such as libunwind's mutex, for the first time). */
void tp_osrt_prime(void);

/* osrt_record.c: a call over the threshold, recorded (out of line, with
 * errno kept). The record functions take the hook's frame and their own
 * off the call stack they capture. */
void tp_osrt_rec_fd(uint16_t api, uint64_t t0, uint64_t t1, int fd,
		    uint64_t bytes, int64_t ret, int err)
	__attribute__((noinline));
void tp_osrt_rec_path(uint16_t api, uint64_t t0, uint64_t t1,
		      const char *path, uint64_t flags, int64_t ret, int err)
	__attribute__((noinline));
void tp_osrt_rec_val(uint16_t api, uint64_t t0, uint64_t t1, uint64_t a,
		     uint64_t b, int64_t ret, int err)
	__attribute__((noinline));

/* The EINTR guard: the sampling signal blocked around a call the kernel
 * would not restart. */
struct tp_osrt_guard {
	int sig;		/* 0: not blocked here */
};

/* The sampling signal while samples are being taken, else 0. */
static inline int tp_osrt_sampling(void)
{
	int sig = __atomic_load_n(&tp_sampler_signal, __ATOMIC_RELAXED);

	if (!sig || !(__atomic_load_n(&tp_recording, __ATOMIC_RELAXED) &
		      TP_SRC_CPU))
		return 0;
	return sig;
}

static inline void tp_osrt_block(struct tp_osrt_guard *g)
{
	int sig = tp_osrt_sampling();
	sigset_t s, old;

	g->sig = 0;
	if (!sig)
		return;
	sigemptyset(&s);
	sigaddset(&s, sig);
	if (pthread_sigmask(SIG_BLOCK, &s, &old) == 0 &&
	    !sigismember(&old, sig))
		g->sig = sig;
}

static inline void tp_osrt_unblock(const struct tp_osrt_guard *g)
{
	int saved = errno;
	sigset_t s;

	if (!g->sig)
		return;
	sigemptyset(&s);
	sigaddset(&s, g->sig);
	pthread_sigmask(SIG_UNBLOCK, &s, NULL);
	errno = saved;
}

/* A mask the call installs itself for its wait (ppoll, epoll_pwait,
 * pselect, sigsuspend): the sampling signal added to a copy. */
static inline const sigset_t *tp_osrt_mask(const sigset_t *m, sigset_t *copy)
{
	int sig = tp_osrt_sampling();

	if (!m || !sig)
		return m;
	*copy = *m;
	sigaddset(copy, sig);
	return copy;
}

#endif
