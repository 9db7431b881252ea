/* record/: the recording core: records, per-thread rings, threads,
 * drops, the clock, the rings file; on files/ .. util/. */
/* Per-thread recording state, found through an initial-exec TLS pointer.
 *
 * A thread gets its ring on its first recorded call; the ring is pushed on
 * a lock-free list the writer walks. When the thread exits, its ring is
 * marked and the writer drains and frees it.
 */
#ifndef TP_THREAD_H
#define TP_THREAD_H

#include <stdint.h>
#include <sys/types.h>

#include "clock.h"
#include "drops.h"
#include "ring.h"

/* The hooked call a thread is inside (TPROF_HANG, record/inflight.h):
 * written by the thread at entry, cleared at exit, read by the writer's
 * watchdog under the seqlock gen (odd while being written). */
struct tp_inflight {
	uint32_t gen;
	uint32_t kind;		/* TP_INF_*: what a[] holds */
	const char *name;	/* the call, NULL: in none */
	uint64_t t0;		/* ticks at entry */
	uint32_t stack;		/* interned stack at entry, 0: none */
	uint32_t reported;	/* watchdog side: gen already dumped */
	uint64_t a[6];
	/* the last call that returned, and when (ticks): where a thread in
	 * no hooked call came from */
	const char *last_name;
	uint64_t last_t1;
};

struct tp_thread {
	struct tp_ring ring;
	struct tp_inflight inflight;
	struct tp_thread *next;		/* registry list */
	pid_t tid;
	int exited;			/* set at thread exit */
	int internal;			/* inside tprof itself: record nothing */
	int unmapped;			/* (with internal) a program thread
					 * without a ring: its calls are
					 * counted, not recorded */
	/* CUPTI correlation: a hook sets in_hook around the real call, and
	 * CUPTI's callback (on this thread, inside that call) leaves the
	 * call's correlation id in corr. Calls CUPTI reports that no hook
	 * saw are timed from cb_t0. */
	uint8_t in_hook;
	uint8_t cb_depth;
	uint32_t corr;
	uint64_t cb_t0[4];
	uint64_t written;		/* writer side */
	uint64_t dropped_base;		/* writer side: ring drops counted
					 * in an earlier file (failed exec) */
	uint64_t prefault_head;		/* writer side: head at the last
					 * prefault */
	struct tp_drops *drops;		/* what a full ring dropped */
	struct tp_drop_slot **drop_of;	/* drops->of, or tp_drops_none */
	struct tp_drops *drops_old;	/* released, freed with the thread
					 * or at its next block */
	void *annot;			/* writer side: open NVTX ranges */
	uint8_t json_len;		/* writer side: "pid":P,"tid":T,"ts": */
	char json[63];
	char name[64];
};

extern __thread struct tp_thread *tp_self
	__attribute__((tls_model("initial-exec")));
/* Sources being recorded now (TPROF_TRACE bits); 0 while tracing is off,
 * so a hook costs one predictable branch when there is nothing to do. */
extern unsigned tp_recording;
/* Set while the trace is completed at an end of the process (a
 * terminating or crash signal, _exit, exit): a program thread that enters
 * a hook then waits there instead of calling on, so the writer has the
 * cores to write what the rings hold, its work is bounded by what was
 * recorded however many threads keep calling, and no call is made that
 * the trace neither holds nor counts. TP_PARK_DYING: the trace is
 * complete and the process dies next (the signal is re-raised, _exit
 * goes on): they stay held until then, at most TP_PARK_DYING_MS. */
extern uint32_t tp_parking;

enum { TP_PARK_OFF, TP_PARK_ON, TP_PARK_DYING };
#define TP_PARK_DYING_MS 10000

/* Resident ring memory ahead of a thread: made at its first event, then
 * kept ahead by the writer. */
#define TP_RING_PREFAULT_FIRST (256 * 1024)
#define TP_RING_PREFAULT_AHEAD (4 * 1024 * 1024)

struct tp_thread *tp_thread_attach(void);
/* A call from a thread that has no ring (it could not be mapped: an
 * address-space limit, or no memory): counted as dropped. */
void tp_thread_note_unrecorded(void) __attribute__((cold, noinline));
/* A program thread entering a hook while tp_parking is set: waits until
 * it is cleared, or the dying process has not died within
 * TP_PARK_DYING_MS (tprof's own threads never wait). */
void tp_thread_park(void) __attribute__((cold, noinline));
/* Async-signal-safe: sets tp_parking to TP_PARK_* (a change wakes them). */
void tp_thread_set_parking(int how);
/* Calls counted so, and by how many threads, since the process began. */
uint64_t tp_thread_unrecorded(unsigned *threads);
struct tp_thread *tp_thread_list(void);
void tp_thread_unlink(struct tp_thread *t);
void tp_thread_free(struct tp_thread *t);
void tp_thread_reset_after_fork(void);
void tp_thread_set_ring_bytes(size_t bytes);
void tp_thread_read_name(struct tp_thread *t);
/* Called every few thread exits (wakes the writer to free their rings);
 * async-signal-safe. */
void tp_thread_on_exits(void (*fn)(void));
/* Called once, the first time any thread attaches (starts the writer). */
void tp_thread_on_first_attach(void (*fn)(void));

/* One recording in progress on the calling thread. */
struct tp_rec {
	struct tp_thread *t;
	uint64_t t0;
	unsigned n_ext;		/* extension slots reserved with the record */
	unsigned inflight;	/* this call owns its thread's inflight slot */
};

/* The recording starts on t (the calling thread's, NULL before its
 * first event: attached now); 0 on a thread that cannot record (counted)
 * or one of tprof's own. */
static inline __attribute__((always_inline)) int
tp_rec_on(struct tp_rec *r, struct tp_thread *t)
{
	if (__builtin_expect(!t, 0))
		t = tp_thread_attach();
	if (__builtin_expect(!t || t->internal, 0)) {
		if (!t || t->unmapped)
			tp_thread_note_unrecorded();
		return 0;
	}
	r->t = t;
	r->t0 = tp_ticks();
	return 1;
}

static inline int tp_rec_begin(struct tp_rec *r, unsigned source)
{
	/* Relaxed: a plain load, but the capture gate and the writer
	 * change it from other threads. */
	if (__builtin_expect(!(__atomic_load_n(&tp_recording,
					       __ATOMIC_RELAXED) & source), 0)) {
		if (__builtin_expect(__atomic_load_n(&tp_parking,
						     __ATOMIC_RELAXED), 0))
			tp_thread_park();
		return 0;
	}
	return tp_rec_on(r, tp_self);
}

/* The recording path is forced inline into every hook: with the drop
 * log's append inline too, gcc's size heuristics made tp_rec_end a call
 * of its own in each hook, +40 instructions per hooked call (callgrind,
 * bench_calls: cudaLaunchKernel's hook 208 -> 250 instructions). */
#define tp_hot_inline inline __attribute__((always_inline))

/* The ring full at tail (tp_ring_full_at): past the first look at this
 * tail, a drop, inline in the usual case: its API's slot found in one
 * lookup and its octave counted. The first look at a tail goes out of
 * line (tp_rec_full_slow, which tp_ring_take's every other caller on
 * the hooks' path goes through too): a spill chunk may take the record
 * (or, with a chunk being filled, the ring again); else the drop is
 * counted there (with the thread's or the API's first drop, and a wake
 * of the writer due). */
struct tp_event *tp_rec_full_slow(struct tp_thread *t, uint16_t api,
				  uint64_t ticks, unsigned n)
	__attribute__((noinline));

static tp_hot_inline struct tp_event *tp_rec_full(struct tp_thread *t,
					   struct tp_ring *rg, uint16_t api,
					   uint64_t ticks, uint64_t tail,
					   unsigned n)
{
	/* Relaxed: the writer resets drop_of when it releases the block,
	 * which stays mapped for a drop in flight. A plain mov on x86. */
	struct tp_drop_slot **of = __atomic_load_n(&t->drop_of,
						   __ATOMIC_RELAXED);
	struct tp_drop_slot *s = of[api & (TP_DROP_APIS - 1)];

	if (__builtin_expect(s && rg->drop_tail == tail, 1)) {
		tp_drop_add(s, ticks);
		tp_ring_count_drop(rg);
		return NULL;
	}
	return tp_rec_full_slow(t, api, ticks, n);
}

static tp_hot_inline void tp_rec_fill(struct tp_rec *r, struct tp_event *e,
				      uint16_t api, int32_t ret,
				      unsigned n_ext, uint64_t t1)
{
	e->start = r->t0;
	e->end = t1;
	e->api = api;
	e->flags = (uint16_t)n_ext;
	e->ret = ret;
	e->stream = 0;
	e->corr = 0;
	r->n_ext = n_ext;
}

/* A record ending at t1 with n_ext (<= TP_EV_EXT_MAX) extension slots
 * reserved after it, or NULL when it fits nowhere (counted). */
static tp_hot_inline struct tp_event *tp_rec_at(struct tp_rec *r, uint16_t api,
					 int32_t ret, unsigned n_ext,
					 uint64_t t1)
{
	struct tp_ring *rg = &r->t->ring;
	struct tp_event *e;

	/* Past the limit, the ring is either full (the drop path: one load
	 * of the tail, then tp_rec_full) or only due a look at the tail
	 * (tp_ring_take, through tp_rec_full_slow, which counts a drop if
	 * the record fits nowhere after all). */
	if (__builtin_expect(rg->head + 1 + n_ext > rg->limit, 0)) {
		uint64_t tail = tp_ring_tail_now(rg);

		if (tp_ring_full_at(rg, 1 + n_ext, tail))
			e = tp_rec_full(r->t, rg, api, t1 - r->t0, tail,
					1 + n_ext);
		else	/* room, or a spill chunk to stay in: counted if not */
			e = tp_rec_full_slow(r->t, api, t1 - r->t0, 1 + n_ext);
		if (__builtin_expect(!e, 0))
			return NULL;
	} else {
		e = &rg->wslots[rg->head & rg->wmask];
	}
	tp_rec_fill(r, e, api, ret, n_ext, t1);
	return e;
}

static tp_hot_inline struct tp_event *tp_rec_end(struct tp_rec *r, uint16_t api,
					  int32_t ret)
{
	return tp_rec_at(r, api, ret, 0, tp_ticks());
}

/* As tp_rec_end, with extension slots: fill them with tp_rec_ext or
 * tp_rec_ext_copy. */
static tp_hot_inline struct tp_event *tp_rec_end_ext(struct tp_rec *r, uint16_t api,
					      int32_t ret, unsigned n_ext)
{
	return tp_rec_at(r, api, ret, n_ext, tp_ticks());
}

/* An instant (an NVTX push or pop): the time tp_rec_begin took is its
 * start and end, one clock read fewer. */
static tp_hot_inline struct tp_event *tp_rec_point_ext(struct tp_rec *r,
						uint16_t api, unsigned n_ext)
{
	return tp_rec_at(r, api, 0, n_ext, r->t0);
}

/* Ranges (a begin and its end: an NVTX push and its pop) are kept
 * whole or dropped whole. A begin is recorded only with k slots kept
 * back in its thread's ring (or spill chunk) for its end, so that the
 * end fits whenever it comes, however full the ring is by then
 * (tp_rec_close, k >= the end's 1 + n_ext). A begin that does not fit
 * with them, or past the ring's resv_max, is dropped and counted; its
 * end is then counted as dropped too (tp_drops_count), never recorded.
 * Both return an instant at r->t0, like tp_rec_point_ext. */
static inline struct tp_event *tp_rec_open(struct tp_rec *r, uint16_t api,
					   unsigned n_ext, unsigned k)
{
	struct tp_ring *rg = &r->t->ring;
	struct tp_event *e;

	if (rg->resv + k > rg->resv_max) {
		tp_drops_count(r->t, api, 0);
		return NULL;
	}
	tp_ring_keep(rg, k);
	e = tp_rec_at(r, api, 0, n_ext, r->t0);
	if (!e)
		tp_ring_unkeep(rg, k);
	return e;
}

static inline struct tp_event *tp_rec_close(struct tp_rec *r, uint16_t api,
					    unsigned n_ext, unsigned k)
{
	struct tp_ring *rg = &r->t->ring;
	struct tp_event *e;

	tp_ring_unkeep(rg, k);
	if (rg->head + 1 + n_ext > rg->limit)
		e = tp_ring_take(rg, 1 + n_ext);	/* fits: kept for it */
	else
		e = &rg->wslots[rg->head & rg->wmask];
	if (__builtin_expect(!e, 0)) {	/* cannot be */
		tp_drops_count(r->t, api, 0);
		return NULL;
	}
	tp_rec_fill(r, e, api, 0, n_ext, r->t0);
	return e;
}

/* A range end whose begin was recorded: recorded whether or not
 * recording is on now (a window or TPROF_TRACE does not cut a range in
 * two), on a thread that gets its ring now if need be. 0 on a thread
 * that cannot have one (counted) or one of tprof's own. */
static inline int tp_rec_begin_any(struct tp_rec *r)
{
	struct tp_thread *t = tp_self;

	if (__builtin_expect(__atomic_load_n(&tp_parking, __ATOMIC_RELAXED),
			     0))
		tp_thread_park();
	return tp_rec_on(r, t);
}

/* Extension slot i (1..n_ext): 80 contiguous bytes. */
static inline void *tp_rec_ext(struct tp_rec *r, unsigned i)
{
	return tp_ring_slot(&r->t->ring, i);
}

/* Copies len bytes into the extension at byte offset off, across slots
 * (which may wrap around the ring). */
static inline void tp_rec_ext_copy(struct tp_rec *r, size_t off,
				   const void *src, size_t len)
{
	const char *p = src;

	while (len) {
		size_t in = off % TP_EV_SLOT_BYTES;
		size_t n = TP_EV_SLOT_BYTES - in;
		char *dst = (char *)tp_rec_ext(r, 1 + (unsigned)(off /
					       TP_EV_SLOT_BYTES)) + in;

		if (n > len)
			n = len;
		__builtin_memcpy(dst, p, n);
		p += n;
		off += n;
		len -= n;
	}
}

/* Around the real call of a hook: CUPTI's callback fills t->corr. */
static inline void tp_rec_call_begin(struct tp_rec *r)
{
	r->t->corr = 0;
	r->t->in_hook = 1;
}

static inline uint32_t tp_rec_call_end(struct tp_rec *r)
{
	r->t->in_hook = 0;
	return r->t->corr;
}

static inline void tp_rec_commit(struct tp_rec *r)
{
	tp_ring_commit_n(&r->t->ring, 1 + r->n_ext);
}



/* The state a tprof-internal thread (the writer) installs as its own: it
 * records nothing. */
struct tp_thread *tp_thread_internal(void);
#endif
