/* summary/: the summary aggregator: per-name statistics, histograms, steps,
 * groups, memory, and its JSON/markdown output; on util/ .. session/ and
 * stacks/. */
/* The summary's hash tables (rows, ranges, groups, tracks): open
 * addressing over item indices, grown at half full. Below both the
 * folding of events (summary.c) and the groups (summary_groups.c). */
#include <stdlib.h>
#include <string.h>

#include "summary_int.h"

uint64_t tp_sum_hash(const char *a, const char *b)
{
	uint64_t h = 0xcbf29ce484222325ull;

	for (; *a; a++)
		h = (h ^ (unsigned char)*a) * 0x100000001b3ull;
	h = (h ^ 0xff) * 0x100000001b3ull;
	for (; b && *b; b++)
		h = (h ^ (unsigned char)*b) * 0x100000001b3ull;
	return h ? h : 1;
}

void *tp_sum_tab_get(const struct sum_tab *t, size_t i)
{
	return t->items[i];
}

static uint64_t item_hash(const void *item)
{
	return *(const uint64_t *)item;
}

static int tab_rehash(struct sum_tab *t, size_t nslots)
{
	uint32_t *s = calloc(nslots, sizeof(*s));
	size_t i;

	if (!s)
		return -1;
	for (i = 0; i < t->n; i++) {
		size_t j = item_hash(t->items[i]) & (nslots - 1);

		while (s[j])
			j = (j + 1) & (nslots - 1);
		s[j] = (uint32_t)i + 1;
	}
	free(t->slots);
	t->slots = s;
	t->nslots = nslots;
	return 0;
}

void *tp_sum_tab_find(const struct sum_tab *t, uint64_t h, sum_eq_fn eq,
		      const void *key)
{
	size_t j;

	if (!t->nslots)
		return NULL;
	for (j = h & (t->nslots - 1); t->slots[j];
	     j = (j + 1) & (t->nslots - 1)) {
		void *it = t->items[t->slots[j] - 1];

		if (item_hash(it) == h && eq(it, key))
			return it;
	}
	return NULL;
}

int tp_sum_tab_add(struct sum_tab *t, void *item)
{
	size_t j;

	if (t->n + 1 > t->nslots / 2 &&
	    tab_rehash(t, t->nslots ? t->nslots * 2 : 64) < 0)
		return -1;
	if (t->n == t->cap) {
		size_t cap = t->cap ? t->cap * 2 : 32;
		void **v = realloc(t->items, cap * sizeof(*v));

		if (!v)
			return -1;
		t->items = v;
		t->cap = cap;
	}
	t->items[t->n++] = item;
	for (j = item_hash(item) & (t->nslots - 1); t->slots[j];
	     j = (j + 1) & (t->nslots - 1))
		;
	t->slots[j] = (uint32_t)t->n;
	return 0;
}

void tp_sum_tab_free(struct sum_tab *t, void (*fn)(void *))
{
	size_t i;

	for (i = 0; i < t->n; i++)
		fn(t->items[i]);
	free(t->items);
	free(t->slots);
	memset(t, 0, sizeof(*t));
}
