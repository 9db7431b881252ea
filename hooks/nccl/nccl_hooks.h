/* hooks/nccl/: the nccl hooks, on hooks/ (resolve.c: how the real
 * functions are found) and every library folder below it. */
/* What the NCCL hooks share (nccl_state.c): the calling thread's group
 * state, the nesting guard, and the communicators' rank and size.
 *
 * Every hook has the one hook shape (hook_shape.h) with these slots:
 *
 *   enter  tp_nccl_enter(&k, comm)   0 when NCCL calls its own API
 *   leave  tp_nccl_leave()
 *   end    k.rec ? the record : NULL
 *
 * Two things NCCL needs. Group state is kept whether or not the source
 * is recorded, so recording that starts mid-group still numbers it
 * right. And NCCL's own calls of its public API (ncclBcast calls
 * ncclBroadcast through the PLT) are neither recorded nor counted in a
 * group a second time.
 */
#ifndef TP_NCCL_HOOKS_H
#define TP_NCCL_HOOKS_H

#include <stdint.h>

#include <nccl.h>

#include "record/collseq.h"
#include "hooks/hook_shape.h"
#include "nccl_apis.h"

/* Helpers that record must be inlined into the hook: a captured call
 * stack skips exactly one frame above tp_stack_capture. */
#define TP_NCCL_INLINE TP_INLINE
#define TP_NCCL_PTR(p) ((uint64_t)(uintptr_t)(p))
/* What a hook returns when the real function cannot be found. */
#define TP_NCCL_MISSING ncclInternalError

/* NULL-terminated soname list, most recent first. */
extern const char *const tp_libs_nccl[];

#define TP_NCCL_CACHE 4
#define TP_NCCL_PENDING 8

struct tp_nccl_known {
	uint64_t comm;
	uint32_t gen;		/* tp_nccl_gen when it was read */
	int32_t rank;
	int32_t size;
};

struct tp_nccl_tls {
	uint32_t depth;		/* ncclGroupStart nesting, as NCCL counts it */
	uint32_t seq;		/* outermost groups this thread started */
	uint32_t calls;		/* hooked calls in the current group */
	uint32_t inside;	/* in a hooked call */
	uint32_t next;		/* cache slot to replace next */
	uint32_t n_pending;
	struct tp_nccl_known cache[TP_NCCL_CACHE];
	/* Communicators split inside a group: readable after ncclGroupEnd. */
	uint64_t pending[TP_NCCL_PENDING];
	/* TPROF_HANG: collectives enqueued in the open group, completed at
	 * its outermost end (beyond TP_NCCL_PENDING, the last is kept). */
	uint32_t n_queued;
	uint32_t queued_seq[TP_NCCL_PENDING];
	struct tp_collseq *queued[TP_NCCL_PENDING];
	/* the first one's call, count and type, for a hang in the end */
	const char *queued_name;
	uint64_t queued_count;
	int32_t queued_dtype;
};

extern __thread struct tp_nccl_tls tp_nccl_tls
	__attribute__((tls_model("initial-exec")));

/* One hooked call in progress. */
struct tp_nccl_call {
	struct tp_rec r;
	int rec;		/* the call is being recorded */
	uint32_t group;		/* its group's sequence number, 0: none */
	int32_t rank;		/* of the communicator passed, -1: unknown */
	int32_t size;		/* 0: unknown */
	/* TPROF_HANG: the communicator's sequence entry and this call's
	 * number on it, or the unique id hash of an init */
	struct tp_collseq *q;
	uint32_t qseq;
	uint64_t uid;
};

/* Bumped when a communicator is freed: a new one may get its address. */
extern uint32_t tp_nccl_gen;

/* 1 and rank/size when the thread has comm's in its cache. */
static inline int tp_nccl_cached(uint64_t comm, int32_t *rank, int32_t *size)
{
	struct tp_nccl_tls *s = &tp_nccl_tls;
	uint32_t gen = __atomic_load_n(&tp_nccl_gen, __ATOMIC_ACQUIRE);
	unsigned i;

	for (i = 0; i < TP_NCCL_CACHE; i++) {
		if (s->cache[i].comm != comm || s->cache[i].gen != gen)
			continue;
		*rank = s->cache[i].rank;
		*size = s->cache[i].size;
		return 1;
	}
	return 0;
}

/* 1 and rank/size when NCCL tells them (cached then), else 0 and they
 * are left as they were.
 * An unready communicator (nonblocking, or created in a group that has
 * not ended) is not asked: NCCL would warn and set its last error. */
int tp_nccl_ask(uint64_t comm, int32_t *rank, int32_t *size);

static inline int tp_nccl_comm_info(uint64_t comm, int32_t *rank,
				    int32_t *size)
{
	return tp_nccl_cached(comm, rank, size) ||
	       tp_nccl_ask(comm, rank, size);
}

/* A communicator was freed: every thread's cached entries are stale. */
void tp_nccl_forget(uint64_t comm);
/* comm was created on this thread inside a group and is not readable yet;
 * it is noted once the outermost ncclGroupEnd has run. */
void tp_nccl_pending_add(uint64_t comm);
void tp_nccl_pending_resolve(void);
/* A communicator of `size` ranks was created, this process being `rank`:
 * the trace's distributedInfo. */
void tp_nccl_note(int rank, int size);

/* 0 when NCCL is calling its own API from inside a hooked call; else
 * marks the thread as in one until tp_nccl_leave. */
static inline int tp_nccl_guard(void)
{
	if (tp_nccl_tls.inside)
		return 0;
	tp_nccl_tls.inside = 1;
	return 1;
}

/* 0 when NCCL is calling its own API: the hook then only forwards. Else
 * counts the call in the thread's group, starts the record when the
 * source is on and reads comm's rank and size (before the call: it may
 * free comm); the clock restarts when that took calls into NCCL. */
TP_NCCL_INLINE int tp_nccl_enter(struct tp_nccl_call *k, const void *comm)
{
	struct tp_nccl_tls *s = &tp_nccl_tls;

	if (!tp_nccl_guard())
		return 0;
	k->group = 0;
	if (s->depth) {
		s->calls++;
		k->group = s->seq;
	}
	k->rank = -1;
	k->size = 0;
	k->rec = tp_rec_begin(&k->r, TP_SRC_NCCL);
	if (!k->rec || !comm ||
	    tp_nccl_cached(TP_NCCL_PTR(comm), &k->rank, &k->size))
		return 1;
	/* Leaves them unknown when NCCL cannot tell. */
	tp_nccl_ask(TP_NCCL_PTR(comm), &k->rank, &k->size);
	k->r.t0 = tp_ticks();
	return 1;
}

static inline void tp_nccl_leave(void)
{
	tp_nccl_tls.inside = 0;
}

/* TPROF_HANG: a collective (or send/recv, numbered apart) entered: its
 * number on the communicator, its args logged there and in the thread's
 * inflight slot (the hook shape publishes it). */
TP_NCCL_INLINE void tp_nccl_hang_coll(struct tp_nccl_call *k, int p2p,
				      const char *name, size_t count,
				      ncclDataType_t dt, int op, int root,
				      const void *comm, const void *stream)
{
	struct tp_inflight *s = tp_inflight_free_slot();
	struct tp_collseq *q;
	uint32_t seq = 0;

	k->q = NULL;
	if (!s)
		return;
	q = tp_collseq_get(TP_NCCL_PTR(comm));
	if (q && p2p) {
		seq = __atomic_add_fetch(&q->p2p, 1, __ATOMIC_RELAXED);
	} else if (q) {
		seq = __atomic_add_fetch(&q->entered, 1, __ATOMIC_RELAXED);
		q->last_name = name;
		q->last_count = count;
		q->last_dtype = (int32_t)dt;
		q->last_op = op;
		k->q = q;
		k->qseq = seq;
		tp_collseq_enter(q, seq, name, count, (int32_t)dt, op, root,
				 TP_NCCL_PTR(stream), tp_self->tid);
	}
	if (q && !q->size && k->size) {
		q->rank = k->rank;
		q->size = k->size;
	}
	tp_inflight_open(s);
	s->kind = p2p ? TP_INF_P2P : TP_INF_COLL;
	s->a[0] = TP_NCCL_PTR(comm);
	s->a[1] = count;
	s->a[2] = (uint64_t)(int64_t)dt;
	s->a[3] = (uint64_t)(int64_t)op;
	s->a[4] = (uint64_t)(int64_t)root;
	s->a[5] = seq;
}

/* The collective returned: enqueued on its stream, or queued in the
 * thread's group and launched at the group's outermost end; a call that
 * failed launched nothing and gives its number back. */
static inline void tp_nccl_hang_done(const struct tp_nccl_call *k,
				     ncclResult_t ret)
{
	struct tp_nccl_tls *s = &tp_nccl_tls;
	int ok = ret == ncclSuccess || ret == ncclInProgress;
	uint32_t n;

	if (!k->q)
		return;
	tp_collseq_returned(k->q, k->qseq, ok, s->depth != 0, tp_ticks());
	if (!ok || !s->depth)
		return;
	n = s->n_queued < TP_NCCL_PENDING ? s->n_queued++ : TP_NCCL_PENDING - 1;
	s->queued[n] = k->q;
	s->queued_seq[n] = k->qseq;
	if (n)
		return;
	s->queued_name = k->q->last_name;
	s->queued_count = k->q->last_count;
	s->queued_dtype = k->q->last_dtype;
}

/* The outermost ncclGroupEnd launches what the group enqueued: it waits
 * in the first of those collectives, which the slot names (kind GROUP:
 * comm, count, dtype, the call's name, how many, its number). */
TP_NCCL_INLINE void tp_nccl_hang_group(const struct tp_nccl_call *k)
{
	struct tp_nccl_tls *t = &tp_nccl_tls;
	struct tp_inflight *s;

	if (k->group != 1 || !t->n_queued || !(s = tp_inflight_free_slot()))
		return;
	tp_inflight_open(s);
	s->kind = TP_INF_GROUP;
	s->a[0] = t->queued[0]->comm;
	s->a[1] = t->queued_count;
	s->a[2] = (uint64_t)(int64_t)t->queued_dtype;
	s->a[3] = (uint64_t)(uintptr_t)t->queued_name;
	s->a[4] = t->n_queued;
	s->a[5] = t->queued_seq[0];
}

/* The outermost ncclGroupEnd returned: it launched its collectives. */
static inline void tp_nccl_hang_group_done(void)
{
	struct tp_nccl_tls *s = &tp_nccl_tls;
	uint64_t now = tp_ticks();
	uint32_t i;

	for (i = 0; i < s->n_queued; i++)
		tp_collseq_launched(s->queued[i], s->queued_seq[i], now);
	s->n_queued = 0;
}

/* ncclCommInitRank and the like: the unique id's hash, nranks, rank. */
TP_NCCL_INLINE void tp_nccl_hang_init(struct tp_nccl_call *k,
				      const ncclUniqueId *id, int nranks,
				      int rank)
{
	struct tp_inflight *s = tp_inflight_free_slot();

	k->uid = id ? tp_collseq_hash(id, sizeof(*id), 0) : 0;
	if (!s)
		return;
	tp_inflight_open(s);
	s->kind = TP_INF_INIT;
	s->a[0] = k->uid;
	s->a[1] = (uint64_t)(int64_t)nranks;
	s->a[2] = (uint64_t)(int64_t)rank;
}

/* The init handed back comm: it is named across ranks by the id. */
static inline void tp_nccl_hang_made(const struct tp_nccl_call *k,
				     uint64_t comm, int rank, int nranks)
{
	struct tp_collseq *q;

	if (!tp_hang_on || !comm || !(q = tp_collseq_get(comm)))
		return;
	q->id = k->uid;
	q->rank = rank;
	q->size = nranks;
}

/* ncclSuccess, or ncclInProgress for a nonblocking communicator: either
 * way the call has handed back what it creates. */
static inline int tp_nccl_started(ncclResult_t ret)
{
	return ret == ncclSuccess || ret == ncclInProgress;
}

#endif
