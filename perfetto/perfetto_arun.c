/* perfetto/: the Perfetto protobuf encoder of typed events: packets,
 * interning, tracks, annotations; on encode/ and below. */
/* Runs of annotations that come again (perfetto_int.h, tp_tev's
 * stable_from/stable_to): a launch's kernel, grid, block, shared memory
 * and stream repeat from step to step of a training loop, and encoding
 * them (interning each name and value, a message per annotation) was
 * most of the Perfetto writer's time per launch. A run's bytes are kept
 * with a copy of its args and copied out again while the same values
 * come back in the same interning state (the bytes hold iids: a cleared
 * state, a new generation, makes every entry stale). A hit compares
 * every value, string bytes included, so a reused address never brings
 * back another string's bytes. */
#include <stdlib.h>
#include <string.h>

#include "perfetto_int.h"

/* The value's bits for the hash (a string's by address and length: the
 * writer hands the same cached kernel name over and over). */
static uint64_t value_bits(const struct tp_targ *t)
{
	uint64_t v = 0;

	switch (t->type) {
	case TP_TARG_STRING:
	case TP_TARG_JSON:
		return (uint64_t)(uintptr_t)t->v.str.s ^ t->v.str.len;
	case TP_TARG_U128:
		return (uint64_t)t->v.u128 ^ (uint64_t)(t->v.u128 >> 64);
	case TP_TARG_DOUBLE:
		memcpy(&v, &t->v.d, sizeof(v));
		return v;
	case TP_TARG_ARRAY:
	case TP_TARG_DICT:
		return t->v.n;
	case TP_TARG_NULL:
		return 0;
	default:
		return t->v.u;
	}
}

static unsigned run_slot(const struct tp_targ *a, uint32_t n)
{
	uint64_t h = n;
	uint32_t i;

	for (i = 0; i < n; i++)
		h = (h ^ (uint64_t)a[i].type ^ (uint64_t)(uintptr_t)a[i].key ^
		     value_bits(&a[i])) * 0x9e3779b97f4a7c15ull;
	return (unsigned)(h >> 40) & (PF_ARUNS - 1);
}

static int same_value(const struct tp_targ *x, const struct tp_targ *y)
{
	switch (x->type) {
	case TP_TARG_STRING:
	case TP_TARG_JSON:
		return x->v.str.len == y->v.str.len &&
		       !memcmp(x->v.str.s, y->v.str.s, x->v.str.len);
	case TP_TARG_U128:
		return x->v.u128 == y->v.u128;
	case TP_TARG_DOUBLE:
		return !memcmp(&x->v.d, &y->v.d, sizeof(x->v.d));
	case TP_TARG_ARRAY:
	case TP_TARG_DICT:
		return x->v.n == y->v.n;
	case TP_TARG_NULL:
		return 1;
	default:
		return x->v.u == y->v.u;
	}
}

/* Keys are static (the caller checks): their addresses name them. */
static int same_run(const struct pf_arun *r, const struct tp_targ *a,
		    uint32_t n)
{
	uint32_t i;

	if (r->n != n)
		return 0;
	for (i = 0; i < n; i++)
		if (r->a[i].type != a[i].type || r->a[i].key != a[i].key ||
		    r->a[i].keylen != a[i].keylen ||
		    !same_value(&r->a[i], &a[i]))
			return 0;
	return 1;
}

/* Keeps the run's args (string values copied) and its bytes, if they
 * fit; else the slot stays empty. */
static void keep_run(struct pf_enc *p, struct pf_arun *r,
		     const struct tp_targ *a, uint32_t n,
		     const char *bytes, size_t len)
{
	size_t used = 0;
	uint32_t i;

	r->n = 0;
	if (n > PF_ARUN_ARGS || len > sizeof(r->bytes))
		return;
	memcpy(r->a, a, n * sizeof(*a));
	for (i = 0; i < n; i++) {
		if (!pf_targ_has_str(a[i].type))
			continue;
		if (a[i].v.str.len > sizeof(r->strs) - used)
			return;
		memcpy(r->strs + used, a[i].v.str.s, a[i].v.str.len);
		r->a[i].v.str.s = r->strs + used;
		used += a[i].v.str.len;
	}
	memcpy(r->bytes, bytes, len);
	r->len = (uint32_t)len;
	r->gen = p->gen;
	r->n = n;
}

void pf_put_stable(struct pf_enc *p, const struct tp_targ *a, uint32_t n)
{
	struct tp_buf *b = &p->e.out;
	size_t start = b->len;
	struct pf_arun *r;

	if (!p->arun && !(p->arun = calloc(PF_ARUNS, sizeof(*p->arun)))) {
		pf_put_annotations(p, a, n);
		return;
	}
	r = &p->arun[run_slot(a, n)];

	if (r->n && r->gen == p->gen && same_run(r, a, n)) {
		tp_buf_put(b, (const char *)r->bytes, r->len);
		return;
	}
	pf_put_annotations(p, a, n);
	if (!b->oom)
		keep_run(p, r, a, n, b->p + start, b->len - start);
}
