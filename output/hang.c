/* output/: the background writer: drains the rings into the trace file,
 * with its metadata and trailer; on every folder above. */
/* The hang watchdog: reads the threads' inflight slots (record/inflight.h)
 * and the communicators' sequence numbers (record/collseq.h) on the
 * writer thread, which alone frees threads, so every slot it reads is
 * live. Calls trace/ and stacks/ only. */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <string.h>
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
#include "hang.h"

#define HANG_DIR "hangs"

/* ns a call entered at t0 has been running by now. */
static int64_t running_ns(uint64_t t0, uint64_t now)
{
	return now > t0 ? tp_trace_ns(now) - tp_trace_ns(t0) : 0;
}

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

static void put_i(struct tp_buf *b, const char *key, int64_t v)
{
	tp_buf_cstr(b, key);
	tp_json_i64(b, v);
}

static void put_name(struct tp_buf *b, const char *key, const char *name,
		     int64_t num)
{
	tp_buf_cstr(b, key);
	if (name)
		tp_json_str(b, name);
	else
		tp_json_i64(b, num);
}

/* The communicator's address, its id across ranks and this rank in it. */
static void put_comm_id(struct tp_buf *b, uint64_t comm)
{
	struct tp_collseq *q = tp_collseq_get(comm);

	tp_buf_lit(b, ", \"comm\": ");
	tp_json_hex(b, comm);
	if (q && q->id) {
		tp_buf_lit(b, ", \"comm_id\": ");
		tp_json_hex(b, q->id);
	}
	if (q && q->size)
		put_i(b, ", \"comm_rank\": ", q->rank);
	if (q && q->size)
		put_i(b, ", \"comm_size\": ", q->size);
}

static void put_coll_args(struct tp_buf *b, const struct tp_inflight *s)
{
	put_comm_id(b, s->a[0]);
	put_i(b, s->kind == TP_INF_P2P ? ", \"p2p_seq\": " : ", \"seq\": ",
	      (int64_t)s->a[5]);
	put_i(b, ", \"count\": ", (int64_t)s->a[1]);
	put_name(b, ", \"dtype\": ", tp_nccl_dtype_str((int)s->a[2]),
		 (int64_t)s->a[2]);
	if (s->kind == TP_INF_COLL)
		put_name(b, ", \"op\": ", tp_nccl_op_str((int)s->a[3]),
			 (int64_t)s->a[3]);
	put_i(b, s->kind == TP_INF_P2P ? ", \"peer\": " : ", \"root\": ",
	      (int64_t)s->a[4]);
}

/* The outermost ncclGroupEnd, waiting in the first collective its group
 * enqueued. */
static void put_group_args(struct tp_buf *b, const struct tp_inflight *s)
{
	const char *name = (const char *)(uintptr_t)s->a[3];

	put_comm_id(b, s->a[0]);
	put_i(b, ", \"seq\": ", (int64_t)s->a[5]);
	put_i(b, ", \"count\": ", (int64_t)s->a[1]);
	put_name(b, ", \"dtype\": ", tp_nccl_dtype_str((int)s->a[2]),
		 (int64_t)s->a[2]);
	tp_buf_lit(b, ", \"awaits\": ");
	tp_json_str(b, name ? name : "?");
	put_i(b, ", \"collectives\": ", (int64_t)s->a[4]);
}

static void put_args(struct tp_buf *b, const struct tp_inflight *s)
{
	tp_buf_lit(b, "\"args\": {\"kind\": ");
	switch (s->kind) {
	case TP_INF_COLL:
	case TP_INF_P2P:
		tp_json_str(b, s->kind == TP_INF_COLL ? "collective" : "p2p");
		put_coll_args(b, s);
		break;
	case TP_INF_GROUP:
		tp_json_str(b, "group");
		put_group_args(b, s);
		break;
	case TP_INF_INIT:
		tp_json_str(b, "init");
		tp_buf_lit(b, ", \"comm_id\": ");
		tp_json_hex(b, s->a[0]);
		put_i(b, ", \"nranks\": ", (int64_t)s->a[1]);
		put_i(b, ", \"rank\": ", (int64_t)s->a[2]);
		break;
	default:
		tp_json_str(b, "call");
	}
	tp_buf_char(b, '}');
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

static void put_thread(struct tp_buf *b, struct tp_thread *t,
		       const struct tp_inflight *s, uint64_t now, int first)
{
	int64_t ns = running_ns(s->t0, now);
	const char *stack;
	size_t len;

	tp_buf_cstr(b, first ? "\n  {" : ",\n  {");
	put_i(b, "\"tid\": ", t->tid);
	tp_buf_lit(b, ", \"thread\": ");
	tp_json_str(b, t->name);
	tp_buf_lit(b, ", \"call\": ");
	tp_json_str(b, s->name);
	put_i(b, ", \"for_ns\": ", ns);
	put_i(b, ", \"stuck\": ", ns >= (int64_t)tp_sess.cfg.fl.hang_ns);
	tp_buf_lit(b, ", ");
	put_args(b, s);
	stack = s->stack ? tp_stack_json(s->stack, &len) : NULL;
	if (stack) {
		tp_buf_lit(b, ", \"stack\": ");
		tp_buf_put(b, stack, len);
	}
	tp_buf_char(b, '}');
}

static void put_threads(struct tp_buf *b, uint64_t now)
{
	struct tp_inflight s;
	struct tp_thread *t;
	int first = 1;

	tp_buf_lit(b, ",\n\"threads\": [");
	for (t = tp_thread_list(); t; t = t->next) {
		if (!tp_inflight_read(t, &s))
			continue;
		put_thread(b, t, &s, now, first);
		first = 0;
	}
	tp_buf_lit(b, "]");
}

static void put_comm(struct tp_buf *b, const struct tp_collseq *q, int first)
{
	tp_buf_cstr(b, first ? "\n  {\"comm\": " : ",\n  {\"comm\": ");
	tp_json_hex(b, q->comm);
	if (q->id) {
		tp_buf_lit(b, ", \"comm_id\": ");
		tp_json_hex(b, q->id);
	}
	put_i(b, ", \"rank\": ", q->size ? q->rank : -1);
	put_i(b, ", \"size\": ", q->size);
	put_i(b, ", \"entered\": ", q->entered);
	put_i(b, ", \"completed\": ", q->completed);
	put_i(b, ", \"p2p\": ", q->p2p);
	if (q->last_name) {
		tp_buf_lit(b, ", \"last\": {\"call\": ");
		tp_json_str(b, q->last_name);
		put_i(b, ", \"seq\": ", q->entered);
		put_i(b, ", \"count\": ", (int64_t)q->last_count);
		put_name(b, ", \"dtype\": ", tp_nccl_dtype_str(q->last_dtype),
			 q->last_dtype);
		tp_buf_char(b, '}');
	}
	tp_buf_char(b, '}');
}

static void put_comms(struct tp_buf *b)
{
	struct tp_collseq *q;
	unsigned i, n;
	int first = 1;

	q = tp_collseq_table(&n);
	tp_buf_lit(b, ",\n\"communicators\": [");
	for (i = 0; i < n; i++) {
		if (!__atomic_load_n(&q[i].comm, __ATOMIC_ACQUIRE) ||
		    (!q[i].size && !q[i].entered && !q[i].p2p))
			continue;
		put_comm(b, &q[i], first);
		first = 0;
	}
	tp_buf_lit(b, "]");
}

static void put_dump(struct tp_buf *b, const char *reason, const char *trace)
{
	uint64_t now = tp_ticks();

	tp_buf_lit(b, "{\"schema\": \"tprof.hang\", \"version\": 1");
	tp_buf_lit(b, ",\n\"reason\": ");
	tp_json_str(b, reason);
	put_i(b, ", \"rank\": ", tp_sess.cfg.rank);
	put_i(b, ", \"world_size\": ", tp_sess.cfg.world_size);
	put_i(b, ", \"pid\": ", tp_sess.pid);
	tp_buf_lit(b, ", \"host\": ");
	tp_json_str(b, tp_sess.host);
	tp_buf_lit(b, ", \"run_id\": ");
	tp_json_str(b, tp_sess.run_id);
	put_i(b, ",\n\"time_unix_ns\": ",
	      (int64_t)tp_clock_to_unix(&tp_tl.map, now));
	put_i(b, ", \"threshold_ns\": ", (int64_t)tp_sess.cfg.fl.hang_ns);
	tp_buf_lit(b, ", \"trace\": ");
	if (trace)
		tp_json_str(b, trace);
	else
		tp_buf_lit(b, "null");
	put_threads(b, now);
	put_comms(b);
	tp_buf_lit(b, "\n}\n");
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

void tp_hang_write(const char *reason, const char *trace)
{
	struct tp_buf b = { 0 };
	char name[512], what[256];
	int dirfd, n;

	if (!tp_tl.ready)
		return;
	n = snprintf(name, sizeof(name), "%s-rank%d-pid%d.hang.json",
		     tp_sess.cfg.name, tp_sess.cfg.rank, (int)tp_sess.pid);
	if (n < 0 || (size_t)n >= sizeof(name))
		return;
	put_dump(&b, reason, trace);
	dirfd = tp_open_subdir(tp_sess.cfg.dir, HANG_DIR);
	if (b.oom)
		errno = ENOMEM;
	if (b.oom || dirfd < 0 ||
	    tp_write_file_atomic_at(dirfd, name, b.p, b.len) < 0) {
		tp_error("cannot write the hang dump %s/" HANG_DIR "/%s: %s "
			 "(free space or choose another TPROF_OUTPUT_DIR)",
			 tp_sess.cfg.dir, name, strerror(errno));
		goto out;
	}
	first_stuck(what, sizeof(what));
	tp_log(TP_LOG_WARN, "", "%s: %s; wrote %s/" HANG_DIR "/%s%s%s",
	       !strcmp(reason, "hang") ? "hang" : "dump", what,
	       tp_sess.cfg.dir, name, trace ? " and " : "",
	       trace ? trace : "");
out:
	if (dirfd >= 0)
		close(dirfd);
	tp_buf_free(&b);
}
