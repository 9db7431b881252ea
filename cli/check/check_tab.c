/* tprof check's tables: what must outlive an event (interned names and
 * tracks, flow keys) is found through an open-addressing index that grows
 * before it is half full, so a probe always ends. A leaf: calls nothing
 * of cli/. */
#include "check_tab.h"

#include <stdlib.h>
#include <string.h>

uint32_t ck_hash(const void *p, size_t n)
{
	const unsigned char *s = p;
	uint64_t h = 0xcbf29ce484222325ull;

	while (n--)
		h = (h ^ *s++) * 0x100000001b3ull;
	return (uint32_t)(h ^ h >> 32);
}

int ck_ht_reserve(struct htab *t)
{
	size_t size = t->s ? (t->mask + 1) * 2 : 1024, i, k;
	struct hslot *s;

	if (t->s && (t->n + 1) * 2 <= t->mask + 1)
		return 0;
	s = calloc(size, sizeof(*s));
	if (!s)
		return -1;
	for (i = 0; t->s && i <= t->mask; i++) {
		if (!t->s[i].idx1)
			continue;
		for (k = t->s[i].hash & (size - 1); s[k].idx1;
		     k = (k + 1) & (size - 1))
			;
		s[k] = t->s[i];
	}
	free(t->s);
	t->s = s;
	t->mask = size - 1;
	return 0;
}

struct hslot *ck_ht_find(struct htab *t, uint32_t hash, ht_eq_fn eq,
			     const void *owner, const void *key)
{
	size_t i;

	for (i = hash & t->mask;; i = (i + 1) & t->mask) {
		if (!t->s[i].idx1)
			return &t->s[i];
		if (t->s[i].hash == hash && eq(owner, t->s[i].idx1 - 1, key))
			return &t->s[i];
	}
}

/* Fills a free slot: counting it is what makes ht_reserve grow the table
 * before it is half full, so that a probe always finds a free slot. */
void ck_ht_take(struct htab *t, struct hslot *slot, uint32_t idx1,
		    uint32_t hash)
{
	slot->idx1 = idx1;
	slot->hash = hash;
	t->n++;
}

int ck_grow(void **arr, size_t *cap, size_t n, size_t elem)
{
	size_t c = *cap ? *cap * 2 : 1024;
	void *p;

	if (n < *cap)
		return 0;
	p = realloc(*arr, c * elem);
	if (!p)
		return -1;
	*arr = p;
	*cap = c;
	return 0;
}

struct strkey {
	const char *s;
	size_t len;
};

static int str_eq(const void *owner, uint32_t idx, const void *key)
{
	const struct strtab *t = owner;
	const struct strkey *k = key;

	return t->ent[idx].len == k->len &&
	       !memcmp(t->pool + t->ent[idx].off, k->s, k->len);
}

/* Interns s; returns its id, or -1 when out of memory. */
int64_t ck_intern(struct strtab *t, const char *s, size_t len)
{
	struct strkey k = { s, len };
	uint32_t h = ck_hash(s, len);
	struct hslot *slot;
	void *pool = t->pool, *ent = t->ent;

	if (ck_ht_reserve(&t->ht))
		return -1;
	slot = ck_ht_find(&t->ht, h, str_eq, t, &k);
	if (slot->idx1)
		return slot->idx1 - 1;
	if (ck_grow(&ent, &t->cap, t->n, sizeof(t->ent[0])))
		return -1;
	t->ent = ent;
	while (t->plen + len + 1 > t->pcap) {
		t->pcap = t->pcap ? t->pcap * 2 : 65536;
		pool = realloc(t->pool, t->pcap);
		if (!pool)
			return -1;
		t->pool = pool;
	}
	memcpy(t->pool + t->plen, s, len);
	t->pool[t->plen + len] = 0;
	t->ent[t->n].off = (uint32_t)t->plen;
	t->ent[t->n].len = (uint32_t)len;
	t->plen += len + 1;
	ck_ht_take(&t->ht, slot, (uint32_t)++t->n, h);
	return (int64_t)t->n - 1;
}

const char *ck_str_at(const struct strtab *t, uint32_t id, size_t *len)
{
	*len = t->ent[id].len;
	return t->pool + t->ent[id].off;
}

void ck_strtab_free(struct strtab *t)
{
	free(t->ht.s);
	free(t->ent);
	free(t->pool);
}
