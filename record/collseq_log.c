/* record/: the recording core: records, per-thread rings, threads,
 * drops, the clock, the rings file; on files/ .. util/. */
/* Each communicator's last collectives and their states (see collseq.h):
 * logged by the NCCL hooks on the calling thread, completed by the CUDA
 * sync hooks on whichever thread synchronizes, read by the watchdog. A
 * slot is reused TP_COLLSEQ_LOG numbers later; every field another
 * thread reads is stored and loaded atomically, and `seq` is written
 * last. */
#include <stddef.h>

#include "collseq.h"

#define RELAXED __ATOMIC_RELAXED
#define EVENTS 256

static struct tp_coll_rec *rec_of(struct tp_collseq *q, uint32_t seq)
{
	struct tp_coll_rec *r = &q->log[seq % TP_COLLSEQ_LOG];

	return __atomic_load_n(&r->seq, __ATOMIC_ACQUIRE) == seq ? r : NULL;
}

static void raise_to(uint32_t *v, uint32_t seq)
{
	uint32_t cur = __atomic_load_n(v, RELAXED);

	while (cur < seq && !__atomic_compare_exchange_n(v, &cur, seq, 1,
							 RELAXED, RELAXED))
		;
}

void tp_collseq_enter(struct tp_collseq *q, uint32_t seq, const char *name,
		      uint64_t count, int32_t dtype, int32_t op, int32_t root,
		      uint64_t stream, int32_t tid)
{
	struct tp_coll_rec *r = &q->log[seq % TP_COLLSEQ_LOG];

	/* An enqueued one this overwrites leaves the count. */
	__atomic_store_n(&r->seq, 0, __ATOMIC_RELEASE);
	if (__atomic_exchange_n(&r->state, TP_COLL_IN_CALL, __ATOMIC_ACQ_REL) ==
	    TP_COLL_ENQUEUED)
		__atomic_sub_fetch(&tp_coll_outstanding, 1, RELAXED);
	__atomic_store_n(&r->name, name, RELAXED);
	__atomic_store_n(&r->count, count, RELAXED);
	__atomic_store_n(&r->dtype, dtype, RELAXED);
	__atomic_store_n(&r->op, op, RELAXED);
	__atomic_store_n(&r->root, root, RELAXED);
	__atomic_store_n(&r->tid, tid, RELAXED);
	__atomic_store_n(&r->stream, stream, RELAXED);
	__atomic_store_n(&r->t_enq, 0, RELAXED);
	__atomic_store_n(&q->last_tid, tid, RELAXED);
	__atomic_store_n(&r->seq, seq, __ATOMIC_RELEASE);
}

static void enqueued(struct tp_collseq *q, struct tp_coll_rec *r,
		     uint32_t seq, uint64_t now)
{
	__atomic_store_n(&r->t_enq, now, RELAXED);
	__atomic_add_fetch(&tp_coll_outstanding, 1, RELAXED);
	__atomic_store_n(&r->state, TP_COLL_ENQUEUED, __ATOMIC_RELEASE);
	raise_to(&q->completed, seq);
}

void tp_collseq_returned(struct tp_collseq *q, uint32_t seq, int ok,
			 int in_group, uint64_t now)
{
	struct tp_coll_rec *r = rec_of(q, seq);
	uint32_t cur = seq;

	if (!r)
		return;
	if (!ok) {
		__atomic_store_n(&r->seq, 0, __ATOMIC_RELEASE);
		__atomic_store_n(&r->state, 0, RELAXED);
		__atomic_compare_exchange_n(&q->entered, &cur, seq - 1, 0,
					    RELAXED, RELAXED);
		return;
	}
	if (in_group)
		__atomic_store_n(&r->state, TP_COLL_QUEUED, __ATOMIC_RELEASE);
	else
		enqueued(q, r, seq, now);
}

void tp_collseq_launched(struct tp_collseq *q, uint32_t seq, uint64_t now)
{
	struct tp_coll_rec *r = rec_of(q, seq);

	if (r && __atomic_load_n(&r->state, __ATOMIC_ACQUIRE) ==
	    TP_COLL_QUEUED)
		enqueued(q, r, seq, now);
}

/* Every enqueued collective of q on stream (any, when all) enqueued
 * before t0 is complete. */
static void sync_comm(struct tp_collseq *q, uint64_t stream, int all,
		      uint64_t t0)
{
	struct tp_coll_rec *r;
	uint32_t seq, st;
	unsigned i;

	for (i = 0; i < TP_COLLSEQ_LOG; i++) {
		r = &q->log[i];
		st = TP_COLL_ENQUEUED;
		if (__atomic_load_n(&r->state, __ATOMIC_ACQUIRE) != st ||
		    (!all && __atomic_load_n(&r->stream, RELAXED) != stream) ||
		    __atomic_load_n(&r->t_enq, RELAXED) > t0)
			continue;
		seq = __atomic_load_n(&r->seq, __ATOMIC_ACQUIRE);
		if (!seq || !__atomic_compare_exchange_n(&r->state, &st,
							 TP_COLL_DONE, 0,
							 __ATOMIC_ACQ_REL,
							 RELAXED))
			continue;
		__atomic_sub_fetch(&tp_coll_outstanding, 1, RELAXED);
		raise_to(&q->done, seq);
	}
}

void tp_collseq_synced(uint64_t stream, int all, uint64_t t0)
{
	unsigned i, n = tp_collseq_n_used();
	struct tp_collseq *q;

	for (i = 0; i < n; i++)
		if ((q = tp_collseq_used_at(i)))
			sync_comm(q, stream, all, t0);
}

/* The last events recorded while collectives were outstanding: which
 * stream, and when. */
static struct {
	uint64_t event, stream, at;
} events[EVENTS];

static unsigned event_slot(uint64_t event)
{
	return (unsigned)((event >> 4) * 0x9e3779b1u) % EVENTS;
}

void tp_collseq_event_recorded(uint64_t event, uint64_t stream,
			       uint64_t now)
{
	unsigned i = event_slot(event);

	__atomic_store_n(&events[i].event, 0, __ATOMIC_RELEASE);
	__atomic_store_n(&events[i].stream, stream, RELAXED);
	__atomic_store_n(&events[i].at, now, RELAXED);
	__atomic_store_n(&events[i].event, event, __ATOMIC_RELEASE);
}

void tp_collseq_event_synced(uint64_t event)
{
	unsigned i = event_slot(event);
	uint64_t stream = __atomic_load_n(&events[i].stream, RELAXED);
	uint64_t at = __atomic_load_n(&events[i].at, RELAXED);

	if (!event || __atomic_load_n(&events[i].event, __ATOMIC_ACQUIRE) !=
	    event)
		return;
	tp_collseq_synced(stream, 0, at);
}
