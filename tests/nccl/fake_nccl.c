/* A stand-in libnccl.so.2 for the tests: the success paths a machine
 * without a GPU cannot reach with the real NCCL (communicators with a
 * rank and a size, splits, groups, a nonblocking init), with the real
 * library's signatures and rules where tprof depends on them:
 *
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
 * meet as NCCL's do, through files in DIR: ncclCommInitRank returns only
 * once all nranks ranks called it with the same unique id; a collective
 * (the n-th on its communicator) returns only once every rank of the
 * communicator entered its n-th one, and never when they disagree on the
 * call, count or type (NCCL then hangs, at best); inside a group the
 * collectives wait at the outermost ncclGroupEnd, where NCCL launches
 * them. Send and receive do not wait. A split's communicator meets as
 * its parent's does (its ranks: the split's rank rule above). Without
 * it, nothing waits.
 */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <nccl.h>

#define EXPORT __attribute__((visibility("default")))
#define POOL 64

struct ncclComm {
	int used;
	int rank;
	int nranks;
	ncclResult_t state;	/* ncclInProgress until ready */
	char key[64];		/* the unique id, in barrier file names */
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
	char what[96];
};
static __thread struct queued queue[POOL];
static __thread int n_queued;

static void pause_ms(int ms)
{
	struct timespec ts = { ms / 1000, (long)(ms % 1000) * 1000000 };

	nanosleep(&ts, NULL);
}

/* Writes DIR/NAME with text, whole (a rename), for the other ranks. */
static void post(const char *dir, const char *name, const char *text)
{
	char tmp[4200], path[4200];
	FILE *f;

	snprintf(tmp, sizeof(tmp), "%s/.%s.%d", dir, name, (int)getpid());
	snprintf(path, sizeof(path), "%s/%s", dir, name);
	f = fopen(tmp, "w");
	if (!f)
		abort();
	fputs(text, f);
	fclose(f);
	rename(tmp, path);
}

/* 1 when DIR/NAME exists, with its text in out. */
static int peek(const char *dir, const char *name, char *out, size_t len)
{
	char path[4200];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	f = fopen(path, "r");
	if (!f)
		return 0;
	if (!fgets(out, (int)len, f))
		out[0] = '\0';
	fclose(f);
	return 1;
}

/* Posts this rank's entry `tag` and waits for every rank's; while they
 * disagree, waits for ever. */
static void meet(const char *tag, int rank, int nranks, const char *what)
{
	const char *dir = getenv("FAKE_NCCL_BARRIER");
	char name[256], got[128];
	int r, agree;

	snprintf(name, sizeof(name), "%s.%d", tag, rank);
	post(dir, name, what);
	for (;;) {
		agree = 1;
		for (r = 0; r < nranks && agree; r++) {
			snprintf(name, sizeof(name), "%s.%d", tag, r);
			agree = peek(dir, name, got, sizeof(got)) &&
				!strcmp(got, what);
		}
		if (agree)
			return;
		pause_ms(2);
	}
}

static void coll_meet(struct ncclComm *c, const char *what)
{
	char tag[128];

	snprintf(tag, sizeof(tag), "%s.c%u", c->key, ++c->seq);
	meet(tag, c->rank, c->nranks, what);
}
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

EXPORT ncclResult_t ncclGetVersion(int *version)
{
	const char *v = getenv("FAKE_NCCL_VERSION");

	if (!version)
		return ncclInvalidArgument;
	*version = v ? atoi(v) : 22703;
	return ncclSuccess;
}

EXPORT ncclResult_t ncclGetUniqueId(ncclUniqueId *id)
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

EXPORT ncclResult_t ncclCommInitRank(ncclComm_t *comm, int nranks,
				     ncclUniqueId id, int rank)
{
	char key[24], tag[64], what[32];
	ncclResult_t ret;

	if (getenv("FAKE_NCCL_BARRIER") && nranks > 0 && rank >= 0 &&
	    rank < nranks) {
		id_key(&id, key);
		snprintf(tag, sizeof(tag), "%s.init", key);
		snprintf(what, sizeof(what), "init %d", nranks);
		meet(tag, rank, nranks, what);
	}
	ret = init(comm, nranks, rank, 1);
	if (ret == ncclSuccess)
		id_key(&id, (*comm)->key);
	return ret;
}

EXPORT ncclResult_t ncclCommInitRankConfig(ncclComm_t *comm, int nranks,
					   ncclUniqueId id, int rank,
					   ncclConfig_t *config)
{
	(void)id;
	return init(comm, nranks, rank, !config || config->blocking != 0);
}

EXPORT ncclResult_t ncclCommInitRankScalable(ncclComm_t *comm, int nranks,
					     int rank, int n_ids,
					     ncclUniqueId *ids,
					     ncclConfig_t *config)
{
	if (n_ids < 1 || !ids)
		return ncclInvalidArgument;
	return init(comm, nranks, rank, !config || config->blocking != 0);
}

EXPORT ncclResult_t ncclCommInitAll(ncclComm_t *comms, int ndev,
				    const int *devs)
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

EXPORT ncclResult_t ncclCommSplit(ncclComm_t comm, int color, int key,
				  ncclComm_t *newcomm, ncclConfig_t *config)
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

EXPORT ncclResult_t ncclCommShrink(ncclComm_t comm, int *excluded,
				   int n_excluded, ncclComm_t *newcomm,
				   ncclConfig_t *config, int flags)
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

EXPORT ncclResult_t ncclCommFinalize(ncclComm_t comm)
{
	return usable(comm) ? ncclSuccess : ncclInvalidArgument;
}

EXPORT ncclResult_t ncclCommDestroy(ncclComm_t comm)
{
	if (!comm)
		return ncclSuccess;
	if (!comm->used)
		return ncclInvalidArgument;
	comm_free(comm);
	return ncclSuccess;
}

/* Through the PLT too: a nested hooked call tprof must not record. */
EXPORT ncclResult_t ncclCommAbort(ncclComm_t comm)
{
	return ncclCommDestroy(comm);
}

EXPORT ncclResult_t ncclCommGetAsyncError(ncclComm_t comm,
					  ncclResult_t *state)
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

EXPORT ncclResult_t ncclCommCount(const ncclComm_t comm, int *count)
{
	return getter(comm, count, comm ? comm->nranks : 0);
}

EXPORT ncclResult_t ncclCommUserRank(const ncclComm_t comm, int *rank)
{
	return getter(comm, rank, comm ? comm->rank : 0);
}

EXPORT ncclResult_t ncclRedOpCreatePreMulSum(ncclRedOp_t *op, void *scalar,
					     ncclDataType_t dt,
					     ncclScalarResidence_t where,
					     ncclComm_t comm)
{
	(void)scalar;
	(void)dt;
	(void)where;
	if (!op || !usable(comm))
		return ncclInvalidArgument;
	*op = (ncclRedOp_t)(ncclNumOps + 7);
	return ncclSuccess;
}

EXPORT ncclResult_t ncclGroupStart(void)
{
	depth++;
	return ncclSuccess;
}

/* The outermost end completes what the group (or a nonblocking init
 * before it) started. */
EXPORT ncclResult_t ncclGroupEnd(void)
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
		coll_meet(queue[i].comm, queue[i].what);
	n_queued = 0;
	return ncclSuccess;
}

/* Ends the group without launching it: what it started stays unready. */
EXPORT ncclResult_t ncclGroupSimulateEnd(ncclSimInfo_t *sim)
{
	if (!sim)
		return ncclInvalidArgument;
	if (!depth)
		return ncclInvalidUsage;
	depth--;
	sim->estimatedTime = 1.0f;
	return ncclSuccess;
}

static ncclResult_t coll(ncclComm_t comm, ncclDataType_t dt, size_t n,
			 const char *name)
{
	char what[96];

	if (!usable(comm) || (int)dt < 0 || dt >= ncclNumTypes)
		return ncclInvalidArgument;
	if (!getenv("FAKE_NCCL_BARRIER") || !comm->key[0] ||
	    !strcmp(name, "ncclSend") || !strcmp(name, "ncclRecv"))
		return ncclSuccess;
	snprintf(what, sizeof(what), "%s %zu %d", name, n, (int)dt);
	if (!depth) {
		coll_meet(comm, what);
		return ncclSuccess;
	}
	if (n_queued == POOL)
		return ncclInternalError;
	queue[n_queued].comm = comm;
	memcpy(queue[n_queued++].what, what, sizeof(what));
	return ncclSuccess;
}

EXPORT ncclResult_t ncclAllReduce(const void *s, void *r, size_t n,
				  ncclDataType_t dt, ncclRedOp_t op,
				  ncclComm_t comm, cudaStream_t st)
{
	(void)s, (void)r, (void)n, (void)op, (void)st;
	return coll(comm, dt, n, __func__);
}

EXPORT ncclResult_t ncclAllGather(const void *s, void *r, size_t n,
				  ncclDataType_t dt, ncclComm_t comm,
				  cudaStream_t st)
{
	(void)s, (void)r, (void)n, (void)st;
	return coll(comm, dt, n, __func__);
}

EXPORT ncclResult_t ncclReduceScatter(const void *s, void *r, size_t n,
				      ncclDataType_t dt, ncclRedOp_t op,
				      ncclComm_t comm, cudaStream_t st)
{
	(void)s, (void)r, (void)n, (void)op, (void)st;
	return coll(comm, dt, n, __func__);
}

EXPORT ncclResult_t ncclBroadcast(const void *s, void *r, size_t n,
				  ncclDataType_t dt, int root,
				  ncclComm_t comm, cudaStream_t st)
{
	(void)s, (void)r, (void)n, (void)root, (void)st;
	return coll(comm, dt, n, __func__);
}

EXPORT ncclResult_t ncclBcast(void *buf, size_t n, ncclDataType_t dt,
			      int root, ncclComm_t comm, cudaStream_t st)
{
	return ncclBroadcast(buf, buf, n, dt, root, comm, st);
}

EXPORT ncclResult_t ncclReduce(const void *s, void *r, size_t n,
			       ncclDataType_t dt, ncclRedOp_t op, int root,
			       ncclComm_t comm, cudaStream_t st)
{
	(void)s, (void)r, (void)n, (void)op, (void)root, (void)st;
	return coll(comm, dt, n, __func__);
}

EXPORT ncclResult_t ncclAlltoAll(const void *s, void *r, size_t n,
				 ncclDataType_t dt, ncclComm_t comm,
				 cudaStream_t st)
{
	(void)s, (void)r, (void)n, (void)st;
	return coll(comm, dt, n, __func__);
}

EXPORT ncclResult_t ncclGather(const void *s, void *r, size_t n,
			       ncclDataType_t dt, int root, ncclComm_t comm,
			       cudaStream_t st)
{
	(void)s, (void)r, (void)n, (void)root, (void)st;
	return coll(comm, dt, n, __func__);
}

EXPORT ncclResult_t ncclScatter(const void *s, void *r, size_t n,
				ncclDataType_t dt, int root, ncclComm_t comm,
				cudaStream_t st)
{
	(void)s, (void)r, (void)n, (void)root, (void)st;
	return coll(comm, dt, n, __func__);
}

EXPORT ncclResult_t ncclSend(const void *s, size_t n, ncclDataType_t dt,
			     int peer, ncclComm_t comm, cudaStream_t st)
{
	(void)s, (void)n, (void)peer, (void)st;
	return coll(comm, dt, n, __func__);
}

EXPORT ncclResult_t ncclRecv(void *r, size_t n, ncclDataType_t dt, int peer,
			     ncclComm_t comm, cudaStream_t st)
{
	(void)r, (void)n, (void)peer, (void)st;
	return coll(comm, dt, n, __func__);
}
