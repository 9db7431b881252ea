/* summary/: the summary aggregator: per-name statistics, histograms, steps,
 * groups, memory, and its JSON/markdown output; on util/ .. session/ and
 * stacks/. */
/* Interned strings for the GPU analyses (range names, CPU event names):
 * open addressing over ids, at most half full, so a probe always ends.
 * A leaf: calls nothing of summary/. */
#include "gpu_intern.h"
#include "util/fnv.h"

#include <stdlib.h>
#include <string.h>

static int reindex(struct tp_intern *t)
{
	size_t size = t->nslots ? t->nslots * 2 : 256, i, k;
	uint32_t *s;

	if (t->n * 2 < t->nslots)
		return 0;
	s = calloc(size, sizeof(*s));
	if (!s)
		return -1;
	for (i = 0; i < t->n; i++) {
		for (k = t->hash[i] & (size - 1); s[k]; k = (k + 1) & (size - 1))
			;
		s[k] = (uint32_t)i + 1;
	}
	free(t->slots);
	t->slots = s;
	t->nslots = size;
	return 0;
}

static int grow(struct tp_intern *t)
{
	size_t cap = t->cap ? t->cap * 2 : 64;
	char **s;
	uint32_t *h;

	if (t->n < t->cap)
		return 0;
	s = realloc(t->s, cap * sizeof(*s));
	if (!s)
		return -1;
	t->s = s;
	h = realloc(t->hash, cap * sizeof(*h));
	if (!h)
		return -1;
	t->hash = h;
	t->cap = cap;
	return 0;
}

int64_t tp_intern(struct tp_intern *t, const char *str)
{
	uint32_t h = tp_fnv1a_str(TP_FNV1A_INIT, str);
	size_t k;

	if (reindex(t))
		return -1;
	for (k = h & (t->nslots - 1); t->slots[k];
	     k = (k + 1) & (t->nslots - 1))
		if (t->hash[t->slots[k] - 1] == h &&
		    !strcmp(t->s[t->slots[k] - 1], str))
			return t->slots[k] - 1;
	if (grow(t))
		return -1;
	t->s[t->n] = strdup(str);
	if (!t->s[t->n])
		return -1;
	t->hash[t->n] = h;
	t->slots[k] = (uint32_t)++t->n;
	return (int64_t)t->n - 1;
}

void tp_intern_free(struct tp_intern *t)
{
	size_t i;

	for (i = 0; i < t->n; i++)
		free(t->s[i]);
	free(t->s);
	free(t->hash);
	free(t->slots);
	memset(t, 0, sizeof(*t));
}
