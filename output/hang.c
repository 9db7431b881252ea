/* output/: the background writer: drains the rings into the trace file,
 * with its metadata and trailer; on every folder above. */
/* The hang watchdog: reads the threads' inflight slots (record/inflight.h)
 * on the writer thread, which alone frees threads, so every slot it reads
 * is live; writes the dumps (hang_dump.c makes their JSON), asks the other
 * ranks sharing the output directory for theirs when it sees a hang, and
 * answers theirs. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "files/atomic_file.h"
#include "record/collseq.h"
#include "record/inflight.h"
#include "encode/json.h"
#include "util/log.h"
#include "session/session.h"
#include "encode/tev.h"
#include "record/thread.h"
#include "session/timeline.h"
#include "stacks/stacks.h"
#include "session/ending.h"
#include "flight.h"
#include "hang.h"
#include "hang_int.h"

#define HANG_DIR "hangs"
/* A rank that saw a hang touches it; the others, watching its time,
 * dump too (a rank in no hooked call never sees a hang itself). */
#define REQUEST ".request"

#define running_ns tp_hang_running_ns

int tp_hang_check(void)
{
	uint64_t now = tp_ticks();
	struct tp_inflight s;
	struct tp_thread *t;
	int found = 0;

	if (!tp_hang_on || !tp_tl.ready)
		return 0;
	for (t = tp_thread_list(); t; t = t->next) {
		if (!tp_inflight_read(t, &s) || t->inflight.reported == s.gen)
			continue;
		if (running_ns(s.t0, now) < (int64_t)tp_sess.cfg.fl.hang_ns)
			continue;
		t->inflight.reported = s.gen;
		found = 1;
	}
	return found;
}

/* One X event from the call's entry to now: the trace shows where each
 * thread is, nested over what it recorded inside the call. */
static void put_open_call(struct tp_buf *b, struct tp_thread *t,
			  const struct tp_inflight *s, uint64_t now)
{
	static struct tp_targs w;
	int64_t ns = running_ns(s->t0, now);
	const char *stack;
	struct tp_tev ev;
	size_t len;

	tp_targs_reset(&w);
	tp_targs_int(&w, "unfinished", 1);
	tp_targs_int(&w, "stuck", ns >= (int64_t)tp_sess.cfg.fl.hang_ns);
	if (s->kind == TP_INF_COLL || s->kind == TP_INF_P2P ||
	    s->kind == TP_INF_GROUP)
		tp_targs_int(&w, s->kind == TP_INF_P2P ? "p2p_seq" : "seq",
			     (int64_t)s->a[5]);
	stack = s->stack ? tp_stack_json(s->stack, &len) : NULL;
	if (stack)
		tp_targs_json(&w, "stack", stack, len);
	memset(&ev, 0, sizeof(ev));
	ev.track.kind = TP_TEV_THREAD;
	ev.track.pid = tp_sess.pid;
	ev.track.tid = t->tid;
	ev.phase = TP_TEV_COMPLETE;
	ev.name = s->name;
	ev.namelen = strlen(s->name);
	ev.cat = "unfinished";
	ev.catlen = sizeof("unfinished") - 1;
	ev.ts_ns = tp_trace_ns(s->t0);
	ev.dur_ns = ns;
	ev.args = w.a;
	ev.nargs = w.n;
	ev.static_keys = 1;
	tp_tev_put(b, &ev);
}

unsigned tp_hang_put_open_calls(struct tp_buf *b)
{
	uint64_t now = tp_ticks();
	struct tp_inflight s;
	struct tp_thread *t;
	unsigned n = 0;

	if (!tp_hang_on || !tp_tl.ready)
		return 0;
	for (t = tp_thread_list(); t; t = t->next) {
		if (!tp_inflight_read(t, &s))
			continue;
		put_open_call(b, t, &s, now);
		n++;
	}
	return n;
}

/* The first stuck call, for the stderr line. */
static void first_stuck(char *out, size_t len)
{
	uint64_t now = tp_ticks();
	struct tp_inflight s;
	struct tp_thread *t;

	snprintf(out, len, "no hooked call is stuck");
	for (t = tp_thread_list(); t; t = t->next) {
		if (!tp_inflight_read(t, &s) || running_ns(s.t0, now) <
		    (int64_t)tp_sess.cfg.fl.hang_ns)
			continue;
		snprintf(out, len, "%s on thread %d has not returned for "
			 "%.1f s", s.name, (int)t->tid,
			 (double)running_ns(s.t0, now) / 1e9);
		return;
	}
}

/* The request file's time, seen last (ours or another rank's), the time
 * this process started watching (older requests are another job's), and
 * that of its last dump (a request older than it is answered already). */
static struct timespec seen, since, dumped;

static int later(const struct timespec *a, const struct timespec *b)
{
	return a->tv_sec != b->tv_sec ? a->tv_sec > b->tv_sec :
	       a->tv_nsec > b->tv_nsec;
}

static int request_time(struct timespec *t)
{
	char path[4200];
	struct stat st;

	snprintf(path, sizeof(path), "%s/" HANG_DIR "/" REQUEST,
		 tp_sess.cfg.dir);
	if (stat(path, &st) < 0)
		return -1;
	*t = st.st_mtim;
	return 0;
}

/* A call of this process is stuck and was dumped: its dump stands for
 * this hang. */
static int hung_already(void)
{
	struct tp_inflight s;
	struct tp_thread *t;

	for (t = tp_thread_list(); t; t = t->next)
		if (tp_inflight_read(t, &s) && t->inflight.reported == s.gen)
			return 1;
	return 0;
}

int tp_hang_peer_check(void)
{
	struct timespec t;

	if (!tp_hang_on || !tp_tl.ready || !tp_collseq_n_used())
		return 0;
	if (!since.tv_sec)
		clock_gettime(CLOCK_REALTIME, &since);
	if (request_time(&t) < 0 || !later(&t, &since) ||
	    (t.tv_sec == seen.tv_sec && t.tv_nsec == seen.tv_nsec))
		return 0;
	seen = t;
	return later(&t, &dumped) && !hung_already();
}

/* After a dump for a hang: the other ranks are asked for theirs, unless
 * one did since this hang began (TPROF_HANG ago): every waiting rank
 * sees it within a cycle or two of the others. */
static void announce(int dirfd)
{
	struct timespec t, began;
	char text[64];
	int n = snprintf(text, sizeof(text), "%d\n", (int)tp_sess.pid);

	clock_gettime(CLOCK_REALTIME, &began);
	began.tv_sec -= (time_t)(tp_sess.cfg.fl.hang_ns / 1000000000);
	if (request_time(&t) == 0 && later(&t, &began) && later(&t, &since))
		return;
	if (tp_write_file_atomic_at(dirfd, REQUEST, text, (size_t)n) == 0)
		request_time(&seen);
}

/* Writes the dump; alive: the process goes on. 0, or -1 after one line
 * saying why not. */
static int write_dump(const char *reason, int alive, const char *trace,
		      int *dirfd, char *name, size_t len)
{
	struct tp_buf b = { 0 };
	int n, ret = -1;

	n = snprintf(name, len, "%s-rank%d-pid%d.hang.json", tp_sess.cfg.name,
		     tp_sess.cfg.rank, (int)tp_sess.pid);
	if (n < 0 || (size_t)n >= len)
		return -1;
	tp_hang_put_dump(&b, reason, alive, trace);
	*dirfd = tp_open_subdir(tp_sess.cfg.dir, HANG_DIR);
	if (b.oom)
		errno = ENOMEM;
	if (b.oom || *dirfd < 0 ||
	    tp_write_file_atomic_at(*dirfd, name, b.p, b.len) < 0)
		tp_error("cannot write the hang dump %s/" HANG_DIR "/%s: %s "
			 "(free space or choose another TPROF_OUTPUT_DIR)",
			 tp_sess.cfg.dir, name, strerror(errno));
	else
		ret = 0;
	clock_gettime(CLOCK_REALTIME, &dumped);
	tp_buf_free(&b);
	return ret;
}

void tp_hang_write(const char *reason, const char *trace)
{
	char name[512], what[256];
	int dirfd = -1;

	if (!tp_tl.ready)
		return;
	if (write_dump(reason, 1, trace, &dirfd, name, sizeof(name)) < 0)
		goto out;
	if (!strcmp(reason, "hang"))
		announce(dirfd);
	first_stuck(what, sizeof(what));
	tp_log(TP_LOG_WARN, "", "%s: %s; wrote %s/" HANG_DIR "/%s%s%s",
	       !strcmp(reason, "hang") ? "hang" : !strcmp(reason, "peer") ?
	       "hang on another rank" : "dump", what, tp_sess.cfg.dir, name,
	       trace ? " and " : "", trace ? trace : "");
out:
	if (dirfd >= 0)
		close(dirfd);
}

/* What ended the process, for its last dump. */
static const char *end_reason(void)
{
	uint64_t at;
	const char *why;

	if (tp_end_cause() == TP_END_EXIT)
		return "_exit";
	why = tp_flight_exit_reason(&at);
	return why && strcmp(why, "exit") ? why : "exit";
}

void tp_hang_final(void)
{
	char name[512];
	int dirfd = -1;

	if (!tp_hang_on || !tp_tl.ready || !tp_collseq_n_used())
		return;
	if (write_dump(end_reason(), 0, NULL, &dirfd, name, sizeof(name)) == 0)
		tp_info("hang watchdog: the last state of this process's "
			"communicators is in %s/" HANG_DIR "/%s",
			tp_sess.cfg.dir, name);
	if (dirfd >= 0)
		close(dirfd);
}
