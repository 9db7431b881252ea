/* GPU time per annotated range: what nsys calls NVTX projection and
 * Kineto writes as gpu_user_annotation. A range's GPU time is the GPU
 * time of the kernels, copies and sets launched, by calls on the range's
 * own thread, between its start and its end (joined by correlation id
 * in gpu_time.c); nested ranges each count what ran inside them.
 *
 * Per range name: calls (ranges), CPU time (their durations), GPU time.
 * The calls are sorted by (pid, tid, ts) with prefix sums, so each range
 * costs two binary searches.
 *
 * Beside gpu_time.c (whose call records it reads); calls only intern.c
 * and the JSON buffer helpers. Fed by trace_summary.c.
 */
#include "gpu_ranges.h"
#include "intern.h"

#include <stdlib.h>
#include <string.h>

struct range {
	uint32_t name;
	int64_t pid, tid, ts, end;
};

struct rname {
	const char *name;	/* in strs */
	uint64_t calls;
	int64_t cpu_ns, gpu_ns;
};

struct tp_granges {
	struct range *r;
	size_t nr, capr;
	struct rname *names;	/* by name id */
	size_t nnames, capnames;
	struct tp_intern strs;
};

struct tp_granges *tp_granges_new(void)
{
	return calloc(1, sizeof(struct tp_granges));
}

void tp_granges_free(struct tp_granges *g)
{
	if (!g)
		return;
	tp_intern_free(&g->strs);
	free(g->names);
	free(g->r);
	free(g);
}

/* The name's entry: its id in the interned names, which is also its
 * index in g->names. */
static int64_t name_id(struct tp_granges *g, const char *name)
{
	int64_t id = tp_intern(&g->strs, name);
	struct rname *v;

	if (id < 0 || (size_t)id < g->nnames)
		return id;
	if (g->nnames == g->capnames) {
		g->capnames = g->capnames ? g->capnames * 2 : 64;
		v = realloc(g->names, g->capnames * sizeof(*v));
		if (!v)
			return -1;
		g->names = v;
	}
	v = &g->names[g->nnames++];
	memset(v, 0, sizeof(*v));
	v->name = g->strs.s[id];
	return id;
}

int tp_granges_add(struct tp_granges *g, const char *name, int64_t pid,
		   int64_t tid, int64_t ts, int64_t dur)
{
	int64_t id = name_id(g, name);
	struct range *r;

	if (id < 0)
		return -1;
	if (g->nr == g->capr) {
		g->capr = g->capr ? g->capr * 2 : 1024;
		r = realloc(g->r, g->capr * sizeof(*r));
		if (!r)
			return -1;
		g->r = r;
	}
	r = &g->r[g->nr++];
	r->name = (uint32_t)id;
	r->pid = pid;
	r->tid = tid;
	r->ts = ts;
	r->end = ts + dur;
	g->names[id].calls++;
	g->names[id].cpu_ns += dur;
	return 0;
}

static int thread_cmp(int64_t pa, int64_t ta, int64_t pb, int64_t tb)
{
	if (pa != pb)
		return pa < pb ? -1 : 1;
	return ta < tb ? -1 : ta > tb;
}

static int call_cmp(const void *a, const void *b)
{
	const struct tp_gpu_call *x = a, *y = b;
	int c = thread_cmp(x->pid, x->tid, y->pid, y->tid);

	if (c)
		return c;
	return x->ts < y->ts ? -1 : x->ts > y->ts;
}

/* The first call at or after (pid, tid, ts). */
static size_t lower(const struct tp_gpu_call *c, size_t n, int64_t pid,
		    int64_t tid, int64_t ts)
{
	size_t lo = 0, hi = n, mid;
	int k;

	while (lo < hi) {
		mid = lo + (hi - lo) / 2;
		k = thread_cmp(c[mid].pid, c[mid].tid, pid, tid);
		if (k < 0 || (!k && c[mid].ts < ts))
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

int tp_granges_finish(struct tp_granges *g, struct tp_gpu_call *calls,
		      size_t ncalls)
{
	int64_t *sum = malloc((ncalls + 1) * sizeof(*sum));
	const struct range *r;
	size_t i, a, b;

	if (!sum)
		return -1;
	if (ncalls)	/* calls is NULL when there are none */
		qsort(calls, ncalls, sizeof(*calls), call_cmp);
	sum[0] = 0;
	for (i = 0; i < ncalls; i++)
		sum[i + 1] = sum[i] + calls[i].gpu_ns;
	for (i = 0; i < g->nr; i++) {
		r = &g->r[i];
		a = lower(calls, ncalls, r->pid, r->tid, r->ts);
		b = lower(calls, ncalls, r->pid, r->tid, r->end);
		g->names[r->name].gpu_ns += sum[b] - sum[a];
	}
	free(sum);
	return 0;
}

static int name_cmp(const void *a, const void *b)
{
	const struct rname *x = *(const struct rname *const *)a;
	const struct rname *y = *(const struct rname *const *)b;

	if (x->gpu_ns != y->gpu_ns)
		return x->gpu_ns > y->gpu_ns ? -1 : 1;
	return strcmp(x->name, y->name);
}

void tp_granges_write_json(const struct tp_granges *g, struct tp_buf *b)
{
	const struct rname **v = malloc((g->nnames + 1) * sizeof(*v));
	size_t i;

	if (!v) {
		b->oom = 1;
		return;
	}
	for (i = 0; i < g->nnames; i++)
		v[i] = &g->names[i];
	qsort(v, g->nnames, sizeof(*v), name_cmp);
	tp_buf_lit(b, ", \"ranges\": [");
	for (i = 0; i < g->nnames; i++) {
		tp_buf_cstr(b, i ? ",\n  {\"name\": " : "\n  {\"name\": ");
		tp_json_str(b, v[i]->name);
		tp_buf_lit(b, ", \"calls\": ");
		tp_json_u64(b, v[i]->calls);
		tp_buf_lit(b, ", \"cpu_ns\": ");
		tp_json_i64(b, v[i]->cpu_ns);
		tp_buf_lit(b, ", \"gpu_ns\": ");
		tp_json_i64(b, v[i]->gpu_ns);
		tp_buf_lit(b, "}");
	}
	tp_buf_lit(b, "]");
	free(v);
}
