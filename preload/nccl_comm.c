/* NCCL communicators: creation, split, finalize, destroy, abort. Each
 * communicator created is noted for the trace's distributedInfo. */
#include <stdio.h>
#include <string.h>

#include "trace/session.h"
#include "nccl_hooks.h"

static ncclResult_t (*real_ncclGetVersion)(int *);

/* "2.27.3": the code is X*10000+Y*100+Z since NCCL 2.9, X*1000+Y*100+Z
 * before. Empty when NCCL does not say. */
static void version_str(char *buf, size_t len)
{
	int code = 0;

	buf[0] = '\0';
	if (!TP_REAL_OK(ncclGetVersion, tp_libs_nccl) ||
	    real_ncclGetVersion(&code) != ncclSuccess || code <= 0)
		return;
	if (code >= 10000)
		snprintf(buf, len, "%d.%d.%d", code / 10000, code / 100 % 100,
			 code % 100);
	else
		snprintf(buf, len, "%d.%d.%d", code / 1000, code / 100 % 10,
			 code % 100);
}

void tp_nccl_note(int rank, int size)
{
	char version[32];

	if (!tp_sess.active)
		return;
	version_str(version, sizeof(version));
	tp_session_note_nccl(rank, size, version);
}

TP_NCCL_INLINE struct tp_nccl_comm *record_comm(struct tp_nccl_call *k,
						uint16_t api,
						ncclResult_t ret,
						unsigned n_ext,
						uint64_t comm, int rank,
						int size)
{
	struct tp_nccl_comm *c;
	struct tp_event *e;

	e = tp_rec_end_ext(&k->r, api, (int32_t)ret, n_ext);
	if (!e)
		return NULL;
	c = (struct tp_nccl_comm *)e->a.raw;
	memset(c, 0, sizeof(*c));
	c->comm = comm;
	c->rank = rank;
	c->size = size;
	c->group = k->group;
	tp_stack_maybe(e, TP_KIND_OTHER);
	return c;
}

/* ncclCommInitRank and its variants: rank and nranks as passed, the new
 * communicator once NCCL handed it back. */
TP_NCCL_INLINE void created_one(struct tp_nccl_call *k, uint16_t api,
				ncclResult_t ret, ncclComm_t *out, int rank,
				int nranks)
{
	uint64_t comm = tp_nccl_started(ret) && out ? TP_NCCL_PTR(*out) : 0;

	if (k->rec && record_comm(k, api, ret, 0, comm, rank, nranks))
		tp_rec_commit(&k->r);
	if (comm)
		tp_nccl_note(rank, nranks);
}

static ncclResult_t (*real_ncclCommInitRank)(ncclComm_t *, int, ncclUniqueId,
					     int);
TP_NCCL_EXPORT ncclResult_t ncclCommInitRank(ncclComm_t *comm, int nranks,
					     ncclUniqueId id, int rank)
{
	struct tp_nccl_call k;
	ncclResult_t ret;

	if (!TP_REAL_OK(ncclCommInitRank, tp_libs_nccl))
		return TP_NCCL_MISSING;
	if (!tp_nccl_enter(&k, NULL))
		return real_ncclCommInitRank(comm, nranks, id, rank);
	ret = real_ncclCommInitRank(comm, nranks, id, rank);
	tp_nccl_leave();
	created_one(&k, TP_NCCL_ID(INIT_RANK), ret, comm, rank, nranks);
	return ret;
}

static ncclResult_t (*real_ncclCommInitRankConfig)(ncclComm_t *, int,
						   ncclUniqueId, int,
						   ncclConfig_t *);
TP_NCCL_EXPORT ncclResult_t ncclCommInitRankConfig(ncclComm_t *comm,
						   int nranks,
						   ncclUniqueId id, int rank,
						   ncclConfig_t *config)
{
	struct tp_nccl_call k;
	ncclResult_t ret;

	if (!TP_REAL_OK(ncclCommInitRankConfig, tp_libs_nccl))
		return TP_NCCL_MISSING;
	if (!tp_nccl_enter(&k, NULL))
		return real_ncclCommInitRankConfig(comm, nranks, id, rank,
						   config);
	ret = real_ncclCommInitRankConfig(comm, nranks, id, rank, config);
	tp_nccl_leave();
	created_one(&k, TP_NCCL_ID(INIT_RANK_CONFIG), ret, comm, rank,
		    nranks);
	return ret;
}

static ncclResult_t (*real_ncclCommInitRankScalable)(ncclComm_t *, int, int,
						     int, ncclUniqueId *,
						     ncclConfig_t *);
TP_NCCL_EXPORT ncclResult_t ncclCommInitRankScalable(ncclComm_t *comm,
						     int nranks, int rank,
						     int n_ids,
						     ncclUniqueId *ids,
						     ncclConfig_t *config)
{
	struct tp_nccl_call k;
	ncclResult_t ret;

	if (!TP_REAL_OK(ncclCommInitRankScalable, tp_libs_nccl))
		return TP_NCCL_MISSING;
	if (!tp_nccl_enter(&k, NULL))
		return real_ncclCommInitRankScalable(comm, nranks, rank, n_ids,
						     ids, config);
	ret = real_ncclCommInitRankScalable(comm, nranks, rank, n_ids, ids,
					    config);
	tp_nccl_leave();
	created_one(&k, TP_NCCL_ID(INIT_RANK_SCALABLE), ret, comm, rank,
		    nranks);
	return ret;
}

/* One process, ndev communicators: rank i on device i. The new ones are
 * listed in extension slots (up to TP_NCCL_MAX_LISTED), all noted. */
static ncclResult_t (*real_ncclCommInitAll)(ncclComm_t *, int, const int *);
TP_NCCL_EXPORT ncclResult_t ncclCommInitAll(ncclComm_t *comms, int ndev,
					    const int *devs)
{
	struct tp_nccl_comm *c;
	struct tp_nccl_call k;
	ncclResult_t ret;
	int i, made;
	unsigned n;

	if (!TP_REAL_OK(ncclCommInitAll, tp_libs_nccl))
		return TP_NCCL_MISSING;
	if (!tp_nccl_enter(&k, NULL))
		return real_ncclCommInitAll(comms, ndev, devs);
	ret = real_ncclCommInitAll(comms, ndev, devs);
	tp_nccl_leave();
	made = ret == ncclSuccess && comms && ndev > 0 ? ndev : 0;
	n = (unsigned)made < TP_NCCL_MAX_LISTED ? (unsigned)made
						: TP_NCCL_MAX_LISTED;
	if (k.rec) {
		c = record_comm(&k, TP_NCCL_ID(INIT_ALL), ret,
				(n + TP_NCCL_COMMS_PER_SLOT - 1) /
				TP_NCCL_COMMS_PER_SLOT, 0, -1, ndev);
		if (c) {
			c->n_comms = n;
			tp_rec_ext_copy(&k.r, 0, comms, n * sizeof(uint64_t));
			tp_rec_commit(&k.r);
		}
	}
	for (i = 0; i < made; i++)
		tp_nccl_note(i, made);
	return ret;
}

/* ncclCommSplit and ncclCommShrink: the parent's rank and size (read
 * before the call), x and y, and the new communicator with its rank and
 * size once readable. One created inside a group is readable only after
 * the group's end: it is noted then. */
TP_NCCL_INLINE void derived(struct tp_nccl_call *k, uint16_t api,
			    ncclResult_t ret, const void *parent, int x,
			    int y, ncclComm_t *out)
{
	uint64_t comm = tp_nccl_started(ret) && out ? TP_NCCL_PTR(*out) : 0;
	struct tp_nccl_new n = { comm, -1, 0 };
	struct tp_nccl_comm *c = NULL;
	int known = 0;

	if (comm)
		known = tp_nccl_comm_info(comm, &n.rank, &n.size);
	if (k->rec)
		c = record_comm(k, api, ret, 1, TP_NCCL_PTR(parent), k->rank,
				k->size);
	if (c) {
		c->x = x;
		c->y = y;
		memcpy(tp_rec_ext(&k->r, 1), &n, sizeof(n));
		tp_rec_commit(&k->r);
	}
	if (known)
		tp_nccl_note(n.rank, n.size);
	else if (comm)
		tp_nccl_pending_add(comm);
}

static ncclResult_t (*real_ncclCommSplit)(ncclComm_t, int, int, ncclComm_t *,
					  ncclConfig_t *);
TP_NCCL_EXPORT ncclResult_t ncclCommSplit(ncclComm_t comm, int color, int key,
					  ncclComm_t *newcomm,
					  ncclConfig_t *config)
{
	struct tp_nccl_call k;
	ncclResult_t ret;

	if (!TP_REAL_OK(ncclCommSplit, tp_libs_nccl))
		return TP_NCCL_MISSING;
	if (!tp_nccl_enter(&k, comm))
		return real_ncclCommSplit(comm, color, key, newcomm, config);
	ret = real_ncclCommSplit(comm, color, key, newcomm, config);
	tp_nccl_leave();
	derived(&k, TP_NCCL_ID(SPLIT), ret, comm, color, key, newcomm);
	return ret;
}

static ncclResult_t (*real_ncclCommShrink)(ncclComm_t, int *, int,
					   ncclComm_t *, ncclConfig_t *, int);
TP_NCCL_EXPORT ncclResult_t ncclCommShrink(ncclComm_t comm, int *excluded,
					   int n_excluded,
					   ncclComm_t *newcomm,
					   ncclConfig_t *config, int flags)
{
	struct tp_nccl_call k;
	ncclResult_t ret;

	if (!TP_REAL_OK(ncclCommShrink, tp_libs_nccl))
		return TP_NCCL_MISSING;
	if (!tp_nccl_enter(&k, comm))
		return real_ncclCommShrink(comm, excluded, n_excluded, newcomm,
					   config, flags);
	ret = real_ncclCommShrink(comm, excluded, n_excluded, newcomm, config,
				  flags);
	tp_nccl_leave();
	derived(&k, TP_NCCL_ID(SHRINK), ret, comm, n_excluded, flags,
		newcomm);
	return ret;
}

/* Finalize, destroy, abort: the communicator's rank and size are read
 * before the call, which frees it (destroy, abort). */
#define NCCL_END(name, id, frees)                                         \
	static ncclResult_t (*real_##name)(ncclComm_t);                   \
	TP_NCCL_EXPORT ncclResult_t name(ncclComm_t comm)                 \
	{                                                                 \
		struct tp_nccl_call k;                                    \
		ncclResult_t ret;                                         \
                                                                          \
		if (!TP_REAL_OK(name, tp_libs_nccl))                      \
			return TP_NCCL_MISSING;                           \
		if (!tp_nccl_enter(&k, comm))                             \
			return real_##name(comm);                         \
		ret = real_##name(comm);                                  \
		tp_nccl_leave();                                          \
		if (frees && comm)                                        \
			tp_nccl_forget(TP_NCCL_PTR(comm));                \
		if (k.rec && record_comm(&k, TP_NCCL_ID(id), ret, 0,      \
					 TP_NCCL_PTR(comm), k.rank,       \
					 k.size))                         \
			tp_rec_commit(&k.r);                              \
		return ret;                                               \
	}

NCCL_END(ncclCommFinalize, FINALIZE, 0)
NCCL_END(ncclCommDestroy, DESTROY, 1)
NCCL_END(ncclCommAbort, ABORT, 1)
