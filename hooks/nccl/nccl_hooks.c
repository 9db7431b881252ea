/* hooks/nccl/: the nccl hooks, on hooks/ (resolve.c: how the real
 * functions are found) and every library folder below it. */
/* NCCL collectives, point-to-point calls and groups. */
#include <stddef.h>

#include "nccl_hooks.h"

/* Groups. NCCL keeps its group depth per thread, as we do. Only the
 * outermost ncclGroupStart opens a group (and numbers it); calls until
 * the matching ncclGroupEnd are enqueued and launched there. */

/* A group's record: its number (0 outside a group), the depth after the
 * call and, at the outermost end, how many calls it held. */
TP_NCCL_INLINE void fill_group(struct tp_event *e, uint32_t depth,
			       uint32_t calls)
{
	struct tp_nccl_group *g = (struct tp_nccl_group *)e->a.raw;

	g->group = depth ? tp_nccl_tls.seq : 0;
	g->depth = depth;
	g->calls = calls;
}

/* Group calls keep the thread's group state whether or not NCCL is
 * recorded; `group` holds the depth before the call. */
TP_NCCL_INLINE int group_enter(struct tp_nccl_call *k)
{
	if (!tp_nccl_guard())
		return 0;
	k->group = tp_nccl_tls.depth;
	k->r.t = NULL;		/* set when recorded */
	k->rec = tp_rec_begin(&k->r, TP_SRC_NCCL);
	return 1;
}

TP_NCCL_INLINE void group_started(ncclResult_t ret)
{
	struct tp_nccl_tls *s = &tp_nccl_tls;

	tp_nccl_leave();
	if (ret == ncclSuccess && !s->depth++) {
		if (!++s->seq)
			s->seq = 1;
		s->calls = 0;
	}
}

/* NCCL leaves the group whatever the outcome; the outermost end has
 * launched (or failed) what the group enqueued. */
TP_NCCL_INLINE void group_ended(const struct tp_nccl_call *k)
{
	tp_nccl_leave();
	if (k->group)
		tp_nccl_tls.depth = k->group - 1;
	if (k->group == 1 && tp_nccl_tls.n_queued)
		tp_nccl_hang_group_done();
}

TP_NCCL_INLINE void group_resolve(const struct tp_nccl_call *k)
{
	if (k->group == 1 && tp_nccl_tls.n_pending)
		tp_nccl_pending_resolve();
}

#define NCCL_RECORD(k, id, n_ext)                                        \
	((k).rec ? tp_rec_end_ext(&(k).r, TP_NCCL_ID(id), (int32_t)ret,  \
				  (n_ext))                               \
		 : NULL)

TP_HOOK_SHAPE(ncclResult_t, ncclGroupStart, tp_libs_nccl, TP_NCCL_MISSING,
	      (void), (), struct tp_nccl_call, group_enter(&tp_call),
	      group_started(ret), NCCL_RECORD(tp_call, GROUP_START, 0),
	      TP_KIND_OTHER, TP_NOTHING,
	      fill_group(e, tp_nccl_tls.depth, 0);)

/* ncclGroupEnd, and ncclGroupSimulateEnd which ends the group as well
 * (without launching it). */
#define NCCL_GROUP_END(name, id, params, args)                           \
	TP_HOOK_SHAPE(ncclResult_t, name, tp_libs_nccl, TP_NCCL_MISSING, \
		      params, args, struct tp_nccl_call,                 \
		      group_enter(&tp_call) &&                           \
		      (tp_nccl_hang_group(&tp_call), 1),                 \
		      group_ended(&tp_call),                             \
		      NCCL_RECORD(tp_call, id, 0), TP_KIND_OTHER,        \
		      group_resolve(&tp_call),                           \
		      fill_group(e, tp_call.group,                       \
				 tp_call.group == 1 ? tp_nccl_tls.calls : 0);)

NCCL_GROUP_END(ncclGroupEnd, GROUP_END, (void), ())
NCCL_GROUP_END(ncclGroupSimulateEnd, GROUP_SIMULATE_END,
	       (ncclSimInfo_t *sim), (sim))

/* Collectives and point-to-point calls. */

TP_NCCL_INLINE void fill_coll(struct tp_event *e,
			      const struct tp_nccl_call *k, size_t count,
			      ncclDataType_t dtype, int op, int root,
			      const void *comm, const void *stream)
{
	struct tp_nccl_coll *c = (struct tp_nccl_coll *)e->a.raw;

	e->stream = TP_NCCL_PTR(stream);
	c->count = count;
	c->comm = TP_NCCL_PTR(comm);
	c->dtype = (int32_t)dtype;
	c->op = op;
	c->root = root;
	c->rank = k->rank;
	c->size = k->size;
	c->group = k->group;
}

/* Send and receive are numbered apart from the collectives. */
#define NCCL_IS_P2P(id) (TP_NCCL_ID(id) == TP_NCCL_ID(SEND) ||          \
			 TP_NCCL_ID(id) == TP_NCCL_ID(RECV))

/* what: (count, dtype, op, root or peer, comm, stream); an op or root
 * of -1: the call has none (the hang dump leaves it out) */
#define NCCL_COLL(name, id, params, args, what)                         \
	TP_HOOK_SHAPE(ncclResult_t, name, tp_libs_nccl, TP_NCCL_MISSING, \
		      params, args, struct tp_nccl_call,                 \
		      tp_nccl_enter(&tp_call, comm) &&                   \
		      (tp_nccl_hang_coll(&tp_call, NCCL_IS_P2P(id), #name, \
					 what), 1),                      \
		      (tp_nccl_leave(), tp_nccl_hang_done(&tp_call, ret)),    \
		      NCCL_RECORD(tp_call, id, 0), TP_KIND_OTHER,        \
		      TP_NOTHING, fill_coll(e, &tp_call, what);)

#define NCCL_ARGS(...) __VA_ARGS__

NCCL_COLL(ncclAllReduce, ALL_REDUCE,
	  (const void *sbuf, void *rbuf, size_t count, ncclDataType_t dt,
	   ncclRedOp_t op, ncclComm_t comm, cudaStream_t st),
	  (sbuf, rbuf, count, dt, op, comm, st),
	  NCCL_ARGS(count, dt, op, -1, comm, st))
NCCL_COLL(ncclAllGather, ALL_GATHER,
	  (const void *sbuf, void *rbuf, size_t count, ncclDataType_t dt,
	   ncclComm_t comm, cudaStream_t st),
	  (sbuf, rbuf, count, dt, comm, st),
	  NCCL_ARGS(count, dt, -1, -1, comm, st))
NCCL_COLL(ncclReduceScatter, REDUCE_SCATTER,
	  (const void *sbuf, void *rbuf, size_t count, ncclDataType_t dt,
	   ncclRedOp_t op, ncclComm_t comm, cudaStream_t st),
	  (sbuf, rbuf, count, dt, op, comm, st),
	  NCCL_ARGS(count, dt, op, -1, comm, st))
NCCL_COLL(ncclBroadcast, BROADCAST,
	  (const void *sbuf, void *rbuf, size_t count, ncclDataType_t dt,
	   int root, ncclComm_t comm, cudaStream_t st),
	  (sbuf, rbuf, count, dt, root, comm, st),
	  NCCL_ARGS(count, dt, -1, root, comm, st))
NCCL_COLL(ncclBcast, BCAST,
	  (void *buf, size_t count, ncclDataType_t dt, int root,
	   ncclComm_t comm, cudaStream_t st),
	  (buf, count, dt, root, comm, st),
	  NCCL_ARGS(count, dt, -1, root, comm, st))
NCCL_COLL(ncclReduce, REDUCE,
	  (const void *sbuf, void *rbuf, size_t count, ncclDataType_t dt,
	   ncclRedOp_t op, int root, ncclComm_t comm, cudaStream_t st),
	  (sbuf, rbuf, count, dt, op, root, comm, st),
	  NCCL_ARGS(count, dt, op, root, comm, st))
NCCL_COLL(ncclAlltoAll, ALL_TO_ALL,
	  (const void *sbuf, void *rbuf, size_t count, ncclDataType_t dt,
	   ncclComm_t comm, cudaStream_t st),
	  (sbuf, rbuf, count, dt, comm, st),
	  NCCL_ARGS(count, dt, -1, -1, comm, st))
NCCL_COLL(ncclGather, GATHER,
	  (const void *sbuf, void *rbuf, size_t count, ncclDataType_t dt,
	   int root, ncclComm_t comm, cudaStream_t st),
	  (sbuf, rbuf, count, dt, root, comm, st),
	  NCCL_ARGS(count, dt, -1, root, comm, st))
NCCL_COLL(ncclScatter, SCATTER,
	  (const void *sbuf, void *rbuf, size_t count, ncclDataType_t dt,
	   int root, ncclComm_t comm, cudaStream_t st),
	  (sbuf, rbuf, count, dt, root, comm, st),
	  NCCL_ARGS(count, dt, -1, root, comm, st))
NCCL_COLL(ncclSend, SEND,
	  (const void *sbuf, size_t count, ncclDataType_t dt, int peer,
	   ncclComm_t comm, cudaStream_t st),
	  (sbuf, count, dt, peer, comm, st),
	  NCCL_ARGS(count, dt, -1, peer, comm, st))
NCCL_COLL(ncclRecv, RECV,
	  (void *rbuf, size_t count, ncclDataType_t dt, int peer,
	   ncclComm_t comm, cudaStream_t st),
	  (rbuf, count, dt, peer, comm, st),
	  NCCL_ARGS(count, dt, -1, peer, comm, st))
