/* hooks/nccl/: the nccl hooks, on hooks/ (resolve.c: how the real
 * functions are found) and every library folder below it. */
/* NCCL communicators: creation, split, finalize, destroy, abort. Each
 * communicator created is noted for the trace's distributedInfo. */
#include <string.h>

#include "nccl_hooks.h"

TP_NCCL_INLINE struct tp_nccl_comm *fill_comm(struct tp_event *e,
					      const struct tp_nccl_call *k,
					      uint64_t comm, int rank,
					      int size)
{
	struct tp_nccl_comm *c = (struct tp_nccl_comm *)e->a.raw;

	memset(c, 0, sizeof(*c));
	c->comm = comm;
	c->rank = rank;
	c->size = size;
	c->group = k->group;
	return c;
}

/* The communicator a creating call handed back, 0: none. */
TP_NCCL_INLINE uint64_t made(ncclResult_t ret, const ncclComm_t *out)
{
	return tp_nccl_started(ret) && out ? TP_NCCL_PTR(*out) : 0;
}

TP_NCCL_INLINE void note_made(ncclResult_t ret, const ncclComm_t *out,
			      int rank, int nranks)
{
	if (made(ret, out))
		tp_nccl_note(rank, nranks);
}

#define NCCL_RECORD(k, id, n_ext)                                        \
	((k).rec ? tp_rec_end_ext(&(k).r, TP_NCCL_ID(id), (int32_t)ret,  \
				  (n_ext))                               \
		 : NULL)

/* ncclCommInitRank and its variants: rank and nranks as passed, the new
 * communicator once NCCL handed it back. */
#define NCCL_INIT(name, id, params, args, out, rank, nranks, uid)        \
	TP_HOOK_SHAPE(ncclResult_t, name, tp_libs_nccl, TP_NCCL_MISSING, \
		      params, args, struct tp_nccl_call,                 \
		      tp_nccl_enter(&tp_call, NULL) &&                   \
		      (tp_nccl_hang_init(&tp_call, uid, nranks, rank), 1), \
		      tp_nccl_leave(),                                   \
		      NCCL_RECORD(tp_call, id, 0), TP_KIND_OTHER,        \
		      (note_made(ret, out, rank, nranks),                \
		       tp_nccl_hang_made(&tp_call, made(ret, out), rank, \
					 nranks)),                       \
		      fill_comm(e, &tp_call, made(ret, out), rank, nranks);)

NCCL_INIT(ncclCommInitRank, INIT_RANK,
	  (ncclComm_t *comm, int nranks, ncclUniqueId id, int rank),
	  (comm, nranks, id, rank), comm, rank, nranks, &id)
NCCL_INIT(ncclCommInitRankConfig, INIT_RANK_CONFIG,
	  (ncclComm_t *comm, int nranks, ncclUniqueId id, int rank,
	   ncclConfig_t *config),
	  (comm, nranks, id, rank, config), comm, rank, nranks, &id)
NCCL_INIT(ncclCommInitRankScalable, INIT_RANK_SCALABLE,
	  (ncclComm_t *comm, int nranks, int rank, int n_ids,
	   ncclUniqueId *ids, ncclConfig_t *config),
	  (comm, nranks, rank, n_ids, ids, config), comm, rank, nranks,
	  n_ids > 0 ? ids : NULL)

/* One process, ndev communicators: rank i on device i. The new ones are
 * listed in extension slots (up to TP_NCCL_MAX_LISTED), all noted. */
TP_NCCL_INLINE unsigned init_all_made(ncclResult_t ret,
				      const ncclComm_t *comms, int ndev)
{
	return ret == ncclSuccess && comms && ndev > 0 ? (unsigned)ndev : 0;
}

TP_NCCL_INLINE unsigned init_all_listed(ncclResult_t ret,
					const ncclComm_t *comms, int ndev)
{
	unsigned n = init_all_made(ret, comms, ndev);

	return n < TP_NCCL_MAX_LISTED ? n : TP_NCCL_MAX_LISTED;
}

TP_NCCL_INLINE void init_all_note(ncclResult_t ret, const ncclComm_t *comms,
				  int ndev)
{
	unsigned i, n = init_all_made(ret, comms, ndev);

	for (i = 0; i < n; i++)
		tp_nccl_note((int)i, (int)n);
}

TP_NCCL_INLINE void init_all_fill(struct tp_event *e, struct tp_nccl_call *k,
				  const ncclComm_t *comms, int ndev,
				  unsigned n)
{
	fill_comm(e, k, 0, -1, ndev)->n_comms = n;
	tp_rec_ext_copy(&k->r, 0, comms, n * sizeof(uint64_t));
}

TP_HOOK_SHAPE(ncclResult_t, ncclCommInitAll, tp_libs_nccl, TP_NCCL_MISSING,
	      (ncclComm_t *comms, int ndev, const int *devs),
	      (comms, ndev, devs), struct tp_nccl_call,
	      tp_nccl_enter(&tp_call, NULL), tp_nccl_leave(),
	      NCCL_RECORD(tp_call, INIT_ALL,
			  (init_all_listed(ret, comms, ndev) +
			   TP_NCCL_COMMS_PER_SLOT - 1) /
			  TP_NCCL_COMMS_PER_SLOT),
	      TP_KIND_OTHER, init_all_note(ret, comms, ndev),
	      init_all_fill(e, &tp_call, comms, ndev,
			    init_all_listed(ret, comms, ndev));)

/* ncclCommSplit and ncclCommShrink: the parent's rank and size (read
 * before the call), x and y, and the new communicator with its rank and
 * size once readable (read after the call, inside the event). One created
 * inside a group is readable only after the group's end: it is noted
 * then. */
struct nccl_derived {
	struct tp_rec r;	/* first, as the hook shape needs */
	struct tp_nccl_call k;
	struct tp_nccl_new n;
	int known;
	uint64_t child_id;	/* TPROF_HANG: the new one's id, 0: none */
};

/* TPROF_HANG: every rank of the parent splits it in the same order, so
 * the n-th split of a parent with color x (or n excluded for a shrink)
 * names the same new communicator on every rank that joins it. */
static inline uint64_t derived_id(const void *parent, int x)
{
	struct tp_collseq *q;
	uint64_t key[3];

	if (!tp_hang_on || !(q = tp_collseq_get(TP_NCCL_PTR(parent))) ||
	    !q->id)
		return 0;
	key[0] = q->id;
	key[1] = __atomic_add_fetch(&q->splits, 1, __ATOMIC_RELAXED);
	key[2] = (uint64_t)(int64_t)x;
	return tp_collseq_hash(key, sizeof(key), 1);
}

TP_NCCL_INLINE int derived_enter(struct nccl_derived *d, const void *parent,
				 int x)
{
	if (!tp_nccl_enter(&d->k, parent))
		return 0;
	d->r = d->k.r;
	d->child_id = derived_id(parent, x);
	return 1;
}

TP_NCCL_INLINE void derived_leave(struct nccl_derived *d, ncclResult_t ret,
				  const ncclComm_t *out)
{
	tp_nccl_leave();
	d->n.comm = made(ret, out);
	d->n.rank = -1;
	d->n.size = 0;
	d->known = d->n.comm &&
		   tp_nccl_comm_info(d->n.comm, &d->n.rank, &d->n.size);
	if (d->child_id && d->n.comm) {
		struct tp_collseq *q = tp_collseq_get(d->n.comm);

		if (q)
			q->id = d->child_id;
	}
}

TP_NCCL_INLINE void derived_fill(struct tp_event *e, struct nccl_derived *d,
				 const void *parent, int x, int y)
{
	struct tp_nccl_comm *c = fill_comm(e, &d->k, TP_NCCL_PTR(parent),
					   d->k.rank, d->k.size);

	c->x = x;
	c->y = y;
	memcpy(tp_rec_ext(&d->r, 1), &d->n, sizeof(d->n));
}

TP_NCCL_INLINE void derived_note(const struct nccl_derived *d)
{
	if (d->known)
		tp_nccl_note(d->n.rank, d->n.size);
	else if (d->n.comm)
		tp_nccl_pending_add(d->n.comm);
}

#define NCCL_DERIVED(name, id, params, args, parent, x, y, out)          \
	TP_HOOK_SHAPE(ncclResult_t, name, tp_libs_nccl, TP_NCCL_MISSING, \
		      params, args, struct nccl_derived,                 \
		      derived_enter(&tp_call, parent, x),                \
		      derived_leave(&tp_call, ret, out),                 \
		      tp_call.k.rec ? tp_rec_end_ext(&tp_call.r,         \
						     TP_NCCL_ID(id),     \
						     (int32_t)ret, 1)    \
				    : NULL,                              \
		      TP_KIND_OTHER, derived_note(&tp_call),             \
		      derived_fill(e, &tp_call, parent, x, y);)

NCCL_DERIVED(ncclCommSplit, SPLIT,
	     (ncclComm_t comm, int color, int key, ncclComm_t *newcomm,
	      ncclConfig_t *config),
	     (comm, color, key, newcomm, config), comm, color, key, newcomm)
NCCL_DERIVED(ncclCommShrink, SHRINK,
	     (ncclComm_t comm, int *excluded, int n_excluded,
	      ncclComm_t *newcomm, ncclConfig_t *config, int flags),
	     (comm, excluded, n_excluded, newcomm, config, flags), comm,
	     n_excluded, flags, newcomm)

/* Finalize, destroy, abort: the communicator's rank and size are read
 * before the call, which frees it (destroy, abort). */
TP_NCCL_INLINE void end_leave(ncclComm_t comm, int frees)
{
	tp_nccl_leave();
	if (frees && comm)
		tp_nccl_forget(TP_NCCL_PTR(comm));
}

#define NCCL_END(name, id, frees)                                         \
	TP_HOOK_SHAPE(ncclResult_t, name, tp_libs_nccl, TP_NCCL_MISSING,  \
		      (ncclComm_t comm), (comm), struct tp_nccl_call,     \
		      tp_nccl_enter(&tp_call, comm), end_leave(comm, frees), \
		      NCCL_RECORD(tp_call, id, 0), TP_KIND_OTHER,         \
		      TP_NOTHING,                                         \
		      fill_comm(e, &tp_call, TP_NCCL_PTR(comm), tp_call.rank, \
				tp_call.size);)

NCCL_END(ncclCommFinalize, FINALIZE, 0)
NCCL_END(ncclCommDestroy, DESTROY, 1)
NCCL_END(ncclCommAbort, ABORT, 1)
