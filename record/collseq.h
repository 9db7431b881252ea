/* record/: the recording core: records, per-thread rings, threads,
 * drops, the clock, the rings file; on files/ .. util/. */
/* Per-communicator collective sequence numbers and states (TPROF_HANG).
 * NCCL matches the n-th collective of every rank of a communicator with
 * each other's n-th; a collective only enqueues (nccl.h: "They return
 * when operations have been enqueued on the CUDA stream"), so what tells
 * a hang apart is, per rank, the collectives it entered, those it
 * enqueued, and those seen complete on the GPU: a later synchronize on
 * their stream (or the device, or an event recorded after them) that
 * returned. The NCCL hooks number and log them, the CUDA sync hooks
 * complete them, the hang watchdog reads them.
 *
 * A communicator is named across ranks by `id`: a hash of the
 * ncclUniqueId it was made from (the same on every rank), or of its
 * parent's id and its split for ncclCommSplit; its address differs per
 * process.
 *
 * A fixed table, lock-free: a new communicator claims a free entry with
 * one compare-and-swap; a destroyed one leaves its entry (its address may
 * come back: the entry is then reset). Each entry keeps its last
 * TP_COLLSEQ_LOG collectives in a ring indexed by number. Fields other
 * threads read are accessed atomically. */
#ifndef TP_COLLSEQ_H
#define TP_COLLSEQ_H

#include <stdint.h>

#define TP_COLLSEQ_MAX 1024
#define TP_COLLSEQ_LOG 32

/* A logged collective's state. */
enum {
	TP_COLL_IN_CALL = 1,	/* its call has not returned */
	TP_COLL_QUEUED,		/* returned inside a group: launched at
				 * its outermost end */
	TP_COLL_ENQUEUED,	/* on its stream, not seen complete */
	TP_COLL_DONE,		/* seen complete on the GPU */
};

struct tp_coll_rec {
	uint32_t seq;		/* its number; written last, 0: empty */
	uint32_t state;		/* TP_COLL_* */
	const char *name;
	uint64_t count;
	int32_t dtype;
	int32_t op;
	int32_t root;		/* root (or peer) */
	int32_t tid;		/* the thread that called it */
	uint64_t stream;
	uint64_t t_enq;		/* ticks it was enqueued at */
};

struct tp_collseq {
	uint64_t comm;		/* the address, 0: free entry */
	uint64_t id;		/* cross-rank name, 0: unknown */
	int32_t rank;
	int32_t size;
	uint32_t entered;	/* collectives entered */
	uint32_t completed;	/* the last one whose call returned */
	uint32_t done;		/* the last one seen done on the GPU */
	uint32_t p2p;		/* ncclSend / ncclRecv entered */
	uint32_t splits;	/* ncclCommSplit calls on it (names children) */
	int32_t last_tid;	/* the thread of the last one entered */
	/* the last collective entered */
	const char *last_name;
	uint64_t last_count;
	int32_t last_dtype;
	int32_t last_op;
	struct tp_coll_rec log[TP_COLLSEQ_LOG];
};

/* The entry of comm, made when new; NULL when the table is full. */
struct tp_collseq *tp_collseq_get(uint64_t comm);
/* Every entry, for the watchdog. */
struct tp_collseq *tp_collseq_table(unsigned *n);
/* The entries claimed so far, in the order they were: the i-th (NULL
 * while it is being noted). */
unsigned tp_collseq_n_used(void);
struct tp_collseq *tp_collseq_used_at(unsigned i);
/* A communicator was destroyed: its address may be reused. */
void tp_collseq_forget(uint64_t comm);
void tp_collseq_after_fork(void);

/* The collective seq of q entered (its call's args). */
void tp_collseq_enter(struct tp_collseq *q, uint32_t seq, const char *name,
		      uint64_t count, int32_t dtype, int32_t op, int32_t root,
		      uint64_t stream, int32_t tid);
/* Its call returned: queued in a group, enqueued (at tick now), or
 * failed (ok 0: NCCL numbers only what it launches, so the number is
 * given back when it is still the last). */
void tp_collseq_returned(struct tp_collseq *q, uint32_t seq, int ok,
			 int in_group, uint64_t now);
/* A group's outermost end launched it. */
void tp_collseq_launched(struct tp_collseq *q, uint32_t seq, uint64_t now);

/* Collectives enqueued and not seen complete, in the whole process: the
 * sync hooks' one test. */
extern uint32_t tp_coll_outstanding;
/* A synchronize entered at tick t0 returned: every collective enqueued
 * on stream before t0 (on any stream when all) is complete. */
void tp_collseq_synced(uint64_t stream, int all, uint64_t t0);
/* cudaEventRecord(event, stream) at tick now; and the event waited for
 * returned: what its stream held before it is complete. */
void tp_collseq_event_recorded(uint64_t event, uint64_t stream,
			       uint64_t now);
void tp_collseq_event_synced(uint64_t event);

/* FNV-1a 64 of n bytes (a unique id), never 0. */
uint64_t tp_collseq_hash(const void *p, unsigned n, uint64_t seed);

/* nccl.h's names, for the hang dump and its report. */
const char *tp_nccl_dtype_str(int dtype);
const char *tp_nccl_op_str(int op);
/* A state's name in the hang dump. */
const char *tp_coll_state_str(uint32_t state);

#endif
