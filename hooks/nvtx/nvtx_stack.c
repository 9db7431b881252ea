/* hooks/nvtx/: the nvtx hooks, on hooks/ (resolve.c: how the real
 * functions are found) and every library folder below it. */
/* The recording thread's side of range pairing: each thread's pushes
 * still open, whether recording was on for each and what became of its
 * record, so that a pop is recorded exactly when its push was (with the
 * push's id: the writer pairs by id, never by order), and counted as
 * dropped when its push was. Start/end ranges cross threads: their id
 * carries their fate instead (TP_NVTX_STATE_*), and an end that cannot
 * be recorded although its start was is noted here for the writer, so
 * that it drops the start rather than leave it open.
 *
 * A thread's stack is mapped at its first push (TP_NVTX_MAX_DEPTH
 * entries of 16 bytes; one page is touched for the first 256 levels)
 * and unmapped at its exit. The program's thread owns it: no lock. */
#include <pthread.h>
#include <string.h>
#include <sys/mman.h>

#include "nvtx.h"

struct open_range {
	uint64_t domain;
	uint32_t id;
	uint8_t state;		/* TP_NVTX_STATE_* */
	uint8_t k;		/* slots kept back for its pop */
};

struct stack {
	uint32_t n;
	uint32_t next_id;
	uint64_t too_deep;	/* pushes past the depth still open */
	struct open_range v[TP_NVTX_MAX_DEPTH];
};

static __thread struct stack *stk __attribute__((tls_model("initial-exec")));
static pthread_key_t key;
static pthread_once_t key_once = PTHREAD_ONCE_INIT;
static int have_key;
static uint64_t too_deep;	/* pushes past the depth, in all */
static uint64_t dropped[TP_NVTX_N];

/* Ends lost although their start was recorded, for the writer. */
#define LOST_MAX 256
static uint64_t lost[LOST_MAX];
static uint64_t lost_n, lost_overflow;

static void unmap(void *p)
{
	munmap(p, sizeof(struct stack));
	stk = NULL;
}

static void make_key(void)
{
	have_key = !pthread_key_create(&key, unmap);
}

/* Mapped, not malloc'd: a first malloc on a thread reserves an arena
 * (ring.c says why that matters). */
static struct stack *stack_get(void)
{
	void *p;

	if (stk)
		return stk;
	p = mmap(NULL, sizeof(struct stack), PROT_READ | PROT_WRITE,
		 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (p == MAP_FAILED)
		return NULL;
	pthread_once(&key_once, make_key);
	if (!have_key || pthread_setspecific(key, p)) {
		munmap(p, sizeof(struct stack));
		return NULL;
	}
	stk = p;
	return stk;
}

int tp_nvtx_stack_push(uint64_t domain, unsigned k, uint32_t *id,
		       uint8_t **state)
{
	struct stack *s = stack_get();
	struct open_range *o;

	if (!s)
		return -1;
	if (s->n == TP_NVTX_MAX_DEPTH) {
		s->too_deep++;
		__atomic_add_fetch(&too_deep, 1, __ATOMIC_RELAXED);
		return -1;
	}
	o = &s->v[s->n++];
	o->domain = domain;
	o->id = ++s->next_id;
	if (!o->id)		/* 0 is "no push" in a pop's record */
		o->id = ++s->next_id;
	o->state = TP_NVTX_STATE_OFF;
	o->k = (uint8_t)k;
	*id = o->id;
	*state = &o->state;
	return 0;
}

int tp_nvtx_stack_pop(uint64_t domain, uint32_t *id, unsigned *state,
		      unsigned *k)
{
	struct stack *s = stk;
	unsigned i;

	if (!s)
		return 0;
	if (s->too_deep) {
		s->too_deep--;
		return -1;
	}
	for (i = s->n; i-- > 0;)
		if (s->v[i].domain == domain)
			break;
	if (i == (unsigned)-1)
		return 0;
	*id = s->v[i].id;
	*state = s->v[i].state;
	*k = s->v[i].k;
	memmove(&s->v[i], &s->v[i + 1], (s->n - i - 1) * sizeof(s->v[0]));
	s->n--;
	return 1;
}

/* In the child only the forking thread exists, with a new ring: what
 * its pushes recorded (and kept back) was the parent's. */
void tp_nvtx_stack_after_fork(void)
{
	unsigned i;

	if (stk)
		for (i = 0; i < stk->n; i++)
			stk->v[i].state = TP_NVTX_STATE_OFF;
	lost_n = lost_overflow = 0;
	memset(dropped, 0, sizeof(dropped));
	memset(lost, 0, sizeof(lost));
}

void tp_nvtx_dropped_add(unsigned api)
{
	__atomic_add_fetch(&dropped[api], 1, __ATOMIC_RELAXED);
}

uint64_t tp_nvtx_dropped(unsigned api)
{
	return __atomic_load_n(&dropped[api], __ATOMIC_RELAXED);
}

uint64_t tp_nvtx_too_deep(void)
{
	return __atomic_load_n(&too_deep, __ATOMIC_RELAXED);
}

void tp_nvtx_end_lost(uint64_t id)
{
	uint64_t zero;
	unsigned i;

	for (i = 0; i < LOST_MAX; i++) {
		zero = 0;
		if (__atomic_compare_exchange_n(&lost[i], &zero, id, 0,
						__ATOMIC_RELEASE,
						__ATOMIC_RELAXED)) {
			__atomic_add_fetch(&lost_n, 1, __ATOMIC_RELEASE);
			return;
		}
	}
	__atomic_add_fetch(&lost_overflow, 1, __ATOMIC_RELEASE);
}

uint64_t tp_nvtx_lost_seq(void)
{
	return __atomic_load_n(&lost_n, __ATOMIC_ACQUIRE) +
	       __atomic_load_n(&lost_overflow, __ATOMIC_ACQUIRE);
}

void tp_nvtx_lost_take(void (*fn)(void *arg, uint64_t id), void *arg,
		       uint64_t *overflow)
{
	uint64_t id;
	unsigned i;

	for (i = 0; i < LOST_MAX; i++) {
		id = __atomic_exchange_n(&lost[i], 0, __ATOMIC_ACQUIRE);
		if (id)
			fn(arg, id);
	}
	*overflow = __atomic_load_n(&lost_overflow, __ATOMIC_ACQUIRE);
}
