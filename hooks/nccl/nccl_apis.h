/* hooks/nccl/: the nccl hooks, on hooks/ (resolve.c: how the real
 * functions are found) and every library folder below it. */
/* Every NCCL entry point tprof records, and the records they write:
 * X(id, shown name, how its args are printed, what the args hold).
 *
 * NCCL's public functions are weak aliases of its pncclX ones; the public
 * names are hooked, so a program calling pnccl* directly is not seen.
 */
#ifndef TP_NCCL_APIS_H
#define TP_NCCL_APIS_H

#include <stdint.h>

#include "record/api.h"

/* What a collective's args hold, for its formatter. */
#define TP_NCCL_OP	(1u << 0)	/* a reduction op */
#define TP_NCCL_ROOT	(1u << 1)	/* a root rank */
#define TP_NCCL_PEER	(1u << 2)	/* a peer rank (point-to-point) */
#define TP_NCCL_IN_X	(1u << 3)	/* the send buffer is bytes x size */
#define TP_NCCL_OUT_X	(1u << 4)	/* the receive buffer is bytes x size */

#define TP_NCCL_APIS(X)                                                   \
	X(ALL_REDUCE, "ncclAllReduce", coll, TP_NCCL_OP)                  \
	X(ALL_GATHER, "ncclAllGather", coll, TP_NCCL_OUT_X)               \
	X(REDUCE_SCATTER, "ncclReduceScatter", coll,                      \
	  TP_NCCL_OP | TP_NCCL_IN_X)                                      \
	X(BROADCAST, "ncclBroadcast", coll, TP_NCCL_ROOT)                 \
	X(BCAST, "ncclBcast", coll, TP_NCCL_ROOT)                         \
	X(REDUCE, "ncclReduce", coll, TP_NCCL_OP | TP_NCCL_ROOT)          \
	X(ALL_TO_ALL, "ncclAlltoAll", coll, TP_NCCL_IN_X | TP_NCCL_OUT_X) \
	X(GATHER, "ncclGather", coll, TP_NCCL_ROOT | TP_NCCL_OUT_X)       \
	X(SCATTER, "ncclScatter", coll, TP_NCCL_ROOT | TP_NCCL_IN_X)      \
	X(SEND, "ncclSend", coll, TP_NCCL_PEER)                           \
	X(RECV, "ncclRecv", coll, TP_NCCL_PEER)                           \
	X(GROUP_START, "ncclGroupStart", group, 0)                        \
	X(GROUP_END, "ncclGroupEnd", group, 0)                            \
	X(GROUP_SIMULATE_END, "ncclGroupSimulateEnd", group, 0)           \
	X(INIT_RANK, "ncclCommInitRank", init, 0)                         \
	X(INIT_RANK_CONFIG, "ncclCommInitRankConfig", init, 0)            \
	X(INIT_RANK_SCALABLE, "ncclCommInitRankScalable", init, 0)        \
	X(INIT_ALL, "ncclCommInitAll", init_all, 0)                       \
	X(SPLIT, "ncclCommSplit", split, 0)                               \
	X(SHRINK, "ncclCommShrink", split, 0)                             \
	X(FINALIZE, "ncclCommFinalize", comm, 0)                          \
	X(DESTROY, "ncclCommDestroy", comm, 0)                            \
	X(ABORT, "ncclCommAbort", comm, 0)

enum tp_nccl_api {
#define X(id, name, fmt, what) TP_NCCL_##id,
	TP_NCCL_APIS(X)
#undef X
	TP_NCCL_N
};

#define TP_NCCL_ID(id) TP_API_ID(TP_TABLE_NCCL, TP_NCCL_##id)
/* The index in the table of a recorded id. */
#define TP_NCCL_INDEX(api) ((api) & ((1u << TP_API_TABLE_SHIFT) - 1))

/* Collectives and point-to-point calls, in e->a (the stream in
 * e->stream). rank and size are the communicator's, when it could be
 * read. */
struct tp_nccl_coll {
	uint64_t count;
	uint64_t comm;
	int32_t dtype;
	int32_t op;
	int32_t root;		/* root, or peer */
	int32_t rank;		/* -1: unknown */
	int32_t size;		/* 0: unknown */
	uint32_t group;		/* the group's sequence number, 0: none */
};

/* Communicator calls, in e->a. For an init call, comm is the new
 * communicator and rank/size are the rank and nranks passed; for the
 * others, comm is the one passed and rank/size are read from it. */
struct tp_nccl_comm {
	uint64_t comm;
	int32_t rank;		/* -1: unknown */
	int32_t size;		/* 0: unknown */
	uint32_t group;
	uint32_t n_comms;	/* InitAll: communicators in the extension */
	int32_t x;		/* Split: color; Shrink: excluded ranks */
	int32_t y;		/* Split: key; Shrink: flags */
};

/* Split and Shrink: the new communicator, in one extension slot. */
struct tp_nccl_new {
	uint64_t comm;
	int32_t rank;
	int32_t size;
};

/* InitAll: the new communicators, in extension slots after the record. */
#define TP_NCCL_COMMS_PER_SLOT (TP_EV_SLOT_BYTES / sizeof(uint64_t))
#define TP_NCCL_MAX_LISTED (TP_NCCL_COMMS_PER_SLOT * TP_EV_EXT_MAX)

/* ncclGroupStart/End, in e->a. */
struct tp_nccl_group {
	uint32_t group;		/* 0: the call was outside any group */
	uint32_t depth;		/* 1: the outermost group */
	uint32_t calls;		/* outermost end: calls in the group */
};

_Static_assert(sizeof(struct tp_nccl_coll) <= 5 * sizeof(uint64_t),
	       "collective args must fit in the record");
_Static_assert(sizeof(struct tp_nccl_comm) <= 5 * sizeof(uint64_t),
	       "communicator args must fit in the record");
_Static_assert(sizeof(struct tp_nccl_group) <= 5 * sizeof(uint64_t),
	       "group args must fit in the record");
_Static_assert(sizeof(struct tp_nccl_new) <= TP_EV_SLOT_BYTES,
	       "the new communicator must fit in one slot");

#endif
