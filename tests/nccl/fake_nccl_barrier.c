/* The stand-in NCCL's meeting of ranks (FAKE_NCCL_BARRIER=DIR): the
 * ranks, separate processes, post where they are in DIR/nccl.shm, a file
 * they all map, and wake each other with a futex in it; a collective is
 * a kernel on the simulated GPU (tests/sim/) that runs until a proxy
 * thread saw every rank enter it. */
#define _GNU_SOURCE
#include <cuda.h>
#include <dlfcn.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/futex.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "fake_nccl_barrier.h"

#define COMMS 64		/* communicators (and inits) of a job */
#define RANKS 128
#define WIN 8			/* a rank is at most 2 ahead of another */

struct post {
	uint32_t seq;		/* written last: 0 while being written */
	char what[60];
};

struct comm {
	uint64_t id;		/* hash of the key, 0: free */
	struct post p[RANKS][WIN];
};

struct shm {
	uint32_t gen;		/* futex: bumped by every post */
	uint32_t pad;
	struct comm c[COMMS];
};

static struct shm *shm;
static pthread_once_t shm_once = PTHREAD_ONCE_INIT;

int fb_on(void)
{
	return getenv("FAKE_NCCL_BARRIER") != NULL;
}

static void fail(const char *why)
{
	fprintf(stderr, "fake NCCL: %s\n", why);
	abort();
}

static void shm_map(void)
{
	char path[4200];
	int fd;

	snprintf(path, sizeof(path), "%s/nccl.shm",
		 getenv("FAKE_NCCL_BARRIER"));
	fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0644);
	if (fd < 0 || ftruncate(fd, sizeof(struct shm)) < 0)
		fail("cannot make FAKE_NCCL_BARRIER/nccl.shm");
	shm = mmap(NULL, sizeof(struct shm), PROT_READ | PROT_WRITE,
		   MAP_SHARED, fd, 0);
	close(fd);
	if (shm == MAP_FAILED)
		fail("cannot map FAKE_NCCL_BARRIER/nccl.shm");
}

static uint64_t hash(const char *s)
{
	uint64_t h = 0xcbf29ce484222325ull;

	for (; *s; s++)
		h = (h ^ (unsigned char)*s) * 0x100000001b3ull;
	return h ? h : 1;
}

/* The communicator key's entry, claimed by the first rank to come. */
static struct comm *comm_of(const char *key)
{
	uint64_t id = hash(key), cur;
	unsigned i, k;

	pthread_once(&shm_once, shm_map);
	for (i = 0; i < COMMS; i++) {
		k = (unsigned)(id + i) % COMMS;
		cur = 0;
		if (__atomic_compare_exchange_n(&shm->c[k].id, &cur, id, 0,
						__ATOMIC_ACQ_REL,
						__ATOMIC_ACQUIRE) || cur == id)
			return &shm->c[k];
	}
	fail("too many communicators for FAKE_NCCL_BARRIER");
	return NULL;
}

static void futex(uint32_t *w, int op, uint32_t val, int ms)
{
	struct timespec ts = { ms / 1000, (long)(ms % 1000) * 1000000 };

	syscall(SYS_futex, w, op, val, ms ? &ts : NULL, NULL, 0);
}

static void post(struct comm *c, int rank, unsigned n, const char *what)
{
	struct post *p = &c->p[rank][n % WIN];

	__atomic_store_n(&p->seq, 0, __ATOMIC_RELEASE);
	snprintf(p->what, sizeof(p->what), "%s", what);
	__atomic_store_n(&p->seq, n, __ATOMIC_RELEASE);
	__atomic_add_fetch(&shm->gen, 1, __ATOMIC_SEQ_CST);
	futex(&shm->gen, FUTEX_WAKE, INT_MAX, 0);
}

static int posted(struct comm *c, int rank, unsigned n, const char *what)
{
	struct post *p = &c->p[rank][n % WIN];
	char got[sizeof(p->what)];

	if (__atomic_load_n(&p->seq, __ATOMIC_ACQUIRE) != n)
		return 0;
	memcpy(got, p->what, sizeof(got));
	got[sizeof(got) - 1] = '\0';
	return __atomic_load_n(&p->seq, __ATOMIC_ACQUIRE) == n &&
	       !strcmp(got, what);
}

/* Posts this rank's n-th entry and waits for every rank's; while they
 * disagree, for ever. */
static void meet_n(const char *key, int rank, int nranks, unsigned n,
		   const char *what)
{
	struct comm *c = comm_of(key);
	uint32_t gen;
	int r;

	if (nranks > RANKS || rank < 0 || rank >= nranks)
		fail("a rank FAKE_NCCL_BARRIER cannot hold");
	post(c, rank, n, what);
	for (;;) {
		gen = __atomic_load_n(&shm->gen, __ATOMIC_SEQ_CST);
		for (r = 0; r < nranks && posted(c, r, n, what); r++)
			;
		if (r == nranks)
			return;
		futex(&shm->gen, FUTEX_WAIT, gen, 50);
	}
}

void fb_meet(const char *key, int rank, int nranks, const char *what)
{
	char k[96];

	snprintf(k, sizeof(k), "%s.init", key);
	meet_n(k, rank, nranks, 1, what);
}

/* ---- the GPU side: a kernel per collective, a proxy thread ---- */

struct work {
	char key[64], what[60];
	int rank, nranks;
	unsigned n;
	uint32_t *flag;		/* the kernel runs until it is 1 */
	struct work *next;
};

static struct {
	pthread_mutex_t lock;
	pthread_cond_t cv;
	struct work *head, **tail;
	int started;
	CUmodule mod;
	CUresult (*launch)(CUfunction, unsigned, unsigned, unsigned,
			   unsigned, unsigned, unsigned, unsigned, CUstream,
			   void **, void **);
	CUresult (*get)(CUfunction *, CUmodule, const char *);
	void (*wait_for)(const volatile uint32_t *, uint32_t);
} G = { .lock = PTHREAD_MUTEX_INITIALIZER, .cv = PTHREAD_COND_INITIALIZER };

/* NCCL's proxy: the collectives in the order they were launched, each
 * done once every rank entered it. */
static void *proxy(void *arg)
{
	struct work *w;

	(void)arg;
	for (;;) {
		pthread_mutex_lock(&G.lock);
		while (!G.head)
			pthread_cond_wait(&G.cv, &G.lock);
		w = G.head;
		G.head = w->next;
		if (!G.head)
			G.tail = &G.head;
		pthread_mutex_unlock(&G.lock);
		meet_n(w->key, w->rank, w->nranks, w->n, w->what);
		__atomic_store_n(w->flag, 1, __ATOMIC_RELEASE);
		free(w);
	}
	return NULL;
}

static const char *const kernels =
	"kernels: ncclDevKernel_AllReduce ncclDevKernel_AllGather "
	"ncclDevKernel_ReduceScatter ncclDevKernel_Broadcast "
	"ncclDevKernel_Reduce ncclDevKernel_AlltoAll ncclDevKernel_Gather "
	"ncclDevKernel_Scatter";

/* The simulated driver, and NCCL's kernels loaded in it. */
static void gpu_start(void)
{
	CUresult (*init)(unsigned), (*load)(CUmodule *, const void *);
	void *h = dlopen("libcuda.so.1", RTLD_NOW | RTLD_GLOBAL);
	pthread_t t;

	*(void **)&init = h ? dlsym(h, "cuInit") : NULL;
	*(void **)&load = h ? dlsym(h, "cuModuleLoadData") : NULL;
	*(void **)&G.get = h ? dlsym(h, "cuModuleGetFunction") : NULL;
	*(void **)&G.launch = h ? dlsym(h, "cuLaunchKernel") : NULL;
	*(void **)&G.wait_for = h ? dlsym(h, "simNextKernelWaitsFor") : NULL;
	if (!init || !load || !G.get || !G.launch || !G.wait_for)
		fail("FAKE_NCCL_BARRIER needs the simulated GPU "
		     "(LD_LIBRARY_PATH=build/tests/sim/lib)");
	if (init(0) || load(&G.mod, kernels))
		fail("the simulated driver refused NCCL's kernels");
	G.tail = &G.head;
	if (pthread_create(&t, NULL, proxy, NULL))
		fail("no proxy thread");
	pthread_detach(t);
}

static pthread_once_t gpu_once = PTHREAD_ONCE_INIT;

void fb_launch(const char *key, int rank, int nranks, unsigned n,
	       const char *call, const char *what, void *stream)
{
	struct work *w = calloc(1, sizeof(*w));
	char name[64];
	CUfunction f;

	pthread_once(&gpu_once, gpu_start);
	if (!w || !(w->flag = calloc(1, sizeof(*w->flag))))
		fail("no memory");
	snprintf(w->key, sizeof(w->key), "%s", key);
	snprintf(w->what, sizeof(w->what), "%s", what);
	w->rank = rank;
	w->nranks = nranks;
	w->n = n;
	snprintf(name, sizeof(name), "ncclDevKernel_%s",
		 !strncmp(call, "nccl", 4) ? call + 4 : call);
	if (G.get(&f, G.mod, name))
		fail("no such kernel");
	G.wait_for(w->flag, 1);
	if (G.launch(f, 1, 1, 1, 64, 1, 1, 0, (CUstream)stream, NULL, NULL))
		fail("the simulated driver refused a launch");
	pthread_mutex_lock(&G.lock);
	*G.tail = w;
	G.tail = &w->next;
	pthread_cond_signal(&G.cv);
	pthread_mutex_unlock(&G.lock);
}
