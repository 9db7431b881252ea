/* capture/: when events are kept: steps, the schedule over them, and the
 * gates; on summary/ and the folders below it. */
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <time.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "capture.h"
#include "record/clock.h"
#include "encode/json.h"
#include "util/log.h"
#include "summary/proc_summary.h"
#include "session/session.h"
#include "record/thread.h"
#include "session/timeline.h"
#include "session/meta.h"

/* Past this many phase changes or kept steps (a repeat=0 schedule of
 * one-step cycles over days), recording ends rather than memory grow. */
#define MAX_LOG (1u << 20)

struct change {
	uint64_t ticks;
	int64_t ts_ns;		/* writer side, filled at sync */
	enum tp_phase phase;
};

struct step {
	long n;
	uint64_t start, end;
};

static struct {
	pthread_mutex_t lock;
	struct tp_capture_config cfg;
	unsigned sources;
	const struct tp_capture_hooks *hooks;
	/* gates */
	int user_on, api_on, sig_on, time_on;
	int time_started, api_seen;
	uint64_t time_start;	/* CLOCK_MONOTONIC_RAW ns */
	unsigned sig_applied;
	/* steps */
	long step;
	uint64_t step_start;
	enum tp_phase step_phase;
	long steps_seen;
	int last_cycle_done;
	/* phase log, appended under lock, read by the writer */
	enum tp_phase phase;
	int finished, overflow;
	uint64_t finished_at, longest_step;
	struct change *log;
	unsigned n_log, cap_log;
	struct step *steps;
	unsigned n_steps, cap_steps;
	unsigned gen, pending;	/* atomics */
	unsigned sig_count;	/* atomic: signals received */
	/* writer side */
	struct change *wlog;
	unsigned n_wlog, cap_wlog, wgen;
	unsigned steps_written;
	int wlog_init;
} C = { .lock = PTHREAD_MUTEX_INITIALIZER };

enum tp_phase tp_schedule_phase(const struct tp_capture_config *c, long n,
				int *last)
{
	long cycle = (long)c->wait + c->warmup + c->active, m;

	*last = 0;
	if (!c->schedule)
		return TP_PHASE_ACTIVE;
	if (n < (long)c->skip_first)
		return TP_PHASE_OFF;
	n -= c->skip_first;
	if (c->repeat && n / cycle >= (long)c->repeat) {
		*last = 1;
		return TP_PHASE_OFF;
	}
	m = n % cycle;
	if (m < (long)c->wait)
		return TP_PHASE_OFF;
	if (m < (long)(c->wait + c->warmup))
		return TP_PHASE_WARMUP;
	return TP_PHASE_ACTIVE;
}

static int grow(void **v, unsigned *cap, unsigned n, size_t size)
{
	unsigned c = *cap ? *cap * 2 : 64;
	void *p;

	if (n < *cap)
		return 0;
	if (n >= MAX_LOG)
		return -1;
	p = realloc(*v, c * size);
	if (!p)
		return -1;
	*v = p;
	*cap = c;
	return 0;
}

static int gates_open(void)
{
	return C.user_on && C.api_on && C.sig_on && C.time_on && !C.finished;
}

/* Under the lock: the phase the gates and the step call for, logged
 * with its time when it changes. */
static void apply(void)
{
	enum tp_phase p = TP_PHASE_OFF;
	int last;

	if (gates_open())
		p = tp_schedule_phase(&C.cfg, C.step, &last);
	if (C.cfg.schedule && !p && last)
		C.finished = 1;
	if (p == C.phase)
		return;
	if (grow((void **)&C.log, &C.cap_log, C.n_log, sizeof(*C.log)) < 0) {
		if (!C.overflow)
			tp_warn("too many recording windows to track; "
				"recording ends here (use fewer, longer "
				"windows)");
		C.overflow = C.finished = 1;
		p = TP_PHASE_OFF;
	}
	__atomic_store_n(&C.pending, 1, __ATOMIC_SEQ_CST);
	if (C.hooks && C.phase == TP_PHASE_ACTIVE)
		C.hooks->window(0);
	if (C.n_log < C.cap_log)
		C.log[C.n_log++] = (struct change){ .ticks = tp_ticks(),
						    .phase = p };
	if (C.finished && !C.finished_at)
		C.finished_at = tp_ticks();
	C.phase = p;
	__atomic_store_n(&tp_recording, p ? C.sources : 0, __ATOMIC_RELEASE);
	if (C.hooks && p == TP_PHASE_ACTIVE)
		C.hooks->window(1);
	__atomic_add_fetch(&C.gen, 1, __ATOMIC_RELEASE);
	__atomic_store_n(&C.pending, 0, __ATOMIC_RELEASE);
}

void tp_capture_init(const struct tp_capture_config *c, unsigned sources)
{
	int last;

	C.cfg = *c;
	C.sources = sources;
	C.user_on = 1;
	C.api_on = !c->profiler_api;
	C.sig_on = !c->signal;
	C.time_on = !c->delay_ns;
	if (C.time_on) {
		C.time_started = 1;
		C.time_start = tp_sess.anchor.raw_ns;
	}
	C.step_start = tp_sess.anchor.ticks;
	/* The first entry: from the start, whatever the phase is. */
	C.phase = (enum tp_phase)-1;
	apply();
	if (C.n_log)
		C.log[0].ticks = 0;
	C.step_phase = gates_open() ? tp_schedule_phase(c, 0, &last)
				    : TP_PHASE_OFF;
}

void tp_capture_set_hooks(const struct tp_capture_hooks *h)
{
	pthread_mutex_lock(&C.lock);
	C.hooks = h;
	if (h && C.phase == TP_PHASE_ACTIVE)
		h->window(1);
	if (h && C.phase == TP_PHASE_ACTIVE && C.step_phase == TP_PHASE_ACTIVE)
		h->step(C.step, 1);
	pthread_mutex_unlock(&C.lock);
}

static void keep_step(uint64_t end)
{
	if (grow((void **)&C.steps, &C.cap_steps, C.n_steps,
		 sizeof(*C.steps)) < 0)
		return;
	C.steps[C.n_steps++] = (struct step){ C.step, C.step_start, end };
	if (end - C.step_start > C.longest_step)
		C.longest_step = end - C.step_start;
}

long tp_capture_step(void)
{
	unsigned kept;
	uint64_t now;
	long n;

	if (!tp_sess.active)
		return 0;
	pthread_mutex_lock(&C.lock);
	now = tp_ticks();
	C.steps_seen++;
	if (C.step_phase == TP_PHASE_ACTIVE && C.phase == TP_PHASE_ACTIVE) {
		keep_step(now);
		if (C.hooks)
			C.hooks->step(C.step, 0);
	}
	n = ++C.step;
	C.step_start = now;
	apply();
	C.step_phase = C.phase;
	if (C.hooks && C.phase == TP_PHASE_ACTIVE)
		C.hooks->step(n, 1);
	kept = C.n_steps;
	pthread_mutex_unlock(&C.lock);
	/* A kept step is an event: the writer must run even when nothing
	 * else on this thread was recorded. */
	if (kept && !tp_self)
		tp_thread_attach();
	return n;
}

static void set_gate(int *gate, int on)
{
	pthread_mutex_lock(&C.lock);
	*gate = on;
	apply();
	pthread_mutex_unlock(&C.lock);
}

void tp_capture_user(int on)
{
	if (tp_sess.active)
		set_gate(&C.user_on, !!on);
}

void tp_capture_profiler_api(int on)
{
	if (!tp_sess.active || !C.cfg.profiler_api)
		return;
	C.api_seen |= on;
	set_gate(&C.api_on, !!on);
}

void tp_capture_signal(void)
{
	__atomic_add_fetch(&C.sig_count, 1, __ATOMIC_RELAXED);
}

int tp_capture_needs_poll(void)
{
	return C.cfg.delay_ns || C.cfg.duration_ns || C.cfg.signal;
}

int tp_capture_recording(void)
{
	return __atomic_load_n(&C.phase, __ATOMIC_RELAXED) != TP_PHASE_OFF;
}

static void poll_time(uint64_t now)
{
	uint64_t since = now - tp_sess.anchor.raw_ns;

	if (!C.time_started && since >= C.cfg.delay_ns) {
		C.time_started = C.time_on = 1;
		C.time_start = now;
		tp_info("TPROF_DELAY passed: recording");
	}
	if (C.time_started && C.time_on && C.cfg.duration_ns &&
	    now - C.time_start >= C.cfg.duration_ns) {
		C.time_on = 0;
		C.finished = 1;
		tp_info("TPROF_DURATION passed: recording ends");
	}
}

void tp_capture_poll(void)
{
	unsigned sig = __atomic_load_n(&C.sig_count, __ATOMIC_RELAXED);

	if (!tp_sess.active || !tp_capture_needs_poll())
		return;
	pthread_mutex_lock(&C.lock);
	if (sig != C.sig_applied) {
		if ((sig - C.sig_applied) & 1) {
			C.sig_on = !C.sig_on;
			tp_info("SIG%s: recording %s",
				tp_signal_name(C.cfg.signal),
				C.sig_on ? "on" : "off");
		}
		C.sig_applied = sig;
	}
	poll_time(tp_clock_ns(CLOCK_MONOTONIC_RAW));
	apply();
	pthread_mutex_unlock(&C.lock);
}

void tp_capture_exit_notes(int used)
{
	/* Not for the shells and tools a traced program runs. */
	if (!tp_sess.active || (!used && !C.steps_seen))
		return;
	pthread_mutex_lock(&C.lock);
	if (C.cfg.schedule && C.steps_seen && !C.n_steps && !C.overflow)
		tp_warn("the schedule kept no step: the run ended after %ld "
			"steps, before the first kept one (TPROF_SKIP_FIRST "
			"%u, TPROF_WAIT %u, TPROF_WARMUP %u)", C.steps_seen,
			C.cfg.skip_first, C.cfg.wait, C.cfg.warmup);
	if (C.cfg.schedule && !C.steps_seen)
		tp_warn("TPROF_ACTIVE is set but no step was seen, so the "
			"schedule never advanced: end steps with tprof_step(), "
			"tprof-run --torch-steps or TPROF_STEP_NVTX");
	if (C.cfg.profiler_api && !C.api_seen)
		tp_warn("TPROF_CAPTURE=cudaProfilerApi is set but the program "
			"never called cudaProfilerStart: nothing was recorded "
			"(unset TPROF_CAPTURE to record the whole run)");
	if (C.cfg.delay_ns && !C.time_started)
		tp_warn("the program ended before TPROF_DELAY passed: nothing "
			"was recorded (use a shorter delay)");
	pthread_mutex_unlock(&C.lock);
}

void tp_capture_after_fork(void)
{
	if (!tp_sess.active)
		return;
	pthread_mutex_init(&C.lock, NULL);
	C.hooks = NULL;
	/* The parent writer's copy of the log, inherited: the child's
	 * writer makes its own (freed here, or each fork leaked one). */
	free(C.wlog);
	C.wlog = NULL;
	C.n_wlog = C.cap_wlog = C.wgen = 0;
	C.steps_written = 0;
	C.wlog_init = 0;
	/* The child's trace starts now, in the parent's phase. */
	C.n_steps = 0;
	C.n_log = 0;
	if (C.log) {
		C.log[C.n_log++] = (struct change){ .ticks = 0,
						    .phase = C.phase };
		__atomic_add_fetch(&C.gen, 1, __ATOMIC_RELEASE);
	}
	__atomic_store_n(&tp_recording, C.phase ? C.sources : 0,
			 __ATOMIC_RELEASE);
}

/* ---- writer side ---- */

void tp_capture_sync(void)
{
	unsigned gen = __atomic_load_n(&C.gen, __ATOMIC_ACQUIRE), i;

	if (gen == C.wgen && C.wlog_init)
		return;
	/* A change being made may predate events just read: wait for it
	 * (a few instructions on the program's side). */
	while (__atomic_load_n(&C.pending, __ATOMIC_SEQ_CST))
		sched_yield();
	pthread_mutex_lock(&C.lock);
	if (C.cap_wlog < C.n_log) {
		void *p = realloc(C.wlog, C.cap_log * sizeof(*C.wlog));

		if (p) {
			C.wlog = p;
			C.cap_wlog = C.cap_log;
		}
	}
	if (C.cap_wlog >= C.n_log) {
		memcpy(C.wlog, C.log, C.n_log * sizeof(*C.log));
		C.n_wlog = C.n_log;
	}
	C.wgen = __atomic_load_n(&C.gen, __ATOMIC_ACQUIRE);
	pthread_mutex_unlock(&C.lock);
	for (i = 0; i < C.n_wlog; i++)
		C.wlog[i].ts_ns = C.wlog[i].ticks ?
				  tp_trace_ns(C.wlog[i].ticks) : INT64_MIN;
	C.wlog_init = 1;
}

/* The last change at or before x (ticks, or ns when by_ns). */
static enum tp_phase phase_at(int64_t x, int by_ns)
{
	unsigned lo = 0, hi = C.n_wlog;

	while (hi - lo > 1) {
		unsigned mid = (lo + hi) / 2;
		int64_t v = by_ns ? C.wlog[mid].ts_ns
				  : (int64_t)C.wlog[mid].ticks;

		if (v <= x)
			lo = mid;
		else
			hi = mid;
	}
	return C.n_wlog ? C.wlog[lo].phase : TP_PHASE_ACTIVE;
}

int tp_capture_filtering(void)
{
	return C.n_wlog != 1 || C.wlog[0].phase != TP_PHASE_ACTIVE;
}

int tp_capture_kept(uint64_t ticks)
{
	if (C.n_wlog == 1)
		return C.wlog[0].phase == TP_PHASE_ACTIVE;
	return phase_at((int64_t)ticks, 0) == TP_PHASE_ACTIVE;
}

int tp_capture_kept_ns(int64_t ts_ns)
{
	if (C.n_wlog == 1)
		return C.wlog[0].phase == TP_PHASE_ACTIVE;
	return phase_at(ts_ns, 1) == TP_PHASE_ACTIVE;
}

static void put_step(struct tp_buf *b, const struct step *s)
{
	static struct tp_targs w;
	char name[48];
	int64_t t0 = tp_trace_ns(s->start), t1 = tp_trace_ns(s->end);
	struct tp_tev ev;

	snprintf(name, sizeof(name), "ProfilerStep#%ld", s->n);
	tp_targs_reset(&w);
	tp_targs_int(&w, "step", s->n);
	memset(&ev, 0, sizeof(ev));
	ev.track.kind = TP_TEV_THREAD;
	ev.track.pid = tp_sess.pid;
	ev.track.tid = TP_STEPS_TID;
	ev.phase = TP_TEV_COMPLETE;
	ev.name = name;
	ev.namelen = strlen(name);
	ev.cat = "user_annotation";
	ev.catlen = sizeof("user_annotation") - 1;
	ev.ts_ns = t0;
	ev.dur_ns = t1 > t0 ? t1 - t0 : 0;
	ev.args = w.a;
	ev.nargs = w.n;
	ev.static_keys = 1;
	tp_tev_put(b, &ev);
	tp_psum_step(s->n, t0, t1 > t0 ? t1 - t0 : 0);
}

unsigned tp_capture_put_steps(struct tp_buf *b)
{
	unsigned n = 0;

	pthread_mutex_lock(&C.lock);
	for (; C.steps_written < C.n_steps; C.steps_written++, n++)
		put_step(b, &C.steps[C.steps_written]);
	pthread_mutex_unlock(&C.lock);
	return n;
}

void tp_capture_put_meta(struct tp_buf *b)
{
	if (!C.n_steps)
		return;
	tp_meta_thread_name(b, (pid_t)TP_STEPS_TID, "steps");
	tp_meta_thread_sort(b, (pid_t)TP_STEPS_TID, -1);
}

static void put_schedule(struct tp_buf *b)
{
	const struct tp_capture_config *c = &C.cfg;

	if (!c->schedule) {
		tp_buf_lit(b, "null");
		return;
	}
	tp_buf_lit(b, "{\"skip_first\": ");
	tp_json_u64(b, c->skip_first);
	tp_buf_lit(b, ", \"wait\": ");
	tp_json_u64(b, c->wait);
	tp_buf_lit(b, ", \"warmup\": ");
	tp_json_u64(b, c->warmup);
	tp_buf_lit(b, ", \"active\": ");
	tp_json_u64(b, c->active);
	tp_buf_lit(b, ", \"repeat\": ");
	tp_json_u64(b, c->repeat);
	tp_buf_char(b, '}');
}

void tp_capture_put_stats(struct tp_buf *b)
{
	unsigned i, w;

	pthread_mutex_lock(&C.lock);
	tp_buf_lit(b, ",\n \"capture\": {\"schedule\": ");
	put_schedule(b);
	tp_buf_lit(b, ", \"step_nvtx\": ");
	if (C.cfg.step_nvtx[0])
		tp_json_str(b, C.cfg.step_nvtx);
	else
		tp_buf_lit(b, "null");
	tp_buf_lit(b, ", \"delay_s\": ");
	tp_json_us(b, (int64_t)(C.cfg.delay_ns / 1000000));
	tp_buf_lit(b, ", \"duration_s\": ");
	tp_json_us(b, (int64_t)(C.cfg.duration_ns / 1000000));
	tp_buf_lit(b, ", \"profiler_api\": ");
	tp_json_u64(b, (uint64_t)C.cfg.profiler_api);
	tp_buf_lit(b, ", \"signal\": ");
	if (C.cfg.signal)
		tp_json_str(b, tp_signal_name(C.cfg.signal));
	else
		tp_buf_lit(b, "null");
	tp_buf_lit(b, ", \"nsys\": ");
	tp_json_u64(b, (uint64_t)C.cfg.nsys);
	tp_buf_lit(b, ",\n  \"steps_seen\": ");
	tp_json_i64(b, C.steps_seen);
	tp_buf_lit(b, ", \"windows\": ");
	for (i = 0, w = 0; i < C.n_log; i++)
		w += C.log[i].phase == TP_PHASE_ACTIVE;
	tp_json_u64(b, w);
	tp_buf_lit(b, ", \"finished\": ");
	tp_json_u64(b, (uint64_t)C.finished);
	tp_buf_lit(b, ", \"steps_kept\": [");
	for (i = 0; i < C.n_steps; i++) {
		if (i)
			tp_buf_lit(b, ", ");
		tp_json_i64(b, C.steps[i].n);
	}
	tp_buf_lit(b, "]}");
	pthread_mutex_unlock(&C.lock);
}

int tp_capture_finished(uint64_t *at_ticks, uint64_t *longest_step_ticks)
{
	int f;

	pthread_mutex_lock(&C.lock);
	f = C.finished;
	*at_ticks = C.finished_at;
	*longest_step_ticks = C.longest_step;
	pthread_mutex_unlock(&C.lock);
	return f;
}
