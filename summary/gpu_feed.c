/* summary/: the summary aggregator: per-name statistics, histograms, steps,
 * groups, memory, and its JSON/markdown output; on util/ .. session/ and
 * stacks/. */
/* The GPU analyses' entry (gpu.h): each span the aggregator takes
 * becomes a record (a GPU slice, a launch call, a range, a step, another
 * CPU span), counted at once where order does not matter (sums, range
 * calls and CPU time), and held in the reorder window until the window
 * is full; then the earliest record is swept (gpu_sweep.c). In the
 * exact mode (gpu_int.h) the records go through an external sort
 * instead, ordered by start, kind and arrival, and are swept at the end.
 * Calls gpu_heap.c, gpu_sweep.c, gpu_join.c, gpu_spill.c, the interned
 * names and the external sort.
 */
#include <stdlib.h>
#include <string.h>

#include "gpu_int.h"

struct tp_gpu *tp_gpu_new(size_t window)
{
	struct tp_gpu *g = calloc(1, sizeof(*g));

	if (!g)
		return NULL;
	g->window = window;
	g->delay_min = INT64_MAX;
	g->delay_max = INT64_MIN;
	return g;
}

struct tp_gpu *tp_gpu_new_exact(size_t budget)
{
	struct tp_gpu *g = tp_gpu_new(0);

	if (g)
		g->sp.budget = budget;
	return g;
}

/* A record with its arrival number: the order is total, so the sweep
 * is the same whether the sort spilled or not. */
struct srec {
	struct gpu_rec r;
	uint64_t seq;
};

static int srec_cmp(const void *a, const void *b)
{
	const struct srec *x = a, *y = b;

	if (x->r.ts != y->r.ts)
		return x->r.ts < y->r.ts ? -1 : 1;
	if (x->r.kind != y->r.kind)
		return x->r.kind < y->r.kind ? -1 : 1;
	return x->seq < y->seq ? -1 : x->seq > y->seq;
}

static void spill_push(struct tp_gpu *g, const struct gpu_rec *r)
{
	struct tp_xsort *s = tp_gpu_sort(g, &g->sp.recs, sizeof(struct srec),
					 srec_cmp);
	struct srec x;

	if (!s)
		return;
	memset(&x, 0, sizeof(x));	/* no padding bytes to the file */
	x.r = *r;
	x.seq = g->sp.rec_seq++;
	if (tp_xsort_add(s, &x))
		tp_gpu_sort_failed(g, s);
}

static void spill_drain(struct tp_gpu *g)
{
	struct tp_xsort *s = g->sp.recs;
	const struct srec *x;

	if (!s || g->oom)
		return;
	if (tp_xsort_finish(s)) {
		tp_gpu_sort_failed(g, s);
		return;
	}
	while ((x = tp_xsort_next(s)))
		tp_gpu_sweep(g, &x->r);
	if (tp_xsort_error(s))
		tp_gpu_sort_failed(g, s);
	tp_xsort_free(s);
	g->sp.recs = NULL;
}

void tp_gpu_free(struct tp_gpu *g)
{
	if (!g)
		return;
	tp_xsort_free(g->sp.recs);
	tp_xsort_free(g->sp.join);
	tp_xsort_free(g->sp.delays);
	tp_xsort_free(g->sp.busy);
	tp_gpu_heap_free(&g->heap);
	tp_intern_free(&g->strs);
	free(g->busy);
	free(g->bins);
	free(g->steps);
	free(g->cpu);
	free(g->ranges);
	tp_gpu_join_free(g);
	free(g);
}

static int starts(const char *s, const char *p)
{
	return !strncmp(s, p, strlen(p));
}

/* HTA: communication if ^nccl.*Kernel; else memory if ^Memcpy, ^Memset
 * or ^dma; else computation unless the name holds Memcpy or Sync; else
 * other. */
int tp_gpu_class(const char *name)
{
	if (starts(name, "nccl") && strstr(name + 4, "Kernel"))
		return TP_GPU_COMM;
	if (starts(name, "Memcpy") || starts(name, "Memset") ||
	    starts(name, "dma"))
		return TP_GPU_MEMORY;
	if (strstr(name, "Memcpy") || strstr(name, "Sync"))
		return TP_GPU_OTHER;
	return TP_GPU_COMPUTE;
}

int tp_gpu_any(const struct tp_gpu *g)
{
	return g->n_kernel || g->n_memcpy || g->n_memset;
}

static int64_t name_id_slow(struct tp_gpu *g, const char *name,
			    int is_static, unsigned slot)
{
	int64_t id = tp_intern(&g->strs, name);

	if (id >= 0 && is_static) {
		g->name_cache[slot].p = name;
		g->name_cache[slot].id = (uint32_t)id;
	}
	return id;
}

/* The name's id; names that live as long as the process (the hooks'
 * tables) are found by address first, without hashing the text. */
static inline int64_t name_id(struct tp_gpu *g, const char *name,
			      int is_static)
{
	unsigned slot = (unsigned)(((uintptr_t)name >> 3) % 64);

	if (is_static && g->name_cache[slot].p == name)
		return g->name_cache[slot].id;
	return name_id_slow(g, name, is_static, slot);
}

/* Sweeps the earliest record. */
static void sweep_one(struct tp_gpu *g)
{
	struct gpu_rec tmp;

	tp_gpu_sweep(g, tp_gpu_heap_pop(&g->heap, &tmp));
}

/* Inline: the writer pays it for every event. */
static inline __attribute__((always_inline)) void
push(struct tp_gpu *g, const struct gpu_rec *r)
{
	if (g->sp.budget) {
		spill_push(g, r);
		return;
	}
	if (g->window && tp_gpu_heap_size(&g->heap) >= g->window)
		sweep_one(g);
	if (tp_gpu_heap_push(&g->heap, r))
		g->oom = 1;
}

void tp_gpu_drain(struct tp_gpu *g)
{
	if (g->sp.budget)
		spill_drain(g);
	while (tp_gpu_heap_size(&g->heap))
		sweep_one(g);
	tp_gpu_sweep_end(g);
}

/* Counts a slice; 0 when k is not GPU activity. */
static int count(struct tp_gpu *g, enum tp_sum_cat k, int64_t dur)
{
	switch (k) {
	case TP_SUM_CAT_KERNEL:
		g->n_kernel++;
		g->kernel_ns += dur;
		return 1;
	case TP_SUM_CAT_MEMCPY:
		g->n_memcpy++;
		g->memcpy_ns += dur;
		return 1;
	case TP_SUM_CAT_MEMSET:
		g->n_memset++;
		g->memset_ns += dur;
		return 1;
	default:
		return 0;
	}
}

/* Where tp_gpu_span's record goes, once the window has room: a slot of
 * the ring, or *tmp (push_done then pushes it the slow way). */
static inline struct gpu_rec *push_slot(struct tp_gpu *g, int64_t ts,
					uint8_t kind, struct gpu_rec *tmp)
{
	struct gpu_rec *slot;

	if (g->sp.budget)
		return tmp;
	if (g->window && tp_gpu_heap_size(&g->heap) >= g->window)
		sweep_one(g);
	slot = tp_gpu_heap_slot(&g->heap, ts, kind);
	return slot ? slot : tmp;
}

static inline void push_done(struct tp_gpu *g, struct gpu_rec *r,
			     const struct gpu_rec *tmp)
{
	if (r != tmp) {
		tp_gpu_heap_append(&g->heap, r);
		return;
	}
	if (g->sp.budget)
		spill_push(g, r);
	else if (tp_gpu_heap_push_slow(&g->heap, r))
		g->oom = 1;
}

/* The writer's every event: what push does, with the record written in
 * its slot at once. */
void tp_gpu_span(struct tp_gpu *g, const struct tp_sum_span *e,
		 enum tp_sum_cat k)
{
	struct gpu_rec tmp, *r;
	uint32_t name = 0;
	uint8_t kind, cls = 0;
	int64_t id;

	if (count(g, k, e->dur_ns)) {
		kind = GR_SLICE;
		cls = (uint8_t)tp_gpu_class(e->name);
		goto put;
	}
	if (k == TP_SUM_CAT_GPU_USER_ANNOTATION)
		return;
	id = name_id(g, e->name, e->static_names);
	if (id < 0) {
		g->oom = 1;
		return;
	}
	name = (uint32_t)id;
	/* every CPU-side span, of any kind, is context for the idle gaps */
	kind = GR_CPU;
	if (tp_sum_is_call(e->corr, k)) {
		kind = GR_CALL;
	} else if (k == TP_SUM_CAT_USER_ANNOTATION) {
		if (tp_gpu_range_name(g, name, e->dur_ns))
			g->oom = 1;
		kind = GR_RANGE;
	}
put:
	r = push_slot(g, e->ts_ns, kind, &tmp);
	r->ts = e->ts_ns;
	r->end = e->ts_ns + e->dur_ns;
	r->pid = e->pid;
	r->tid = e->tid;
	r->corr = e->corr;
	r->name = name;
	r->kind = kind;
	r->cls = cls;
	push_done(g, r, &tmp);
}

void tp_gpu_set_host(struct tp_gpu *g, struct tp_host *host)
{
	g->host = host;
}

void tp_gpu_sample(struct tp_gpu *g, int64_t ts_ns, int64_t weight_ns,
		   uint32_t stack)
{
	struct gpu_rec r = {
		.ts = ts_ns, .end = ts_ns, .corr = (uint64_t)weight_ns,
		.name = stack, .kind = GR_SAMPLE,
	};

	if (g->host)
		push(g, &r);
}

void tp_gpu_osrt(struct tp_gpu *g, const struct tp_sum_span *e, uint32_t key)
{
	struct gpu_rec r = {
		.ts = e->ts_ns, .end = e->ts_ns + e->dur_ns, .pid = e->pid,
		.tid = e->tid, .corr = key, .kind = GR_OSRT,
	};
	int64_t id = name_id(g, e->name, e->static_names);

	if (id < 0) {
		g->oom = 1;
		return;
	}
	r.name = (uint32_t)id;
	push(g, &r);
}

void tp_gpu_step(struct tp_gpu *g, const char *name, int64_t ts_ns,
		 int64_t dur_ns)
{
	struct gpu_rec r = { .ts = ts_ns, .end = ts_ns + dur_ns };
	int64_t id = name_id(g, name, 0);

	if (id < 0) {
		g->oom = 1;
		return;
	}
	r.name = (uint32_t)id;
	r.kind = GR_STEP;
	push(g, &r);
}
