/* sampling/: the host side: CPU samples (signal handler, per-thread timers
 * or perf events) and the rings of blocking OS calls; on util/ ..
 * capture/. */
/* A thread's sampling clock, made and taken back by the writer
 * (docs/design/host-sampling.md says why in this order).
 *
 * A POSIX timer on the thread's CPU-time clock first (SIGEV_THREAD_ID):
 * no descriptor, no privilege, nothing a default seccomp profile
 * forbids, and cheap: its signal rides on the kernel's tick. The kernel
 * checks CPU timers at that tick, so at CONFIG_HZ=250 a 1 ms timer fires
 * every 4 ms with 3 overruns, which the sample's weight counts. One
 * queued signal per timer, whatever happens.
 *
 * Else (timer_create refused) perf_event_open: a task-clock counter of
 * the thread, user and kernel time, whose overflow every period raises
 * the signal on that thread (F_SETOWN_EX, F_SETSIG), driven by a
 * high-resolution timer: a sample every period of CPU time whatever the
 * tick rate, at several times the cost per sample. It is armed for one
 * overflow at a time (PERF_EVENT_IOC_REFRESH 1, renewed by the handler):
 * at most one signal is ever queued per thread, even for a thread that
 * blocks it. TPROF_SAMPLER picks one of the two alone.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <linux/perf_event.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "config/config.h"
#include "files/owned_fd.h"
#include "sampler_int.h"

struct tp_sampler_state tp_smp;
int tp_sampler_signal;

/* The descriptors perf may hold: a quarter of the room above where
 * tprof puts its own (files/owned_fd.c), at most 512. */
static unsigned perf_budget(void)
{
	struct rlimit rl;
	rlim_t room;

	if (getrlimit(RLIMIT_NOFILE, &rl) < 0 || rl.rlim_cur == RLIM_INFINITY)
		return 512;
	room = rl.rlim_cur - (rl.rlim_cur / 4 * 3 < 1000 ? rl.rlim_cur / 4 * 3 :
			      1000);
	room /= 4;
	return room > 512 ? 512 : (unsigned)room;
}

static int by_fd_ready(void)
{
	size_t bytes;
	void *p;

	if (tp_smp.by_fd)
		return 0;
	tp_smp.by_fd_max = 1u << 20;
	bytes = tp_smp.by_fd_max * sizeof(*tp_smp.by_fd);
	p = mmap(NULL, bytes, PROT_READ | PROT_WRITE,
		 MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	if (p == MAP_FAILED)
		return -1;
	tp_smp.by_fd = p;
	tp_smp.perf_max = perf_budget();
	return 0;
}

static int paranoid(void)
{
	FILE *f = fopen("/proc/sys/kernel/perf_event_paranoid", "re");
	int v = -99;

	if (!f)
		return v;
	if (fscanf(f, "%d", &v) != 1)
		v = -99;
	fclose(f);
	return v;
}

/* Why a call was refused, for the trace and the log. */
static void say_why(char *why, size_t len, const char *call, int err)
{
	int p = paranoid();

	if (err == EACCES && p != -99 && !strcmp(call, "perf_event_open"))
		snprintf(why, len, "%s: %s (kernel.perf_event_paranoid is %d: "
			 "sampling kernel time too needs 1 or less, or "
			 "CAP_PERFMON)", call, strerror(err), p);
	else if (err == EPERM)
		snprintf(why, len, "%s: %s (a seccomp filter, such as Docker's "
			 "default profile for perf_event_open, or a security "
			 "module forbids it)", call, strerror(err));
	else
		snprintf(why, len, "%s: %s", call, strerror(err));
}

/* Out of descriptors or memory, or the thread went away, is this
 * thread's lot; anything else is the machine's: the call is not tried
 * again. */
static int machine_wide(int err)
{
	return err != EMFILE && err != ENFILE && err != ESRCH &&
	       err != ENOMEM && err != EAGAIN && err != EINVAL;
}

static long perf_event_open(struct perf_event_attr *a, pid_t tid)
{
	return syscall(SYS_perf_event_open, a, tid, -1, -1,
		       PERF_FLAG_FD_CLOEXEC);
}

/* The descriptor's owner, signal and async mode, then its id. */
static int perf_setup(struct tp_hthread *h, int fd)
{
	struct f_owner_ex o = { F_OWNER_TID, h->tid };

	return fcntl(fd, F_SETOWN_EX, &o) < 0 ||
	       fcntl(fd, F_SETSIG, tp_sampler_signal) < 0 ||
	       fcntl(fd, F_SETFL, O_ASYNC | O_NONBLOCK) < 0 ||
	       ioctl(fd, PERF_EVENT_IOC_ID, &h->perf_id) < 0 ? -1 : 0;
}

static int arm_perf(struct tp_hthread *h)
{
	struct perf_event_attr a;
	int fd, err;

	if (by_fd_ready() < 0 || tp_smp.perf_now >= tp_smp.perf_max)
		return -1;
	memset(&a, 0, sizeof(a));
	a.size = sizeof(a);
	a.type = PERF_TYPE_SOFTWARE;
	a.config = PERF_COUNT_SW_TASK_CLOCK;
	a.sample_period = tp_smp.period_ns;
	a.disabled = 1;
	a.exclude_hv = 1;
	a.wakeup_events = 1;
	fd = (int)perf_event_open(&a, h->tid);
	if (fd < 0) {
		err = errno;
		if (machine_wide(err) || err == EINVAL) {
			tp_smp.perf_off = 1;
			say_why(tp_smp.why_perf, sizeof(tp_smp.why_perf),
				"perf_event_open", err);
		}
		return -1;
	}
	fd = tp_fd_high(fd);
	if ((unsigned)fd >= tp_smp.by_fd_max || perf_setup(h, fd) < 0) {
		close(fd);
		return -1;
	}
	h->fd = fd;
	h->mech = TP_MECH_PERF;
	__atomic_store_n(&tp_smp.by_fd[fd], h, __ATOMIC_RELEASE);
	if (ioctl(fd, PERF_EVENT_IOC_REFRESH, 1) < 0) {
		__atomic_store_n(&tp_smp.by_fd[fd], NULL, __ATOMIC_RELEASE);
		close(fd);
		h->fd = -1;
		h->mech = TP_MECH_NONE;
		return -1;
	}
	tp_smp.perf_now++;
	tp_smp.threads_perf++;
	return 0;
}

/* The CPU-time clock of another thread of this process: what
 * pthread_getcpuclockid gives, from its kernel id (the kernel's
 * MAKE_THREAD_CPUCLOCK: CPUCLOCK_SCHED | CPUCLOCK_PERTHREAD_MASK). */
static clockid_t thread_clock(pid_t tid)
{
	return (clockid_t)(((unsigned)~tid << 3) | 6u);
}

static int arm_timer(struct tp_hthread *h)
{
	struct itimerspec it;
	struct sigevent se;

	memset(&se, 0, sizeof(se));
	se.sigev_notify = SIGEV_THREAD_ID;
	se.sigev_signo = tp_sampler_signal;
	se.sigev_value.sival_ptr = h;
	se._sigev_un._tid = h->tid;
	if (timer_create(thread_clock(h->tid), &se, &h->timer) < 0) {
		if (machine_wide(errno)) {
			tp_smp.timer_off = 1;
			say_why(tp_smp.why_timer, sizeof(tp_smp.why_timer),
				"timer_create", errno);
		}
		return -1;
	}
	it.it_interval.tv_sec = (time_t)(tp_smp.period_ns / 1000000000u);
	it.it_interval.tv_nsec = (long)(tp_smp.period_ns % 1000000000u);
	it.it_value = it.it_interval;
	h->mech = TP_MECH_TIMER;
	if (timer_settime(h->timer, 0, &it, NULL) < 0) {
		timer_delete(h->timer);
		h->mech = TP_MECH_NONE;
		return -1;
	}
	tp_smp.threads_timer++;
	return 0;
}

int tp_smp_arm(struct tp_hthread *h)
{
	if (tp_smp.want != TP_SAMPLER_PERF && !tp_smp.timer_off &&
	    arm_timer(h) == 0)
		return 0;
	if (tp_smp.want != TP_SAMPLER_TIMER && !tp_smp.perf_off &&
	    arm_perf(h) == 0)
		return 0;
	tp_smp.threads_failed++;
	return -1;
}

/* Whether fd is a perf event whose id is id. */
static int still_ours(int fd, uint64_t id)
{
	static const char want[] = "anon_inode:[perf_event]";
	char path[48], link[sizeof(want) + 1];
	uint64_t now = 0;
	ssize_t n;

	snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
	n = readlink(path, link, sizeof(link));
	return n == (ssize_t)sizeof(want) - 1 && !memcmp(link, want, (size_t)n) &&
	       ioctl(fd, PERF_EVENT_IOC_ID, &now) == 0 && now == id;
}

/* Closes the descriptor only while it is still this counter: the
 * program may have closed the number and opened something else there. */
static void disarm_perf(struct tp_hthread *h)
{
	int fd = h->fd;

	__atomic_store_n(&tp_smp.by_fd[fd], NULL, __ATOMIC_RELEASE);
	if (still_ours(fd, h->perf_id)) {
		ioctl(fd, PERF_EVENT_IOC_DISABLE, 0);
		close(fd);
	}
	h->fd = -1;
	tp_smp.perf_now--;
}

void tp_smp_disarm(struct tp_hthread *h)
{
	if (h->mech == TP_MECH_PERF && h->fd >= 0)
		disarm_perf(h);
	else if (h->mech == TP_MECH_TIMER)
		timer_delete(h->timer);
	h->mech = TP_MECH_NONE;
}

void tp_smp_perf_rearm(int fd)
{
	ioctl(fd, PERF_EVENT_IOC_REFRESH, 1);
}
