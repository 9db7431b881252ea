/* A stand-in libnccl.so.2 for the tests: the success paths a machine
 * without a GPU cannot reach with the real NCCL (communicators with a
 * rank and a size, splits, groups, a nonblocking init), with the real
 * library's signatures and rules where tprof depends on them:
 *
 * - every public function is a weak alias of its pncclX, as in NCCL;
 * - a communicator created inside a group, or by a nonblocking init
 *   (config->blocking == 0, which returns ncclInProgress), is not ready
 *   until the outermost ncclGroupEnd: ncclCommGetAsyncError says
 *   ncclInProgress, and the getters and collectives fail on it (the
 *   getters count such asks: fake_nccl_unready_asks);
 * - ncclBcast calls ncclBroadcast through the PLT, as NCCL does (and
 *   ncclCommAbort calls ncclCommDestroy);
 * - communicators come from a LIFO pool, so one destroyed and the next
 *   created share an address (tprof must not reuse stale rank/size);
 * - split: the new communicator has parent size / 2 ranks (at least 1),
 *   this process being rank key % that; shrink: parent size - excluded
 *   ranks, the same rank when it still fits, else 0.
 *
 * FAKE_NCCL_VERSION overrides the version code (default 22703).
 *
 * FAKE_NCCL_BARRIER=DIR makes the ranks of a job (separate processes)
 * meet as NCCL's do, through a file DIR/nccl.shm they all map, and on
 * the simulated GPU (tests/sim/, found as libcuda.so.1):
 *
 * - ncclCommInitRank blocks until all nranks ranks called it with the
 *   same unique id (nccl.h: a blocking communicator's init);
 * - a collective only enqueues, as nccl.h says ("They return when
 *   operations have been enqueued on the CUDA stream"): it launches a
 *   kernel (ncclDevKernel_<call>) on its stream and returns ncclSuccess.
 *   The kernel runs on the GPU until every rank of the communicator
 *   entered the same collective (its n-th on the communicator: the same
 *   call, count, type, op and root), which a proxy thread per process
 *   finds out, in order, as NCCL's proxy does; when the ranks disagree,
 *   or one never comes, it never ends (NCCL then hangs, at best). So the
 *   host blocks where a program waits for the stream: in
 *   cudaStreamSynchronize, cudaDeviceSynchronize or cudaEventSynchronize
 *   (and work queued after the kernel waits too);
 * - inside a group nothing starts until the outermost ncclGroupEnd,
 *   which launches the group's collectives in call order and returns;
 * - send and receive do not wait; a split's communicator meets as its
 *   parent's does (its ranks: the split's rank rule above).
 *
 * Without it, nothing waits and nothing is launched.
 */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <nccl.h>

#include "fake_nccl_barrier.h"

#define EXPORT __attribute__((visibility("default")))
/* NCCL's public entry points are weak aliases of pnccl*. */
#define NCCL_API(name, params)                                           \
	EXPORT ncclResult_t name params                                  \
		__attribute__((weak, alias("p" #name)));                 \
	EXPORT ncclResult_t p##name params
#define POOL 64

struct ncclComm {
	int used;
	int rank;
	int nranks;
	ncclResult_t state;	/* ncclInProgress until ready */
	char key[64];		/* the unique id, in barrier names */
	unsigned seq;		/* collectives entered */
	unsigned splits;	/* splits of it made */
};

static struct ncclComm pool[POOL];
static struct ncclComm *free_list[POOL];
static int n_free = -1;
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static int unready_asks;

static __thread int depth;
/* Collectives enqueued in the open group (barrier mode). */
struct queued {
	struct ncclComm *comm;
	unsigned n;
	const char *call;
	char what[60];
	void *stream;
};
static __thread struct queued queue[POOL];
static __thread int n_queued;

static void launch(struct ncclComm *c, unsigned n, const char *call,
		   const char *what, void *stream);

static __thread struct ncclComm *waiting[POOL];
static __thread int n_waiting;

static struct ncclComm *comm_new(int rank, int nranks, int ready)
{
	struct ncclComm *c = NULL;
	int i;

	pthread_mutex_lock(&lock);
	if (n_free < 0)
		for (n_free = 0, i = POOL - 1; i >= 0; i--)
			free_list[n_free++] = &pool[i];
	if (n_free > 0)
		c = free_list[--n_free];
	pthread_mutex_unlock(&lock);
	if (!c)
		return NULL;
	c->used = 1;
	c->rank = rank;
	c->nranks = nranks;
	c->state = ready && !depth ? ncclSuccess : ncclInProgress;
	if (c->state == ncclInProgress && n_waiting < POOL)
		waiting[n_waiting++] = c;
	return c;
}

static void comm_free(struct ncclComm *c)
{
	c->used = 0;
	pthread_mutex_lock(&lock);
	free_list[n_free++] = c;
	pthread_mutex_unlock(&lock);
}

static int usable(const struct ncclComm *c)
{
	return c && c->used && c->state == ncclSuccess;
}

EXPORT int fake_nccl_unready_asks(void)
{
	return __atomic_load_n(&unready_asks, __ATOMIC_RELAXED);
}

NCCL_API(ncclGetVersion, (int *version))
{
	const char *v = getenv("FAKE_NCCL_VERSION");

	if (!version)
		return ncclInvalidArgument;
	*version = v ? atoi(v) : 22703;
	return ncclSuccess;
}

NCCL_API(ncclGetUniqueId, (ncclUniqueId *id))
{
	if (!id)
		return ncclInvalidArgument;
	memset(id, 0, sizeof(*id));
	return ncclSuccess;
}

static ncclResult_t init(ncclComm_t *comm, int nranks, int rank, int ready)
{
	if (!comm || nranks < 1 || rank < 0 || rank >= nranks)
		return ncclInvalidArgument;
	*comm = comm_new(rank, nranks, ready);
	if (!*comm)
		return ncclSystemError;
	(*comm)->key[0] = '\0';
	(*comm)->seq = 0;
	(*comm)->splits = 0;
	return (*comm)->state == ncclSuccess || depth ? ncclSuccess
						      : ncclInProgress;
}

/* The id's first bytes, hex: its name in barrier files. */
static void id_key(const ncclUniqueId *id, char *key)
{
	int i;

	for (i = 0; i < 10; i++)
		sprintf(key + 2 * i, "%02x", (unsigned char)id->internal[i]);
}

NCCL_API(ncclCommInitRank, (ncclComm_t *comm, int nranks,
				     ncclUniqueId id, int rank))
{
	char key[24], what[32];
	ncclResult_t ret;

	if (fb_on() && nranks > 0 && rank >= 0 && rank < nranks) {
		id_key(&id, key);
		snprintf(what, sizeof(what), "init %d", nranks);
		fb_meet(key, rank, nranks, what);
	}
	ret = init(comm, nranks, rank, 1);
	if (ret == ncclSuccess)
		id_key(&id, (*comm)->key);
	return ret;
}

NCCL_API(ncclCommInitRankConfig, (ncclComm_t *comm, int nranks,
					   ncclUniqueId id, int rank,
					   ncclConfig_t *config))
{
	(void)id;
	return init(comm, nranks, rank, !config || config->blocking != 0);
}

NCCL_API(ncclCommInitRankScalable, (ncclComm_t *comm, int nranks,
					     int rank, int n_ids,
					     ncclUniqueId *ids,
					     ncclConfig_t *config))
{
	if (n_ids < 1 || !ids)
		return ncclInvalidArgument;
	return init(comm, nranks, rank, !config || config->blocking != 0);
}

NCCL_API(ncclCommInitAll, (ncclComm_t *comms, int ndev,
				    const int *devs))
{
	int i;

	(void)devs;
	if (!comms || ndev < 1)
		return ncclInvalidArgument;
	for (i = 0; i < ndev; i++)
		if (init(&comms[i], ndev, i, 1) != ncclSuccess)
			return ncclSystemError;
	return ncclSuccess;
}

NCCL_API(ncclCommSplit, (ncclComm_t comm, int color, int key,
				  ncclComm_t *newcomm, ncclConfig_t *config))
{
	ncclResult_t ret;
	int size;

	(void)config;
	if (!usable(comm) || !newcomm)
		return ncclInvalidArgument;
	if (color == NCCL_SPLIT_NOCOLOR) {
		*newcomm = NULL;
		return ncclSuccess;
	}
	size = comm->nranks / 2 > 0 ? comm->nranks / 2 : 1;
	ret = init(newcomm, size, (key < 0 ? -key : key) % size, 1);
	/* Named, in barrier mode, after its parent, the split's order and
	 * its color, as every rank that joins it sees them. */
	comm->splits++;
	if (ret == ncclSuccess && comm->key[0])
		snprintf((*newcomm)->key, sizeof((*newcomm)->key), "%.20ss%uc%d",
			 comm->key, comm->splits, color);
	return ret;
}

NCCL_API(ncclCommShrink, (ncclComm_t comm, int *excluded,
				   int n_excluded, ncclComm_t *newcomm,
				   ncclConfig_t *config, int flags))
{
	int size;

	(void)config;
	(void)flags;
	if (!usable(comm) || !newcomm || n_excluded < 0 ||
	    (n_excluded && !excluded) || n_excluded >= comm->nranks)
		return ncclInvalidArgument;
	size = comm->nranks - n_excluded;
	return init(newcomm, size, comm->rank < size ? comm->rank : 0, 1);
}

NCCL_API(ncclCommFinalize, (ncclComm_t comm))
{
	return usable(comm) ? ncclSuccess : ncclInvalidArgument;
}

NCCL_API(ncclCommDestroy, (ncclComm_t comm))
{
	if (!comm)
		return ncclSuccess;
	if (!comm->used)
		return ncclInvalidArgument;
	comm_free(comm);
	return ncclSuccess;
}

/* Through the PLT too: a nested hooked call tprof must not record. */
NCCL_API(ncclCommAbort, (ncclComm_t comm))
{
	return ncclCommDestroy(comm);
}

NCCL_API(ncclCommGetAsyncError, (ncclComm_t comm,
					  ncclResult_t *state))
{
	if (!comm || !state)
		return ncclInvalidArgument;
	*state = comm->state;
	return ncclSuccess;
}

static ncclResult_t getter(const struct ncclComm *c, int *out, int value)
{
	if (!c || !out)
		return ncclInvalidArgument;
	if (c->state != ncclSuccess) {
		__atomic_add_fetch(&unready_asks, 1, __ATOMIC_RELAXED);
		return ncclInvalidArgument;
	}
	*out = value;
	return ncclSuccess;
}

NCCL_API(ncclCommCount, (const ncclComm_t comm, int *count))
{
	return getter(comm, count, comm ? comm->nranks : 0);
}

NCCL_API(ncclCommUserRank, (const ncclComm_t comm, int *rank))
{
	return getter(comm, rank, comm ? comm->rank : 0);
}

NCCL_API(ncclRedOpCreatePreMulSum, (ncclRedOp_t *op, void *scalar,
					     ncclDataType_t dt,
					     ncclScalarResidence_t where,
					     ncclComm_t comm))
{
	(void)scalar;
	(void)dt;
	(void)where;
	if (!op || !usable(comm))
		return ncclInvalidArgument;
	*op = (ncclRedOp_t)(ncclNumOps + 7);
	return ncclSuccess;
}

NCCL_API(ncclGroupStart, (void))
{
	depth++;
	return ncclSuccess;
}

/* The outermost end completes what the group (or a nonblocking init
 * before it) started. */
NCCL_API(ncclGroupEnd, (void))
{
	int i;

	if (!depth)
		return ncclInvalidUsage;
	if (--depth)
		return ncclSuccess;
	for (i = 0; i < n_waiting; i++)
		waiting[i]->state = ncclSuccess;
	n_waiting = 0;
	for (i = 0; i < n_queued; i++)
		launch(queue[i].comm, queue[i].n, queue[i].call, queue[i].what,
		       queue[i].stream);
	n_queued = 0;
	return ncclSuccess;
}

/* Ends the group without launching it: what it started stays unready. */
NCCL_API(ncclGroupSimulateEnd, (ncclSimInfo_t *sim))
{
	if (!sim)
		return ncclInvalidArgument;
	if (!depth)
		return ncclInvalidUsage;
	depth--;
	sim->estimatedTime = 1.0f;
	return ncclSuccess;
}

/* The n-th collective on comm, launched on stream: it returns at once
 * and its kernel waits on the GPU for the other ranks. */
static void launch(struct ncclComm *c, unsigned n, const char *call,
		   const char *what, void *stream)
{
	fb_launch(c->key, c->rank, c->nranks, n, call, what, stream);
}

/* Numbered at the call, in call order; launched now, or at the group's
 * outermost end. what: the call and its args, which every rank must
 * agree on. */
static ncclResult_t coll(ncclComm_t comm, ncclDataType_t dt, size_t n,
			 int op, int root, const char *name, void *stream)
{
	struct queued *q;

	if (!usable(comm) || (int)dt < 0 || dt >= ncclNumTypes)
		return ncclInvalidArgument;
	if (!fb_on() || !comm->key[0] || !strcmp(name, "ncclSend") ||
	    !strcmp(name, "ncclRecv"))
		return ncclSuccess;
	if (depth && n_queued == POOL)
		return ncclInternalError;
	q = &queue[n_queued];
	q->comm = comm;
	q->n = ++comm->seq;
	q->call = name;
	q->stream = stream;
	snprintf(q->what, sizeof(q->what), "%s %zu %d %d %d", name, n,
		 (int)dt, op, root);
	if (depth)
		n_queued++;
	else
		launch(comm, q->n, q->call, q->what, q->stream);
	return ncclSuccess;
}

/* The buffers are not read: nothing is computed. */
#pragma GCC diagnostic ignored "-Wunused-parameter"
#define COLL(name, params, n, dt, op, root, comm, st)                   \
	NCCL_API(name, params)                                           \
	{                                                                \
		return coll(comm, dt, n, op, root, #name, st);           \
	}

COLL(ncclAllReduce, (const void *s, void *r, size_t n, ncclDataType_t dt,
		     ncclRedOp_t op, ncclComm_t comm, cudaStream_t st),
     n, dt, op, 0, comm, st)
COLL(ncclAllGather, (const void *s, void *r, size_t n, ncclDataType_t dt,
		     ncclComm_t comm, cudaStream_t st),
     n, dt, 0, 0, comm, st)
COLL(ncclReduceScatter, (const void *s, void *r, size_t n,
			 ncclDataType_t dt, ncclRedOp_t op, ncclComm_t comm,
			 cudaStream_t st),
     n, dt, op, 0, comm, st)
COLL(ncclBroadcast, (const void *s, void *r, size_t n, ncclDataType_t dt,
		     int root, ncclComm_t comm, cudaStream_t st),
     n, dt, 0, root, comm, st)
COLL(ncclReduce, (const void *s, void *r, size_t n, ncclDataType_t dt,
		  ncclRedOp_t op, int root, ncclComm_t comm, cudaStream_t st),
     n, dt, op, root, comm, st)
COLL(ncclAlltoAll, (const void *s, void *r, size_t n, ncclDataType_t dt,
		    ncclComm_t comm, cudaStream_t st),
     n, dt, 0, 0, comm, st)
COLL(ncclGather, (const void *s, void *r, size_t n, ncclDataType_t dt,
		  int root, ncclComm_t comm, cudaStream_t st),
     n, dt, 0, root, comm, st)
COLL(ncclScatter, (const void *s, void *r, size_t n, ncclDataType_t dt,
		   int root, ncclComm_t comm, cudaStream_t st),
     n, dt, 0, root, comm, st)
COLL(ncclSend, (const void *s, size_t n, ncclDataType_t dt, int peer,
		ncclComm_t comm, cudaStream_t st),
     n, dt, 0, peer, comm, st)
COLL(ncclRecv, (void *r, size_t n, ncclDataType_t dt, int peer,
		ncclComm_t comm, cudaStream_t st),
     n, dt, 0, peer, comm, st)

/* Through the PLT, as NCCL does: a nested hooked call. */
NCCL_API(ncclBcast, (void *buf, size_t n, ncclDataType_t dt, int root,
		     ncclComm_t comm, cudaStream_t st))
{
	return ncclBroadcast(buf, buf, n, dt, root, comm, st);
}
