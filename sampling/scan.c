/* sampling/: the host side: CPU samples (signal handler, per-thread timers
 * or perf events) and the rings of blocking OS calls; on util/ ..
 * capture/. */
/* The writer's part: at each cycle, the threads of /proc/self/task
 * against the host threads it knows. A thread it has not seen gets a
 * sample ring and a clock, whether it began before tprof or after; a
 * host thread whose thread is gone is disarmed and marked for the drain
 * to free. The writer is never sampled.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "config/config.h"
#include "session/session.h"
#include "stacks/stacks.h"
#include "util/log.h"
#include "sampler_int.h"

static int cmp_tid(const void *a, const void *b)
{
	pid_t x = *(const pid_t *)a, y = *(const pid_t *)b;

	return x < y ? -1 : x > y;
}

/* The process's threads, sorted; NULL when they cannot be listed. */
static pid_t *list_tasks(size_t *n)
{
	DIR *d = opendir("/proc/self/task");
	size_t cap = 64;
	pid_t *v = malloc(cap * sizeof(*v));
	struct dirent *de;

	*n = 0;
	if (!d || !v) {
		if (d)
			closedir(d);
		free(v);
		return NULL;
	}
	while ((de = readdir(d))) {
		long tid = strtol(de->d_name, NULL, 10);

		if (tid <= 0)
			continue;
		if (*n == cap) {
			pid_t *g = realloc(v, cap * 2 * sizeof(*v));

			if (!g)
				break;
			v = g;
			cap *= 2;
		}
		v[(*n)++] = (pid_t)tid;
	}
	closedir(d);
	qsort(v, *n, sizeof(*v), cmp_tid);
	return v;
}

static int has(const pid_t *v, size_t n, pid_t tid)
{
	return bsearch(&tid, v, n, sizeof(*v), cmp_tid) != NULL;
}

static int start(void)
{
	const struct tp_config *c = &tp_sess.cfg;

	if (tp_smp.started)
		return tp_smp.started > 0;
	tp_smp.started = -1;
	tp_smp.want = c->sampler;
	tp_smp.period_ns = 1000000000ull / (c->sample_hz ? c->sample_hz :
					    TP_DEFAULT_SAMPLE_HZ);
	/* Set up at load (preload/lifecycle.c): here only its result. */
	if (tp_stacks_setup(c->bt_depth, "TPROF_TRACE=cpu") < 0)
		return 0;
	tp_smp.depth = tp_stacks_depth();
	if (tp_smp_install() < 0) {
		tp_warn("TPROF_TRACE=cpu: every real-time signal has a handler "
			"already, so no CPU samples are taken (tprof never "
			"takes SIGPROF, which the program may use)");
		return 0;
	}
	tp_smp.started = 1;
	return 1;
}

/* Said once, when sampling stops short or never starts. */
static void say_failed(void)
{
	if (tp_smp.said_failed)
		return;
	tp_smp.said_failed = 1;
	if (tp_smp.want == TP_SAMPLER_PERF && tp_smp.why_perf[0])
		tp_warn("TPROF_SAMPLER=perf: %s: no CPU samples are taken "
			"(TPROF_SAMPLER=auto uses CPU-time timers)",
			tp_smp.why_perf);
	else if (tp_smp.why_timer[0] && tp_smp.why_perf[0])
		tp_warn("TPROF_TRACE=cpu: %s, and %s: no CPU samples are taken",
			tp_smp.why_timer, tp_smp.why_perf);
	else if (tp_smp.want == TP_SAMPLER_TIMER && tp_smp.why_timer[0])
		tp_warn("TPROF_SAMPLER=timer: %s: no CPU samples are taken "
			"(TPROF_SAMPLER=auto falls back to perf_event_open)",
			tp_smp.why_timer);
	else
		tp_warn("TPROF_TRACE=cpu: a thread's sampling clock could not "
			"be made (%s): it is not sampled", strerror(errno));
}

/* Disarms host threads gone from the listing made at generation gen;
 * one made since (it may not be in the listing) is left alone. */
static void mark_gone(const pid_t *tids, size_t n, uint32_t gen)
{
	struct tp_hthread *h;

	for (h = tp_ht_list(); h; h = h->next) {
		if (h->gone || h->born >= gen || has(tids, n, h->tid))
			continue;
		if (h->kind == TP_HT_SAMPLES)
			tp_smp_disarm(h);
		h->gone = 1;
	}
}

/* The tids with a sample ring, sorted. */
static pid_t *sampled(size_t *n)
{
	struct tp_hthread *h;
	size_t cap = 0;
	pid_t *v = NULL, *g;

	*n = 0;
	for (h = tp_ht_list(); h; h = h->next) {
		if (h->kind != TP_HT_SAMPLES || h->gone)
			continue;
		if (*n == cap) {
			cap = cap ? cap * 2 : 64;
			g = realloc(v, cap * sizeof(*v));
			if (!g)
				break;
			v = g;
		}
		v[(*n)++] = h->tid;
	}
	if (v)
		qsort(v, *n, sizeof(*v), cmp_tid);
	return v;
}

static void arm_new(const pid_t *tids, size_t n)
{
	pid_t self = (pid_t)syscall(SYS_gettid);
	size_t ns, i;
	pid_t *have = sampled(&ns);
	struct tp_hthread *h;

	for (h = tp_ht_list(); h; h = h->next) {
		if (h->kind != TP_HT_SAMPLES || h->gone || !h->stopped)
			continue;
		h->stopped = 0;
		if (tp_smp_arm(h) < 0)
			say_failed();
	}
	for (i = 0; i < n; i++) {
		if (tids[i] == self || (have && has(have, ns, tids[i])))
			continue;
		h = tp_ht_new(tids[i], TP_HT_SAMPLES);
		if (h && tp_smp_arm(h) < 0)
			say_failed();
	}
	free(have);
}

static void stop_all(void)
{
	struct tp_hthread *h;

	for (h = tp_ht_list(); h; h = h->next) {
		if (h->kind != TP_HT_SAMPLES || h->gone)
			continue;
		if (h->mech != TP_MECH_NONE)
			tp_smp_disarm(h);
		h->stopped = 1;
	}
}

void tp_sampler_cycle(void)
{
	uint32_t gen = tp_ht_next_generation();
	int cpu = tp_sess.cfg.sources & TP_SRC_CPU;
	size_t n;
	pid_t *tids;

	if (!(tp_sess.cfg.sources & (TP_SRC_CPU | TP_SRC_OSRT)))
		return;
	tids = list_tasks(&n);
	if (!tids)
		return;
	mark_gone(tids, n, gen);
	if (cpu && start() && tp_smp.started > 0) {
		if (tp_smp_handler_ours()) {
			arm_new(tids, n);
		} else {
			tp_warn("the program installed its own handler for "
				"signal %d, which tprof was sampling with: CPU "
				"sampling stops here", tp_sampler_signal);
			stop_all();
			tp_smp.started = -1;
		}
	}
	free(tids);
}

void tp_sampler_stop(void)
{
	if (tp_smp.started > 0)
		stop_all();
}

void tp_sampler_forget(uint64_t lost, uint64_t late_ns, uint64_t handler)
{
	tp_smp.lost += lost;
	tp_smp.late_ns += late_ns;
	tp_smp.handler_ticks += handler;
}

void tp_sampler_stats(struct tp_sampler_stats *s)
{
	struct tp_hthread *h;

	memset(s, 0, sizeof(*s));
	s->mechanism = tp_smp.threads_perf && tp_smp.threads_timer ?
		       "timer+perf_event" : tp_smp.threads_perf ? "perf_event" :
		       tp_smp.threads_timer ? "timer" : "none";
	memcpy(s->why_perf, tp_smp.why_perf, sizeof(s->why_perf));
	memcpy(s->why_timer, tp_smp.why_timer, sizeof(s->why_timer));
	s->signal = tp_sampler_signal;
	s->hz = tp_sess.cfg.sample_hz;
	s->period_ns = tp_smp.period_ns;
	s->threads_perf = tp_smp.threads_perf;
	s->threads_timer = tp_smp.threads_timer;
	s->threads_failed = tp_smp.threads_failed;
	s->lost = tp_smp.lost;
	s->late_ns = tp_smp.late_ns;
	s->handler_ticks = tp_smp.handler_ticks;
	for (h = tp_ht_list(); h; h = h->next) {
		s->lost += __atomic_load_n(&h->lost, __ATOMIC_RELAXED);
		s->late_ns += __atomic_load_n(&h->late_ns, __ATOMIC_RELAXED);
		s->handler_ticks += __atomic_load_n(&h->handler_ticks,
						    __ATOMIC_RELAXED);
	}
}

/* Only the forking thread is here: every host thread was the parent's.
 * Timers are not inherited; perf descriptors are, and are closed (the
 * counters are the parent's threads'). The handler stays installed. */
void tp_sampler_after_fork(void)
{
	struct tp_hthread *h;

	for (h = tp_ht_list(); h; h = h->next)
		if (h->kind == TP_HT_SAMPLES && h->mech == TP_MECH_PERF)
			tp_smp_disarm(h);
		else
			h->mech = TP_MECH_NONE;
	tp_ht_reset_after_fork();
	tp_smp.perf_now = 0;
	tp_smp.threads_perf = tp_smp.threads_timer = 0;
	tp_smp.threads_failed = 0;
	tp_smp.lost = tp_smp.late_ns = 0;
}
