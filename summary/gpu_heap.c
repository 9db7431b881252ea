/* summary/: the summary aggregator: per-name statistics, histograms, steps,
 * groups, memory, and its JSON/markdown output; on util/ .. session/ and
 * stacks/. */
/* The GPU analyses' reorder window: records by start, then kind
 * (gpu_int.h says why that order). Events reach the summary out of time
 * order (CUPTI delivers GPU activity in buffers, a span is written at its
 * end); the window gives them back in order. Most arrive in order (a
 * thread's calls), and those wait in a FIFO ring at O(1), the rest in a
 * binary heap; popping takes the smaller front. A leaf: it calls nothing
 * of summary/. */
#include <stdlib.h>
#include <string.h>

#include "gpu_int.h"

static int before(const struct gpu_rec *x, const struct gpu_rec *y)
{
	if (x->ts != y->ts)
		return x->ts < y->ts;
	return x->kind < y->kind;
}

static int heap_push(struct gpu_heap *h, const struct gpu_rec *r)
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

static void heap_pop(struct gpu_heap *h, struct gpu_rec *out)
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

/* The ring twice as large (a power of two); called full, so its
 * records are [qhead, qcap) then [0, qhead): the second part moves to
 * just after the first, where the larger mask finds it. realloc moves
 * a large ring by remapping its pages, not by copying. */
static int ring_grow(struct gpu_heap *h)
{
	size_t cap = h->qcap ? h->qcap * 2 : 1024;
	struct gpu_rec *q = realloc(h->q, cap * sizeof(*q));

	if (!q)
		return -1;
	memcpy(q + h->qcap, q, h->qhead * sizeof(*q));
	h->q = q;
	h->qcap = cap;
	return 0;
}

/* Out of order (behind the ring's last), or the ring full: the inline
 * tp_gpu_heap_push (gpu_int.h) took every other case. */
int tp_gpu_heap_push_slow(struct gpu_heap *h, const struct gpu_rec *r)
{
	struct gpu_rec last = { .ts = h->qlast_ts, .kind = h->qlast_kind };

	if (h->qn && before(r, &last))
		return heap_push(h, r);
	if (h->qn == h->qcap && ring_grow(h))
		return heap_push(h, r);
	h->q[(h->qhead + h->qn) & (h->qcap - 1)] = *r;
	h->qn++;
	h->qlast_ts = r->ts;
	h->qlast_kind = r->kind;
	return 0;
}

/* The pop the inline tp_gpu_heap_pop (gpu_int.h) leaves: the heap holds
 * records, so the smaller of the two fronts goes. */
const struct gpu_rec *tp_gpu_heap_pop_slow(struct gpu_heap *h,
					   struct gpu_rec *tmp)
{
	const struct gpu_rec *r;

	if (h->qn && (!h->n || !before(&h->v[0], &h->q[h->qhead]))) {
		r = &h->q[h->qhead];
		h->qhead = (h->qhead + 1) & (h->qcap - 1);
		h->qn--;
		__builtin_prefetch(&h->q[(h->qhead + 4) & (h->qcap - 1)]);
		return r;
	}
	heap_pop(h, tmp);
	return tmp;
}

void tp_gpu_heap_free(struct gpu_heap *h)
{
	free(h->v);
	free(h->q);
}
