/* record/: the recording core: records, per-thread rings, threads,
 * drops, the clock, the rings file; on files/ .. util/. */
/* "Entered, not yet returned" (TPROF_HANG): each thread's outermost hooked
 * call is published in its tp_thread's inflight slot at entry and
 * withdrawn at exit, with plain stores (no lock, no system call), so the
 * writer's watchdog (output/hang.c) can name a call that never returns.
 * The slot is the thread's own: only the thread writes it, the watchdog
 * reads it under a seqlock and retries a torn read at its next cycle. */
#ifndef TP_INFLIGHT_H
#define TP_INFLIGHT_H

#include <stdint.h>

#include "clock.h"
#include "thread.h"

/* What a slot's a[] holds besides the call's name. */
enum {
	TP_INF_PLAIN = 0,
	TP_INF_COLL = 1,	/* comm, count, dtype, op, root/peer, seq */
	TP_INF_P2P = 2,		/* the same for ncclSend / ncclRecv */
	TP_INF_INIT = 3,	/* unique id hash, nranks, rank */
	TP_INF_GROUP = 4,	/* the outermost ncclGroupEnd: comm, count,
				 * dtype, name, calls of the first collective
				 * it launches, its number */
	TP_INF_SYNC = 5,	/* a wait for the GPU: TP_SYNC_*, stream,
				 * event */
};

/* What a sync waits for (TP_INF_SYNC's a[0]). */
enum { TP_SYNC_STREAM, TP_SYNC_DEVICE, TP_SYNC_EVENT };

/* Set once at load when TPROF_HANG is on: the hot path's one test. */
extern int tp_hang_on;

/* The calling thread's slot when it may publish a call (TPROF_HANG on, a
 * recording thread, no call of its own published), else NULL. */
static inline struct tp_inflight *tp_inflight_free_slot(void)
{
	struct tp_thread *t;

	if (__builtin_expect(!tp_hang_on, 1))
		return NULL;
	t = tp_self;
	if (!t || t->internal || t->inflight.name)
		return NULL;
	return &t->inflight;
}

/* Opens the write: a[] and kind may be filled until tp_inflight_publish.
 * gen is set odd and then even by value, not by adding one, so a signal
 * handler's hooked call that opens and closes the slot in the middle of
 * a write cannot leave its parity inverted. */
static inline void tp_inflight_open(struct tp_inflight *s)
{
	__atomic_store_n(&s->gen, s->gen | 1, __ATOMIC_RELAXED);
	__atomic_thread_fence(__ATOMIC_RELEASE);
}

static inline void tp_inflight_close(struct tp_inflight *s)
{
	__atomic_store_n(&s->gen, (s->gen | 1) + 1, __ATOMIC_RELEASE);
}

static inline void tp_inflight_publish(struct tp_inflight *s,
				       const char *name, uint64_t t0,
				       uint32_t stack)
{
	s->t0 = t0;
	s->stack = stack;
	s->name = name;
	tp_inflight_close(s);
}

/* At the call's return, by the call that published it. */
static inline void tp_inflight_clear(struct tp_rec *r)
{
	struct tp_inflight *s;

	if (!r->inflight)
		return;
	s = &tp_self->inflight;
	tp_inflight_open(s);
	s->last_name = s->name;
	s->last_t1 = tp_ticks();
	s->name = NULL;
	s->kind = TP_INF_PLAIN;
	tp_inflight_close(s);
	r->inflight = 0;
}

/* A consistent copy of t's slot: 1, or 0 when it was being written
 * (read again at the next cycle). */
static inline int tp_inflight_copy(struct tp_thread *t,
				   struct tp_inflight *out)
{
	uint32_t g1 = __atomic_load_n(&t->inflight.gen, __ATOMIC_ACQUIRE), g2;

	if (g1 & 1)
		return 0;
	__builtin_memcpy(out, &t->inflight, sizeof(*out));
	__atomic_thread_fence(__ATOMIC_ACQUIRE);
	g2 = __atomic_load_n(&t->inflight.gen, __ATOMIC_RELAXED);
	return g1 == g2;
}

/* 1 when t's slot holds a call (copied into out), 0 when it holds none
 * or was being written. */
static inline int tp_inflight_read(struct tp_thread *t,
				   struct tp_inflight *out)
{
	return tp_inflight_copy(t, out) && out->name != NULL;
}

#endif
