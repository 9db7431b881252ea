/* NCCL collectives, point-to-point calls and groups. */
#include <stddef.h>

#include "nccl_hooks.h"

const char *const tp_libs_nccl[] = { "libnccl.so.2", "libnccl.so", NULL };

__thread struct tp_nccl_tls tp_nccl_tls
	__attribute__((tls_model("initial-exec")));
uint32_t tp_nccl_gen;

static ncclResult_t (*real_ncclCommGetAsyncError)(ncclComm_t,
						  ncclResult_t *);
static ncclResult_t (*real_ncclCommUserRank)(const ncclComm_t, int *);
static ncclResult_t (*real_ncclCommCount)(const ncclComm_t, int *);

static int ask_nccl(ncclComm_t c, int *rank, int *size)
{
	ncclResult_t state = ncclInProgress;

	if (!TP_REAL_OK(ncclCommGetAsyncError, tp_libs_nccl) ||
	    !TP_REAL_OK(ncclCommUserRank, tp_libs_nccl) ||
	    !TP_REAL_OK(ncclCommCount, tp_libs_nccl))
		return 0;
	if (real_ncclCommGetAsyncError(c, &state) != ncclSuccess ||
	    state != ncclSuccess)
		return 0;
	return real_ncclCommUserRank(c, rank) == ncclSuccess &&
	       real_ncclCommCount(c, size) == ncclSuccess;
}

int tp_nccl_ask(uint64_t comm, int32_t *rank, int32_t *size)
{
	struct tp_nccl_tls *s = &tp_nccl_tls;
	/* Read before asking: a communicator freed meanwhile is not cached
	 * as current. */
	uint32_t gen = __atomic_load_n(&tp_nccl_gen, __ATOMIC_ACQUIRE);
	struct tp_thread *self = tp_self;
	struct tp_nccl_known *k;
	int r = -1, n = 0, ok;

	/* NCCL's getters are tprof's calls, not the program's. */
	tp_self = tp_thread_internal();
	ok = ask_nccl((ncclComm_t)(uintptr_t)comm, &r, &n);
	tp_self = self;
	if (!ok || n <= 0 || r < 0 || r >= n)
		return 0;
	k = &s->cache[s->next++ % TP_NCCL_CACHE];
	k->comm = comm;
	k->gen = gen;
	k->rank = r;
	k->size = n;
	*rank = r;
	*size = n;
	return 1;
}

void tp_nccl_forget(uint64_t comm)
{
	struct tp_nccl_tls *s = &tp_nccl_tls;
	unsigned i, j;

	__atomic_add_fetch(&tp_nccl_gen, 1, __ATOMIC_RELEASE);
	for (i = j = 0; i < s->n_pending; i++)
		if (s->pending[i] != comm)
			s->pending[j++] = s->pending[i];
	s->n_pending = j;
}

void tp_nccl_pending_add(uint64_t comm)
{
	struct tp_nccl_tls *s = &tp_nccl_tls;
	unsigned i;

	/* Full: the oldest, whose group should have ended, gives way. */
	if (s->n_pending == TP_NCCL_PENDING) {
		for (i = 1; i < TP_NCCL_PENDING; i++)
			s->pending[i - 1] = s->pending[i];
		s->n_pending--;
	}
	s->pending[s->n_pending++] = comm;
}

/* Still unready ones (nonblocking) stay for the next group's end. */
void tp_nccl_pending_resolve(void)
{
	struct tp_nccl_tls *s = &tp_nccl_tls;
	unsigned i, j;
	int32_t rank, size;

	for (i = j = 0; i < s->n_pending; i++) {
		if (tp_nccl_comm_info(s->pending[i], &rank, &size))
			tp_nccl_note(rank, size);
		else
			s->pending[j++] = s->pending[i];
	}
	s->n_pending = j;
}

/* Groups. NCCL keeps its group depth per thread, as we do. Only the
 * outermost ncclGroupStart opens a group (and numbers it); calls until
 * the matching ncclGroupEnd are enqueued and launched there. */

TP_NCCL_INLINE void record_group(struct tp_rec *r, uint16_t api,
				 ncclResult_t ret, uint32_t depth,
				 uint32_t calls)
{
	struct tp_nccl_group *g;
	struct tp_event *e;

	e = tp_rec_end(r, api, (int32_t)ret);
	if (!e)
		return;
	g = (struct tp_nccl_group *)e->a.raw;
	g->group = depth ? tp_nccl_tls.seq : 0;
	g->depth = depth;
	g->calls = calls;
	tp_stack_maybe(e, TP_KIND_OTHER);
	tp_rec_commit(r);
}

static ncclResult_t (*real_ncclGroupStart)(void);
TP_NCCL_EXPORT ncclResult_t ncclGroupStart(void)
{
	struct tp_nccl_tls *s = &tp_nccl_tls;
	struct tp_rec r;
	ncclResult_t ret;
	int rec;

	if (!TP_REAL_OK(ncclGroupStart, tp_libs_nccl))
		return TP_NCCL_MISSING;
	if (!tp_nccl_guard())
		return real_ncclGroupStart();
	rec = tp_rec_begin(&r, TP_SRC_NCCL);
	ret = real_ncclGroupStart();
	tp_nccl_leave();
	if (ret == ncclSuccess && !s->depth++) {
		if (!++s->seq)
			s->seq = 1;
		s->calls = 0;
	}
	if (rec)
		record_group(&r, TP_NCCL_ID(GROUP_START), ret, s->depth, 0);
	return ret;
}

/* ncclGroupEnd, and ncclGroupSimulateEnd which ends the group as well
 * (without launching it). */
TP_NCCL_INLINE ncclResult_t group_end(ncclResult_t (*real)(ncclSimInfo_t *),
				      ncclSimInfo_t *sim, uint16_t api)
{
	struct tp_nccl_tls *s = &tp_nccl_tls;
	uint32_t depth = s->depth;
	struct tp_rec r;
	ncclResult_t ret;
	int rec;

	if (!tp_nccl_guard())
		return real(sim);
	rec = tp_rec_begin(&r, TP_SRC_NCCL);
	ret = real(sim);
	tp_nccl_leave();
	/* NCCL leaves the group whatever the outcome. */
	if (depth)
		s->depth = depth - 1;
	if (rec)
		record_group(&r, api, ret, depth, depth == 1 ? s->calls : 0);
	if (depth == 1 && s->n_pending)
		tp_nccl_pending_resolve();
	return ret;
}

static ncclResult_t (*real_ncclGroupEnd)(void);

static ncclResult_t call_group_end(ncclSimInfo_t *sim)
{
	(void)sim;
	return real_ncclGroupEnd();
}

TP_NCCL_EXPORT ncclResult_t ncclGroupEnd(void)
{
	if (!TP_REAL_OK(ncclGroupEnd, tp_libs_nccl))
		return TP_NCCL_MISSING;
	return group_end(call_group_end, NULL, TP_NCCL_ID(GROUP_END));
}

static ncclResult_t (*real_ncclGroupSimulateEnd)(ncclSimInfo_t *);
TP_NCCL_EXPORT ncclResult_t ncclGroupSimulateEnd(ncclSimInfo_t *sim)
{
	if (!TP_REAL_OK(ncclGroupSimulateEnd, tp_libs_nccl))
		return TP_NCCL_MISSING;
	return group_end(real_ncclGroupSimulateEnd, sim,
			 TP_NCCL_ID(GROUP_SIMULATE_END));
}

/* Collectives and point-to-point calls. */

TP_NCCL_INLINE void record_coll(struct tp_nccl_call *k, uint16_t api,
				ncclResult_t ret, size_t count,
				ncclDataType_t dtype, int op, int root,
				const void *comm, const void *stream)
{
	struct tp_nccl_coll *c;
	struct tp_event *e;

	e = tp_rec_end(&k->r, api, (int32_t)ret);
	if (!e)
		return;
	e->stream = TP_NCCL_PTR(stream);
	c = (struct tp_nccl_coll *)e->a.raw;
	c->count = count;
	c->comm = TP_NCCL_PTR(comm);
	c->dtype = (int32_t)dtype;
	c->op = op;
	c->root = root;
	c->rank = k->rank;
	c->size = k->size;
	c->group = k->group;
	tp_stack_maybe(e, TP_KIND_OTHER);
	tp_rec_commit(&k->r);
}

/* what: (count, dtype, op, root or peer, comm, stream) */
#define NCCL_COLL(name, id, params, args, what)                         \
	static ncclResult_t (*real_##name) params;                       \
	TP_NCCL_EXPORT ncclResult_t name params                          \
	{                                                                \
		struct tp_nccl_call k;                                   \
		ncclResult_t ret;                                        \
                                                                         \
		if (!TP_REAL_OK(name, tp_libs_nccl))                     \
			return TP_NCCL_MISSING;                          \
		if (!tp_nccl_enter(&k, comm))                            \
			return real_##name args;                         \
		ret = real_##name args;                                  \
		tp_nccl_leave();                                         \
		if (k.rec)                                               \
			record_coll(&k, TP_NCCL_ID(id), ret, what);      \
		return ret;                                              \
	}

#define NCCL_ARGS(...) __VA_ARGS__

NCCL_COLL(ncclAllReduce, ALL_REDUCE,
	  (const void *sbuf, void *rbuf, size_t count, ncclDataType_t dt,
	   ncclRedOp_t op, ncclComm_t comm, cudaStream_t st),
	  (sbuf, rbuf, count, dt, op, comm, st),
	  NCCL_ARGS(count, dt, op, 0, comm, st))
NCCL_COLL(ncclAllGather, ALL_GATHER,
	  (const void *sbuf, void *rbuf, size_t count, ncclDataType_t dt,
	   ncclComm_t comm, cudaStream_t st),
	  (sbuf, rbuf, count, dt, comm, st),
	  NCCL_ARGS(count, dt, 0, 0, comm, st))
NCCL_COLL(ncclReduceScatter, REDUCE_SCATTER,
	  (const void *sbuf, void *rbuf, size_t count, ncclDataType_t dt,
	   ncclRedOp_t op, ncclComm_t comm, cudaStream_t st),
	  (sbuf, rbuf, count, dt, op, comm, st),
	  NCCL_ARGS(count, dt, op, 0, comm, st))
NCCL_COLL(ncclBroadcast, BROADCAST,
	  (const void *sbuf, void *rbuf, size_t count, ncclDataType_t dt,
	   int root, ncclComm_t comm, cudaStream_t st),
	  (sbuf, rbuf, count, dt, root, comm, st),
	  NCCL_ARGS(count, dt, 0, root, comm, st))
NCCL_COLL(ncclBcast, BCAST,
	  (void *buf, size_t count, ncclDataType_t dt, int root,
	   ncclComm_t comm, cudaStream_t st),
	  (buf, count, dt, root, comm, st),
	  NCCL_ARGS(count, dt, 0, root, comm, st))
NCCL_COLL(ncclReduce, REDUCE,
	  (const void *sbuf, void *rbuf, size_t count, ncclDataType_t dt,
	   ncclRedOp_t op, int root, ncclComm_t comm, cudaStream_t st),
	  (sbuf, rbuf, count, dt, op, root, comm, st),
	  NCCL_ARGS(count, dt, op, root, comm, st))
NCCL_COLL(ncclAlltoAll, ALL_TO_ALL,
	  (const void *sbuf, void *rbuf, size_t count, ncclDataType_t dt,
	   ncclComm_t comm, cudaStream_t st),
	  (sbuf, rbuf, count, dt, comm, st),
	  NCCL_ARGS(count, dt, 0, 0, comm, st))
NCCL_COLL(ncclGather, GATHER,
	  (const void *sbuf, void *rbuf, size_t count, ncclDataType_t dt,
	   int root, ncclComm_t comm, cudaStream_t st),
	  (sbuf, rbuf, count, dt, root, comm, st),
	  NCCL_ARGS(count, dt, 0, root, comm, st))
NCCL_COLL(ncclScatter, SCATTER,
	  (const void *sbuf, void *rbuf, size_t count, ncclDataType_t dt,
	   int root, ncclComm_t comm, cudaStream_t st),
	  (sbuf, rbuf, count, dt, root, comm, st),
	  NCCL_ARGS(count, dt, 0, root, comm, st))
NCCL_COLL(ncclSend, SEND,
	  (const void *sbuf, size_t count, ncclDataType_t dt, int peer,
	   ncclComm_t comm, cudaStream_t st),
	  (sbuf, count, dt, peer, comm, st),
	  NCCL_ARGS(count, dt, 0, peer, comm, st))
NCCL_COLL(ncclRecv, RECV,
	  (void *rbuf, size_t count, ncclDataType_t dt, int peer,
	   ncclComm_t comm, cudaStream_t st),
	  (rbuf, count, dt, peer, comm, st),
	  NCCL_ARGS(count, dt, 0, peer, comm, st))
