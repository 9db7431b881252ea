/* summary/: the summary aggregator: per-name statistics, histograms, steps,
 * groups, memory, and its JSON/markdown output; on util/ .. session/ and
 * stacks/. */
/* What fell in the GPU's idle intervals, told by the GPU sweep
 * (gpu_sweep.c) as it goes in time order: samples after the busy
 * interval so far wait by stack until the next GPU activity makes the
 * time between a gap; blocking calls are held until no gap to come can
 * overlap them, and each gap takes the part of them inside it. */
#include <stdlib.h>
#include <string.h>

#include "host_int.h"

static int pend_room(struct tp_host *h, uint32_t stack)
{
	size_t cap;
	int64_t *v;

	if (stack < h->cappend)
		return 0;
	cap = h->cappend ? h->cappend * 2 : 256;
	while (cap <= stack)
		cap *= 2;
	v = realloc(h->pend, cap * sizeof(*v));
	if (!v)
		return -1;
	memset(v + h->cappend, 0, (cap - h->cappend) * sizeof(*v));
	h->pend = v;
	h->cappend = cap;
	return 0;
}

static int touch(struct tp_host *h, uint32_t stack)
{
	if (h->ntouched == h->captouched) {
		size_t cap = h->captouched ? h->captouched * 2 : 256;
		uint32_t *v = realloc(h->touched, cap * sizeof(*v));

		if (!v)
			return -1;
		h->touched = v;
		h->captouched = cap;
	}
	h->touched[h->ntouched++] = stack;
	return 0;
}

/* A sample's time waits in pend, by stack, its count in pend_n. */
void tp_host_pending(struct tp_host *h, uint32_t stack, int64_t weight_ns)
{
	if (!h || stack >= h->nstk || pend_room(h, stack) < 0)
		return;
	if (!h->stk[stack].pend_n && touch(h, stack) < 0)
		return;
	h->pend[stack] += weight_ns;
	h->stk[stack].pend_n++;
}

void tp_host_osrt_open(struct tp_host *h, uint32_t key, int64_t ts,
		       int64_t end)
{
	struct host_open *o;

	if (!h || key >= h->nblk || end <= ts)
		return;
	if (h->nopen == h->capopen) {
		size_t cap = h->capopen ? h->capopen * 2 : 64;
		struct host_open *v;

		if (cap > HOST_OPEN_MAX) {
			h->open_dropped++;
			return;
		}
		v = realloc(h->open, cap * sizeof(*v));
		if (!v)
			return;
		h->open = v;
		h->capopen = cap;
	}
	o = &h->open[h->nopen++];
	o->ts = ts;
	o->end = end;
	o->key = key;
	o->counted = 0;
}

/* Drops the held calls that end by e. */
static void prune(struct tp_host *h, int64_t e)
{
	size_t i, k = 0;

	for (i = 0; i < h->nopen; i++)
		if (h->open[i].end > e)
			h->open[k++] = h->open[i];
	h->nopen = k;
}

void tp_host_busy_until(struct tp_host *h, int64_t e)
{
	if (h && h->nopen >= h->capopen / 2)
		prune(h, e);
}

static void gap_samples(struct tp_host *h)
{
	size_t i;

	for (i = 0; i < h->ntouched; i++) {
		uint32_t s = h->touched[i];
		struct host_stk *k = &h->stk[s];
		int64_t w = h->pend[s];

		k->idle_ns += w;
		k->idle_n += k->pend_n;
		h->idle_samples += k->pend_n;
		h->idle_ns += w;
		k->pend_n = 0;
		h->pend[s] = 0;
	}
	h->ntouched = 0;
}

void tp_host_gap(struct tp_host *h, int64_t a, int64_t b)
{
	size_t i;

	if (!h)
		return;
	gap_samples(h);
	for (i = 0; i < h->nopen; i++) {
		struct host_open *o = &h->open[i];
		int64_t x = o->ts > a ? o->ts : a;
		int64_t y = o->end < b ? o->end : b;
		struct host_blk *k = &h->blk[o->key];

		if (y <= x)
			continue;
		k->idle_ns += y - x;
		h->idle_blocking_ns += y - x;
		if (!o->counted) {
			k->idle_calls++;
			o->counted = 1;
		}
	}
	prune(h, b);
}

void tp_host_end(struct tp_host *h)
{
	size_t i;

	if (!h)
		return;
	for (i = 0; i < h->ntouched; i++) {
		h->stk[h->touched[i]].pend_n = 0;
		h->pend[h->touched[i]] = 0;
	}
	h->ntouched = 0;
	h->nopen = 0;
}
