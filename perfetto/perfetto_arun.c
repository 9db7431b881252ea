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
 * back another string's bytes.
 *
 * Each arg is read as two 16-byte words, the value's with the bytes its
 * type leaves unset cleared (a uint sets 8 of the union's 16, an
 * array's count 4), which are hashed to a slot and compared whole with
 * the kept ones (then the string values' bytes): a switch on the type
 * per arg, in the hash and again in a field by field compare, was 488
 * instructions of a launch's 3100. The run predicted (the one that came
 * after the previous run last time) is compared first, which most often
 * saves the hash. */
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "perfetto_int.h"

/* An arg is read as words: (type, keylen) and key, then the value. */
_Static_assert(sizeof(enum tp_targ_type) == 4 &&
	       offsetof(struct tp_targ, keylen) == 4 &&
	       offsetof(struct tp_targ, key) == 8 &&
	       offsetof(struct tp_targ, v) == 16 &&
	       sizeof(struct tp_targ) == 32, "tp_targ: two 16-byte words");
_Static_assert(TP_TARG_MILLI < 16, "value masks: a type in 4 bits");

#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
#define LOW32 0xffffffffull
#else
#define LOW32 0xffffffff00000000ull
#endif
#define ALL ~0ull

/* The bytes of the value union each type sets (tev.h); the rest may
 * hold an earlier arg's. A type past TP_TARG_MILLI has no value the
 * encoder writes (put_annotation writes its name alone): none. The
 * index is the type's low 4 bits, the type itself is in the head word. */
static const pf_v2 val_mask[16] = {
	[TP_TARG_NULL] = { 0, 0 },
	[TP_TARG_BOOL] = { ALL, 0 },
	[TP_TARG_INT] = { ALL, 0 },
	[TP_TARG_UINT] = { ALL, 0 },
	[TP_TARG_U128] = { ALL, ALL },
	[TP_TARG_DOUBLE] = { ALL, 0 },
	[TP_TARG_STRING] = { ALL, ALL },	/* address and length */
	[TP_TARG_POINTER] = { ALL, 0 },
	[TP_TARG_ARRAY] = { LOW32, 0 },
	[TP_TARG_DICT] = { LOW32, 0 },
	[TP_TARG_JSON] = { ALL, ALL },
	[TP_TARG_MILLI] = { ALL, 0 },
};

/* An arg's words: (type, keylen) and key; the value, masked. */
static inline pf_v2 head_of(const struct tp_targ *t)
{
	pf_v2 h;

	memcpy(&h, t, sizeof(h));
	return h;
}

static inline pf_v2 val_of(const struct tp_targ *t)
{
	pf_v2 v;

	memcpy(&v, &t->v, sizeof(v));
	return v & val_mask[t->type & 15];
}

static unsigned run_slot(const struct tp_targ *a, uint32_t n)
{
	pf_v2 acc = { n, 0 };
	uint64_t h;
	uint32_t i;

	for (i = 0; i < n; i++)
		acc = (acc << 5) + acc + (head_of(&a[i]) ^ val_of(&a[i]));
	h = (acc[0] ^ acc[1] * 0xff51afd7ed558ccdull) * 0x9e3779b97f4a7c15ull;
	return (unsigned)(h >> 40) & (PF_ARUNS - 1);
}

/* The string values' bytes against the kept copies (their addresses
 * and lengths are equal: the words were). */
static int same_strs(const struct pf_arun *r, const struct tp_targ *a)
{
	const char *s = r->strs;
	uint32_t k;

	for (k = 0; k < r->nstr; k++) {
		const struct tp_targ *t = &a[r->stri[k]];

		if (memcmp(t->v.str.s, s, t->v.str.len))
			return 0;
		s += t->v.str.len;
	}
	return 1;
}

/* r holds these args in the current interning state. One branch for
 * the words of all args (their differences or-ed together). */
static int same_run(const struct pf_enc *p, const struct pf_arun *r,
		    const struct tp_targ *a, uint32_t n)
{
	pf_v2 d = { 0, 0 };
	uint32_t i;

	if (r->n != n || r->gen != p->gen)
		return 0;
#pragma GCC unroll 2
	for (i = 0; i < n; i++) {
		pf_v2 h = head_of(&a[i]), v;

		memcpy(&v, &a[i].v, sizeof(v));
		/* The kept type's mask: another type differs in the head. */
		d |= (h ^ r->w[i].head) | ((v & r->w[i].mask) ^ r->w[i].val);
	}
	return !(d[0] | d[1]) && same_strs(r, a);
}

/* Keeps the run's words, string bytes and encoding, if they fit; else
 * the slot stays empty. */
static void keep_run(struct pf_enc *p, struct pf_arun *r,
		     const struct tp_targ *a, uint32_t n,
		     const char *bytes, size_t len)
{
	size_t used = 0;
	uint32_t i;

	r->n = 0;
	r->nstr = 0;
	r->seen = 0;
	if (len > sizeof(r->bytes))
		return;
	for (i = 0; i < n; i++) {
		r->w[i].head = head_of(&a[i]);
		r->w[i].val = val_of(&a[i]);
		r->w[i].mask = val_mask[a[i].type & 15];
		if (!pf_targ_has_str(a[i].type))
			continue;
		if (a[i].v.str.len > sizeof(r->strs) - used)
			return;
		memcpy(r->strs + used, a[i].v.str.s, a[i].v.str.len);
		used += a[i].v.str.len;
		r->stri[r->nstr++] = (uint8_t)i;
	}
	memcpy(r->bytes, bytes, len);
	r->len = (uint32_t)len;
	r->gen = p->gen;
	r->n = n;
}

/* The run that followed, the last time, the run now followed in the
 * history: a training step launches the same kernels in the same order,
 * so after one step the next run is most often this one, found without
 * hashing. A run that came last time after another one (a run comes
 * several times in a step, each time followed by another) is not
 * enough: it was wrong for 9 in 10 of bench_writer's launches. */
static struct pf_arun *predicted(const struct pf_enc *p)
{
	uint64_t at = p->ahist_at;

	if (!at || at >= p->ahist_n || p->ahist_n - at > PF_AHIST)
		return NULL;
	return &p->arun[p->ahist[at & (PF_AHIST - 1)]];
}

/* r was used: the place followed moves on with it, or to r's last use. */
static void used(struct pf_enc *p, struct pf_arun *r, int was_predicted)
{
	if (!p->ahist)
		return;
	p->ahist_at = was_predicted ? p->ahist_at + 1 : r->seen;
	r->seen = p->ahist_n + 1;
	p->ahist[p->ahist_n++ & (PF_AHIST - 1)] = (uint16_t)(r - p->arun);
}

static int runs_made(struct pf_enc *p)
{
	if (p->arun)
		return 1;
	p->arun = calloc(PF_ARUNS, sizeof(*p->arun));
	/* Without the history, every run is found by its hash. */
	p->ahist = calloc(PF_AHIST, sizeof(*p->ahist));
	return p->arun != NULL;
}

void pf_put_stable(struct pf_enc *p, const struct tp_targ *a, uint32_t n)
{
	struct tp_buf *b = &p->e.out;
	size_t start = b->len;
	struct pf_arun *r;

	if (n > PF_ARUN_ARGS || !runs_made(p)) {
		pf_put_annotations(p, a, n);
		return;
	}
	r = predicted(p);
	if (r && same_run(p, r, a, n)) {
		tp_buf_put(b, (const char *)r->bytes, r->len);
		used(p, r, 1);
		return;
	}
	/* Two slots a run may take: a step's few hundred runs among 1024
	 * slots collide by the dozen, each pair sharing one slot evicting
	 * each other at every step. The one kept is the one used longest
	 * ago. */
	r = &p->arun[run_slot(a, n) & ~1u];
	if (!same_run(p, r, a, n) && !same_run(p, ++r, a, n)) {
		if (r[-1].seen < r->seen)
			r--;
		pf_put_annotations(p, a, n);
		if (!b->oom)
			keep_run(p, r, a, n, b->p + start, b->len - start);
	} else {
		tp_buf_put(b, (const char *)r->bytes, r->len);
	}
	used(p, r, 0);
}
