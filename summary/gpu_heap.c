/* summary/: the summary aggregator: per-name statistics, histograms, steps,
 * groups, memory, and its JSON/markdown output; on trace/ and stacks/. */
/* The GPU analyses' reorder window: a binary min-heap of records by
 * start, then kind (gpu_int.h says why that order). Events reach the
 * summary out of time order (CUPTI delivers GPU activity in buffers, a
 * span is written at its end); the heap gives them back in order. A
 * leaf: it calls nothing of summary/. */
#include <stdlib.h>

#include "gpu_int.h"

static int before(const struct gpu_rec *x, const struct gpu_rec *y)
{
	if (x->ts != y->ts)
		return x->ts < y->ts;
	return x->kind < y->kind;
}

int tp_gpu_heap_push(struct gpu_heap *h, const struct gpu_rec *r)
{
	struct gpu_rec *v;
	size_t i, up, cap;

	if (h->n == h->cap) {
		cap = h->cap ? h->cap * 2 : 1024;
		v = realloc(h->v, cap * sizeof(*v));
		if (!v)
			return -1;
		h->v = v;
		h->cap = cap;
	}
	for (i = h->n++; i; i = up) {
		up = (i - 1) / 2;
		if (!before(r, &h->v[up]))
			break;
		h->v[i] = h->v[up];
	}
	h->v[i] = *r;
	return 0;
}

/* The first record out; the heap must not be empty. */
void tp_gpu_heap_pop(struct gpu_heap *h, struct gpu_rec *out)
{
	struct gpu_rec last;
	size_t i = 0, c;

	*out = h->v[0];
	last = h->v[--h->n];
	for (;;) {
		c = 2 * i + 1;
		if (c >= h->n)
			break;
		if (c + 1 < h->n && before(&h->v[c + 1], &h->v[c]))
			c++;
		if (!before(&h->v[c], &last))
			break;
		h->v[i] = h->v[c];
		i = c;
	}
	if (h->n)
		h->v[i] = last;
}
