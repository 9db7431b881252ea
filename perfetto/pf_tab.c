/* perfetto/: the Perfetto protobuf encoder of typed events: packets,
 * interning, tracks, annotations; on encode/ and below. */
/* The Perfetto encoder's bounded lookup table (pf_tab.h). */
#include <stdlib.h>
#include <string.h>

#include "pf_tab.h"

/* Eight bytes a step: kernel names are long, and hashed per event. */
static uint64_t hash_key(uint32_t kind, int64_t k1, int64_t k2,
			 const char *p, size_t n)
{
	const uint64_t mul = 0x9e3779b97f4a7c15ull;
	uint64_t h = (kind + 1) * mul, w;
	size_t i = 0;

	h = (h ^ (uint64_t)k1) * mul;
	h = (h ^ (uint64_t)k2) * mul;
	for (; i + 8 <= n; i += 8) {
		memcpy(&w, p + i, 8);
		h = (h ^ w) * mul;
		h ^= h >> 32;
	}
	w = n;
	if (i < n)
		memcpy(&w, p + i, n - i);	/* the tail, length in the rest */
	h = (h ^ w ^ ((uint64_t)n << 56)) * mul;
	h ^= h >> 29;
	return h ? h : 1;
}

/* Small at first and doubled as it fills (up to twice max), so a short
 * process's encoder (a fork child, an exec'd image) neither allocates
 * nor clears the room of a long one's. */
#define TAB_FIRST_CAP 256

int tp_pf_tab_init(struct tp_pf_tab *t, uint32_t max, size_t max_bytes)
{
	memset(t, 0, sizeof(*t));
	t->cap = TAB_FIRST_CAP;
	t->s = calloc(t->cap, sizeof(*t->s));
	t->max = max;
	t->max_bytes = max_bytes;
	return t->s ? 0 : -1;
}

/* Twice the slots, every entry moved by its stored hash; -1 when out of
 * memory (the table stays as it was). */
static int grow(struct tp_pf_tab *t)
{
	uint32_t cap = t->cap * 2, i, j;
	struct tp_pf_slot *s = calloc(cap, sizeof(*s));

	if (!s)
		return -1;
	for (i = 0; i < t->cap; i++) {
		if (!t->s[i].hash)
			continue;
		for (j = (uint32_t)t->s[i].hash & (cap - 1); s[j].hash;
		     j = (j + 1) & (cap - 1))
			;
		s[j] = t->s[i];
	}
	free(t->s);
	t->s = s;
	t->cap = cap;
	return 0;
}

void tp_pf_tab_free(struct tp_pf_tab *t)
{
	free(t->s);
	tp_buf_free(&t->strs);
	memset(t, 0, sizeof(*t));
}

void tp_pf_tab_clear(struct tp_pf_tab *t)
{
	memset(t->s, 0, (size_t)t->cap * sizeof(*t->s));
	t->n = 0;
	t->strs.len = 0;
}

static struct tp_pf_slot *probe(struct tp_pf_tab *t, uint64_t h,
				uint32_t kind, int64_t k1, int64_t k2,
				const char *p, size_t n)
{
	uint32_t i = (uint32_t)h & (t->cap - 1);
	struct tp_pf_slot *s;

	for (;; i = (i + 1) & (t->cap - 1)) {
		s = &t->s[i];
		if (!s->hash)
			return s;
		/* n == 0: a key without a string, p may be NULL (memcmp
		 * of NULL is undefined even for no bytes: UBSan). */
		if (s->hash == h && s->kind == kind && s->k1 == k1 &&
		    s->k2 == k2 && s->len == n &&
		    (n == 0 || !memcmp(t->strs.p + s->off, p, n)))
			return s;
	}
}

struct tp_pf_slot *tp_pf_tab_get(struct tp_pf_tab *t, uint32_t kind,
				 int64_t k1, int64_t k2, const char *p,
				 size_t n)
{
	struct tp_pf_slot *s;

	s = probe(t, hash_key(kind, k1, k2, p, n), kind, k1, k2, p, n);
	return s->hash ? s : NULL;
}

struct tp_pf_slot *tp_pf_tab_put(struct tp_pf_tab *t, uint32_t kind,
				 int64_t k1, int64_t k2, const char *p,
				 size_t n, uint32_t val)
{
	uint64_t h = hash_key(kind, k1, k2, p, n);
	struct tp_pf_slot *s;

	/* At most half full, so probing always ends at an empty slot. */
	if (t->n >= t->max || t->strs.len + n > t->max_bytes)
		return NULL;
	if ((t->n + 1) * 2 > t->cap && grow(t) < 0)
		return NULL;
	if (tp_buf_reserve(&t->strs, n + 1))
		return NULL;
	s = probe(t, h, kind, k1, k2, p, n);
	s->hash = h;
	s->kind = kind;
	s->k1 = k1;
	s->k2 = k2;
	s->off = (uint32_t)t->strs.len;
	s->len = (uint32_t)n;
	s->val = val;
	if (n)
		memcpy(t->strs.p + t->strs.len, p, n);
	t->strs.len += n;
	t->n++;
	return s;
}
