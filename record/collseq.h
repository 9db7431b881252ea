/* record/: the recording core: records, per-thread rings, threads,
 * drops, the clock, the rings file; on files/ .. util/. */
/* Per-communicator collective sequence numbers (TPROF_HANG): the n-th
 * collective this process entered on a communicator, and the last one
 * that returned (NCCL enqueued it). The NCCL hooks count, the hang
 * watchdog reads. A communicator is named across ranks by `id`: a hash of
 * the ncclUniqueId it was made from (the same on every rank), or of its
 * parent's id and its split for ncclCommSplit; its address differs per
 * process.
 *
 * A fixed table, lock-free: a new communicator claims a free entry with
 * one compare-and-swap; a destroyed one leaves its entry (its address may
 * come back: the entry is then reset). */
#ifndef TP_COLLSEQ_H
#define TP_COLLSEQ_H

#include <stdint.h>

#define TP_COLLSEQ_MAX 1024

struct tp_collseq {
	uint64_t comm;		/* the address, 0: free entry */
	uint64_t id;		/* cross-rank name, 0: unknown */
	int32_t rank;
	int32_t size;
	uint32_t entered;	/* collectives entered */
	uint32_t completed;	/* the last one that returned */
	uint32_t p2p;		/* ncclSend / ncclRecv entered */
	uint32_t splits;	/* ncclCommSplit calls on it (names children) */
	/* the last collective entered */
	const char *last_name;
	uint64_t last_count;
	int32_t last_dtype;
	int32_t last_op;
};

/* The entry of comm, made when new; NULL when the table is full. */
struct tp_collseq *tp_collseq_get(uint64_t comm);
/* Every entry in use, for the watchdog. */
struct tp_collseq *tp_collseq_table(unsigned *n);
/* A communicator was destroyed: its address may be reused. */
void tp_collseq_forget(uint64_t comm);
void tp_collseq_after_fork(void);

/* FNV-1a 64 of n bytes (a unique id), never 0. */
uint64_t tp_collseq_hash(const void *p, unsigned n, uint64_t seed);

/* nccl.h's names, for the hang dump and its report. */
const char *tp_nccl_dtype_str(int dtype);
const char *tp_nccl_op_str(int op);

#endif
