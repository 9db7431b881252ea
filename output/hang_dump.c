/* output/: the background writer: drains the rings into the trace file,
 * with its metadata and trailer; on every folder above. */
/* The hang dump's JSON (docs/reference/hang-format.md): every thread in a
 * hooked call, the threads that called NCCL and are in none (their stack
 * taken now, when a dump signal lets tprof ask), and every communicator
 * with its collectives' numbers and states. Run on the writer thread,
 * which alone frees threads, so every slot it reads is live. */
#define _GNU_SOURCE
#include <string.h>

#include "encode/json.h"
#include "record/collseq.h"
#include "record/inflight.h"
#include "record/thread.h"
#include "session/session.h"
#include "stacks/sample.h"
#include "stacks/stacks.h"
#include "hang_int.h"

/* Threads asked for their stack per dump, and how long each may take. */
#define MAX_SAMPLES 8
#define SAMPLE_MS 100

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

static void put_stack(struct tp_buf *b, uint32_t id)
{
	const char *stack;
	size_t len;

	stack = id ? tp_stack_json(id, &len) : NULL;
	if (!stack)
		return;
	tp_buf_lit(b, ", \"stack\": ");
	tp_buf_put(b, stack, len);
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
	int p2p = s->kind == TP_INF_P2P;

	put_comm_id(b, s->a[0]);
	put_i(b, p2p ? ", \"p2p_seq\": " : ", \"seq\": ", (int64_t)s->a[5]);
	put_i(b, ", \"count\": ", (int64_t)s->a[1]);
	put_name(b, ", \"dtype\": ", tp_nccl_dtype_str((int)s->a[2]),
		 (int64_t)s->a[2]);
	if ((int64_t)s->a[3] >= 0)
		put_name(b, ", \"op\": ", tp_nccl_op_str((int)s->a[3]),
			 (int64_t)s->a[3]);
	if ((int64_t)s->a[4] >= 0)
		put_i(b, p2p ? ", \"peer\": " : ", \"root\": ",
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

/* A wait for the GPU: on a stream, the device or an event. */
static void put_sync_args(struct tp_buf *b, const struct tp_inflight *s)
{
	static const char *const on[] = { "stream", "device", "event" };

	tp_buf_lit(b, ", \"on\": ");
	tp_json_str(b, s->a[0] < 3 ? on[s->a[0]] : "?");
	if (s->a[0] == TP_SYNC_STREAM) {
		tp_buf_lit(b, ", \"stream\": ");
		tp_json_hex(b, s->a[1]);
	}
	if (s->a[0] == TP_SYNC_EVENT) {
		tp_buf_lit(b, ", \"event\": ");
		tp_json_hex(b, s->a[2]);
	}
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
	case TP_INF_SYNC:
		tp_json_str(b, "sync");
		put_sync_args(b, s);
		break;
	default:
		tp_json_str(b, "call");
	}
	tp_buf_char(b, '}');
}

static void put_thread(struct tp_buf *b, struct tp_thread *t,
		       const struct tp_inflight *s, uint64_t now, int first)
{
	int64_t ns = tp_hang_running_ns(s->t0, now);

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
	put_stack(b, s->stack);
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

/* Whether tid called a collective that is the last of its communicator,
 * or one not seen complete: a thread whose whereabouts tell a hang. */
static int nccl_caller(int32_t tid)
{
	unsigned i, j, n = tp_collseq_n_used();
	struct tp_collseq *q;
	uint32_t st;

	for (i = 0; i < n; i++) {
		if (!(q = tp_collseq_used_at(i)) ||
		    !__atomic_load_n(&q->entered, __ATOMIC_RELAXED))
			continue;
		if (__atomic_load_n(&q->last_tid, __ATOMIC_RELAXED) == tid)
			return 1;
		for (j = 0; j < TP_COLLSEQ_LOG; j++) {
			st = __atomic_load_n(&q->log[j].state,
					     __ATOMIC_ACQUIRE);
			if (st && st != TP_COLL_DONE &&
			    __atomic_load_n(&q->log[j].tid,
					    __ATOMIC_RELAXED) == tid)
				return 1;
		}
	}
	return 0;
}

/* A thread that called NCCL and is in no hooked call now: host code (the
 * program's own, Python, data loading). Its stack is asked for when a
 * dump signal is tprof's and the process is alive or being stopped (a
 * SIGTERM: not after a crash, an _exit or an exit, whose threads may
 * be gone or hold what the handler needs). */
static void put_idle_one(struct tp_buf *b, struct tp_thread *t,
			 const struct tp_inflight *s, uint64_t now, int alive,
			 int first)
{
	tp_buf_cstr(b, first ? "\n  {" : ",\n  {");
	put_i(b, "\"tid\": ", t->tid);
	tp_buf_lit(b, ", \"thread\": ");
	tp_json_str(b, t->name);
	if (s->last_name) {
		tp_buf_lit(b, ", \"last_call\": ");
		tp_json_str(b, s->last_name);
		put_i(b, ", \"since_ns\": ", tp_hang_running_ns(s->last_t1,
								 now));
	}
	if (alive)
		put_stack(b, tp_stack_sample(t->tid, SAMPLE_MS));
	tp_buf_char(b, '}');
}

static void put_idle(struct tp_buf *b, uint64_t now, int alive)
{
	struct tp_inflight s;
	struct tp_thread *t;
	int first = 1, n = 0;

	tp_buf_lit(b, ",\n\"idle\": [");
	for (t = tp_thread_list(); t && n < MAX_SAMPLES; t = t->next) {
		if (t->exited || !tp_inflight_copy(t, &s) || s.name ||
		    !nccl_caller(t->tid))
			continue;
		put_idle_one(b, t, &s, now, alive, first);
		first = 0;
		n++;
	}
	tp_buf_lit(b, "]");
}

static void put_rec(struct tp_buf *b, const struct tp_coll_rec *r,
		    uint32_t seq, uint32_t state, uint64_t now, int first)
{
	uint64_t t_enq = __atomic_load_n(&r->t_enq, __ATOMIC_RELAXED);
	int32_t op = __atomic_load_n(&r->op, __ATOMIC_RELAXED);
	int32_t root = __atomic_load_n(&r->root, __ATOMIC_RELAXED);
	int32_t dt = __atomic_load_n(&r->dtype, __ATOMIC_RELAXED);
	const char *name = __atomic_load_n(&r->name, __ATOMIC_RELAXED);

	tp_buf_cstr(b, first ? "\n    {\"seq\": " : ",\n    {\"seq\": ");
	tp_json_i64(b, seq);
	tp_buf_lit(b, ", \"call\": ");
	tp_json_str(b, name ? name : "?");
	put_i(b, ", \"count\": ",
	      (int64_t)__atomic_load_n(&r->count, __ATOMIC_RELAXED));
	put_name(b, ", \"dtype\": ", tp_nccl_dtype_str(dt), dt);
	if (op >= 0)
		put_name(b, ", \"op\": ", tp_nccl_op_str(op), op);
	if (root >= 0)
		put_i(b, ", \"root\": ", root);
	tp_buf_lit(b, ", \"stream\": ");
	tp_json_hex(b, __atomic_load_n(&r->stream, __ATOMIC_RELAXED));
	tp_buf_lit(b, ", \"state\": ");
	tp_json_str(b, tp_coll_state_str(state));
	if (t_enq && state != TP_COLL_DONE)
		put_i(b, ", \"for_ns\": ", tp_hang_running_ns(t_enq, now));
	put_i(b, ", \"tid\": ", __atomic_load_n(&r->tid, __ATOMIC_RELAXED));
	tp_buf_char(b, '}');
}

/* The collectives not seen complete, and the last one that was, oldest
 * first: those the log still holds. */
static void put_log(struct tp_buf *b, struct tp_collseq *q, uint64_t now)
{
	uint32_t entered = __atomic_load_n(&q->entered, __ATOMIC_RELAXED);
	uint32_t done = __atomic_load_n(&q->done, __ATOMIC_RELAXED);
	uint32_t seq, st;
	struct tp_coll_rec *r;
	int first = 1;

	tp_buf_lit(b, ", \"collectives\": [");
	seq = entered > TP_COLLSEQ_LOG ? entered - TP_COLLSEQ_LOG + 1 : 1;
	for (; seq && seq <= entered; seq++) {
		r = &q->log[seq % TP_COLLSEQ_LOG];
		st = __atomic_load_n(&r->state, __ATOMIC_ACQUIRE);
		if (__atomic_load_n(&r->seq, __ATOMIC_ACQUIRE) != seq || !st ||
		    (st == TP_COLL_DONE && seq != done))
			continue;
		put_rec(b, r, seq, st, now, first);
		first = 0;
	}
	tp_buf_lit(b, "]");
}

static void put_comm(struct tp_buf *b, struct tp_collseq *q, uint64_t now,
		     int first)
{
	tp_buf_cstr(b, first ? "\n  {\"comm\": " : ",\n  {\"comm\": ");
	tp_json_hex(b, q->comm);
	if (q->id) {
		tp_buf_lit(b, ", \"comm_id\": ");
		tp_json_hex(b, q->id);
	}
	put_i(b, ", \"rank\": ", q->size ? q->rank : -1);
	put_i(b, ", \"size\": ", q->size);
	put_i(b, ", \"entered\": ", __atomic_load_n(&q->entered,
						   __ATOMIC_RELAXED));
	put_i(b, ", \"enqueued\": ", __atomic_load_n(&q->completed,
						    __ATOMIC_RELAXED));
	put_i(b, ", \"done\": ", __atomic_load_n(&q->done, __ATOMIC_RELAXED));
	put_i(b, ", \"p2p\": ", __atomic_load_n(&q->p2p, __ATOMIC_RELAXED));
	put_log(b, q, now);
	tp_buf_char(b, '}');
}

static void put_comms(struct tp_buf *b, uint64_t now)
{
	struct tp_collseq *q;
	unsigned i, n;
	int first = 1;

	q = tp_collseq_table(&n);
	tp_buf_lit(b, ",\n\"communicators\": [");
	for (i = 0; i < n; i++) {
		if (!__atomic_load_n(&q[i].comm, __ATOMIC_ACQUIRE) ||
		    (!q[i].size &&
		     !__atomic_load_n(&q[i].entered, __ATOMIC_RELAXED) &&
		     !__atomic_load_n(&q[i].p2p, __ATOMIC_RELAXED)))
			continue;
		put_comm(b, &q[i], now, first);
		first = 0;
	}
	tp_buf_lit(b, "]");
}

static int stopped(const char *reason)
{
	return !strcmp(reason, "SIGTERM") || !strcmp(reason, "SIGINT") ||
	       !strcmp(reason, "SIGHUP");
}

void tp_hang_put_dump(struct tp_buf *b, const char *reason, int alive,
		      const char *trace)
{
	uint64_t now = tp_ticks();

	tp_buf_lit(b, "{\"schema\": \"tprof.hang\", \"version\": 2");
	tp_buf_lit(b, ",\n\"reason\": ");
	tp_json_str(b, reason);
	tp_buf_lit(b, ", \"alive\": ");
	tp_buf_cstr(b, alive ? "true" : "false");
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
	put_idle(b, now, alive || stopped(reason));
	put_comms(b, now);
	tp_buf_lit(b, "\n}\n");
}
