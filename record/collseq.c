/* record/: the recording core: records, per-thread rings, threads,
 * drops, the clock, the rings file; on files/ .. util/. */
#include <string.h>

#include "collseq.h"

static struct tp_collseq table[TP_COLLSEQ_MAX];
/* The entries claimed, in order: what a sync looks through. */
static uint16_t used[TP_COLLSEQ_MAX];
static uint32_t n_used;
uint32_t tp_coll_outstanding;

static void claimed(struct tp_collseq *e)
{
	uint32_t i = __atomic_fetch_add(&n_used, 1, __ATOMIC_ACQ_REL);

	if (i < TP_COLLSEQ_MAX)
		__atomic_store_n(&used[i], (uint16_t)(e - table),
				 __ATOMIC_RELEASE);
}

struct tp_collseq *tp_collseq_get(uint64_t comm)
{
	unsigned i, h = (unsigned)((comm >> 4) * 0x9e3779b1u);

	if (!comm)
		return NULL;
	for (i = 0; i < TP_COLLSEQ_MAX; i++) {
		struct tp_collseq *e = &table[(h + i) % TP_COLLSEQ_MAX];
		uint64_t cur = __atomic_load_n(&e->comm, __ATOMIC_ACQUIRE);

		if (cur == comm)
			return e;
		if (cur)
			continue;
		if (__atomic_compare_exchange_n(&e->comm, &cur, comm, 0,
						__ATOMIC_ACQ_REL,
						__ATOMIC_ACQUIRE)) {
			claimed(e);
			return e;
		}
		if (cur == comm)
			return e;
	}
	return NULL;
}

unsigned tp_collseq_n_used(void)
{
	uint32_t n = __atomic_load_n(&n_used, __ATOMIC_ACQUIRE);

	return n < TP_COLLSEQ_MAX ? n : TP_COLLSEQ_MAX;
}

/* NULL while the i-th claim is being noted. */
struct tp_collseq *tp_collseq_used_at(unsigned i)
{
	struct tp_collseq *e = &table[__atomic_load_n(&used[i],
						     __ATOMIC_ACQUIRE)];

	return __atomic_load_n(&e->comm, __ATOMIC_ACQUIRE) ? e : NULL;
}

struct tp_collseq *tp_collseq_table(unsigned *n)
{
	*n = TP_COLLSEQ_MAX;
	return table;
}

/* An outstanding collective that leaves the log is no longer counted. */
static void forget_rec(struct tp_coll_rec *r)
{
	__atomic_store_n(&r->seq, 0, __ATOMIC_RELEASE);
	if (__atomic_exchange_n(&r->state, 0, __ATOMIC_ACQ_REL) ==
	    TP_COLL_ENQUEUED)
		__atomic_sub_fetch(&tp_coll_outstanding, 1, __ATOMIC_RELAXED);
}

/* The entry stays claimed (probe chains stay intact) with its counts
 * reset: a communicator made later at this address starts from 0. */
void tp_collseq_forget(uint64_t comm)
{
	unsigned i, h = (unsigned)((comm >> 4) * 0x9e3779b1u);

	for (i = 0; comm && i < TP_COLLSEQ_MAX; i++) {
		struct tp_collseq *e = &table[(h + i) % TP_COLLSEQ_MAX];
		uint64_t cur = __atomic_load_n(&e->comm, __ATOMIC_ACQUIRE);

		if (!cur)
			return;
		if (cur != comm)
			continue;
		e->id = 0;
		e->rank = -1;
		e->size = 0;
		e->entered = e->completed = e->p2p = e->splits = 0;
		__atomic_store_n(&e->done, 0, __ATOMIC_RELAXED);
		e->last_name = NULL;
		for (i = 0; i < TP_COLLSEQ_LOG; i++)
			forget_rec(&e->log[i]);
		return;
	}
}

void tp_collseq_after_fork(void)
{
	memset(table, 0, sizeof(table));
	n_used = 0;
	tp_coll_outstanding = 0;
}

uint64_t tp_collseq_hash(const void *p, unsigned n, uint64_t seed)
{
	const unsigned char *b = p;
	uint64_t h = 0xcbf29ce484222325ull ^ seed;
	unsigned i;

	for (i = 0; i < n; i++) {
		h ^= b[i];
		h *= 0x100000001b3ull;
	}
	return h ? h : 1;
}

static const char *const dtypes[] = {
	"ncclInt8", "ncclUint8", "ncclInt32", "ncclUint32", "ncclInt64",
	"ncclUint64", "ncclFloat16", "ncclFloat32", "ncclFloat64",
	"ncclBfloat16", "ncclFloat8e4m3", "ncclFloat8e5m2",
};

const char *tp_nccl_dtype_str(int dtype)
{
	if (dtype < 0 || (unsigned)dtype >= sizeof(dtypes) / sizeof(*dtypes))
		return NULL;
	return dtypes[dtype];
}

static const char *const ops[] = {
	"ncclSum", "ncclProd", "ncclMax", "ncclMin", "ncclAvg",
};

const char *tp_nccl_op_str(int op)
{
	if (op < 0)
		return NULL;
	if ((unsigned)op >= sizeof(ops) / sizeof(*ops))
		return "custom";
	return ops[op];
}
int tp_hang_on;

static const char *const states[] = {
	"", "in call", "queued in group", "enqueued", "done",
};

const char *tp_coll_state_str(uint32_t state)
{
	return state < sizeof(states) / sizeof(*states) ? states[state] : "";
}
