/* Rules about the host holding the GPU back inside steps:
 *
 * - synchronizing calls: a rank with steps that makes the calls below at
 *   least once a step (the step loop makes them) waits in them. The
 *   cost is the smaller of that wait and its GPU's idle time per step:
 *   a wait while the GPU has queued work costs nothing, but while the
 *   host waits it queues nothing, and the GPU idles once the queue is
 *   drained. (CUDA's "API synchronization behavior": cudaMemcpy from or
 *   to host memory returns once the copy is done.)
 * - copies from pageable host memory: the driver stages them through a
 *   pinned buffer, and they do not overlap the host's work. The cost is
 *   their GPU time per step, made at least once a step.
 */
#include "findings_int.h"

#include <stdlib.h>
#include <string.h>

static const char *const sync_calls[] = {
	"cudaDeviceSynchronize", "cudaStreamSynchronize",
	"cudaEventSynchronize", "cudaMemcpy", "cudaMemcpy2D", "cudaMemcpy3D",
	"cudaMemcpyToSymbol", "cudaMemcpyFromSymbol", "cudaMemcpyPeer",
	"cuCtxSynchronize", "cuStreamSynchronize", "cuEventSynchronize",
	"cuMemcpy", "cuMemcpyHtoD", "cuMemcpyDtoH", "cuMemcpyDtoD",
	"cuMemcpyHtoD_v2", "cuMemcpyDtoH_v2", "cuMemcpyDtoD_v2", NULL,
};

static int is_sync(const struct rp_row *row)
{
	size_t i;

	if (!rp_f_cat(row, "cuda_runtime") && !rp_f_cat(row, "cuda_driver"))
		return 0;
	for (i = 0; sync_calls[i]; i++)
		if (!strcmp(row->name, sync_calls[i]))
			return 1;
	return 0;
}

static int is_pageable(const struct rp_row *row)
{
	return rp_f_cat(row, "gpu_memcpy") && strstr(row->name, "Pageable");
}

/* The rank's rows of a kind: calls, ns, and the top ones by time. */
struct rows {
	uint64_t count;
	int64_t ns;
	const struct rp_row *top[RP_F_TOP_NAMES];
	size_t ntop;
};

static void rows_of(const struct rp_rank *r, int (*is)(const struct rp_row *),
		    struct rows *x)
{
	const struct rp_row *row;
	size_t i, k;

	memset(x, 0, sizeof(*x));
	for (i = 0; i < r->nrows; i++) {
		row = &r->rows[i];
		if (!is(row))
			continue;
		x->count += row->count;
		x->ns += row->total;
		for (k = x->ntop; k && x->top[k - 1]->total < row->total; k--)
			if (k < RP_F_TOP_NAMES)
				x->top[k] = x->top[k - 1];
		if (k < RP_F_TOP_NAMES) {
			x->top[k] = row;
			if (x->ntop < RP_F_TOP_NAMES)
				x->ntop++;
		}
	}
}

/* "cudaDeviceSynchronize 1.0 per step (12.000 ms); ..." */
static void rows_text(struct tp_buf *b, const struct rows *x,
		      const struct rp_rankm *m)
{
	char t[40];
	size_t i;

	for (i = 0; i < x->ntop; i++)
		rp_bprintf(b, "%s%s %.1Lf per %s (%s)", i ? "; " : "",
			   x->top[i]->name, x->top[i]->count / m->div,
			   m->has_steps ? "step" : "run",
			   rp_fmt_ns(t, sizeof(t),
				     x->top[i]->total / m->div));
}

static void set_names(struct rp_findings *fs, struct rp_finding *f,
		      const struct rows *x, const char *are)
{
	const char *names[RP_F_TOP_NAMES];
	size_t i;

	for (i = 0; i < x->ntop; i++)
		names[i] = x->top[i]->name;
	rp_f_names(fs, f, are, names, x->ntop);
}

/* The ranks for which cost() gives a cost, as one finding. */
static struct rp_finding *job(struct rp_report *rep, struct rp_findings *fs,
			      enum rp_fkind k,
			      long double (*cost)(const struct rp_report *,
						  size_t),
			      size_t *med)
{
	size_t e, n = 0, *v = rp_f_per_rank(rep, sizeof(*v));
	long double *c = rp_f_per_rank(rep, sizeof(*c));
	struct rp_finding *f = NULL;

	if (!v || !c) {
		fs->oom = 1;
		goto out;
	}
	for (e = 0; e < rep->nranks; e++) {
		c[n] = cost(rep, e);
		if (c[n] >= 0)
			v[n++] = e;
	}
	f = rp_f_job(fs, rep, k, v, c, n, med);
out:
	free(v);
	free(c);
	return f;
}

static long double sync_cost(const struct rp_report *rep, size_t e)
{
	const struct rp_rankm *m = &rep->m[e];
	long double wait, cost;
	struct rows x;

	if (!m->has_steps)
		return -1;
	rows_of(rep->ranks[e], is_sync, &x);
	if (x.count < m->div)
		return -1;
	wait = x.ns / m->div;
	cost = m->has_gpu && m->idle < wait ? m->idle : wait;
	return cost >= rp_f_floor(m->step) ? cost : -1;
}

void rp_rule_sync(struct rp_report *rep, struct rp_findings *fs)
{
	struct rp_finding *f;
	struct tp_buf b = { 0 };
	const struct rp_rankm *m;
	struct rows x;
	size_t k;
	char t[2][40];

	f = job(rep, fs, RP_F_SYNC, sync_cost, &k);
	if (!f)
		return;
	m = &rep->m[k];
	rows_of(rep->ranks[k], is_sync, &x);
	set_names(fs, f, &x, "calls");
	f->title = rp_f_str(fs, "the host waits in synchronizing calls "
			    "inside each step (%s)", x.top[0]->name);
	rp_bprintf(&b, "On rank %s%s: ", rep->ranks[k]->label,
		   f->nranks > 1 ? " (the median of them)" : "");
	rows_text(&b, &x, m);
	rp_bprintf(&b, ". The host waits %s per step in them",
		   rp_fmt_ns(t[0], 40, x.ns / m->div));
	if (m->has_gpu)
		rp_bprintf(&b, ", and its GPU idles %s per step, which is "
			   "what the host could have queued meanwhile (the "
			   "cost is the smaller of the two)",
			   rp_fmt_ns(t[1], 40, m->idle));
	tp_buf_char(&b, '.');
	f->evidence = b.oom ? NULL : rp_f_str(fs, "%.*s", (int)b.len, b.p);
	b.len = 0;
	rows_text(&b, &x, m);
	f->where = b.oom ? NULL : rp_f_str(fs, "the calls %.*s", (int)b.len,
					   b.p);
	tp_buf_free(&b);
	f->try_ = rp_f_str(fs, "Take the synchronization out of the step: "
			   "no per-step .item(), .cpu(), .tolist(), "
			   "print(loss) or torch.cuda.synchronize() "
			   "(torch.cuda.set_sync_debug_mode(\"warn\") names "
			   "each); keep metrics on the GPU and read them "
			   "every N steps; copy with non_blocking=True from "
			   "pinned memory (cudaMemcpyAsync) instead of "
			   "cudaMemcpy.");
}

static long double pageable_cost(const struct rp_report *rep, size_t e)
{
	const struct rp_rankm *m = &rep->m[e];
	struct rows x;
	long double cost;

	rows_of(rep->ranks[e], is_pageable, &x);
	if (!x.count || x.count < m->div)
		return -1;
	cost = x.ns / m->div;
	return cost >= rp_f_floor(m->step) ? cost : -1;
}

void rp_rule_pageable(struct rp_report *rep, struct rp_findings *fs)
{
	struct rp_finding *f;
	struct tp_buf b = { 0 };
	struct rows x;
	size_t k;

	f = job(rep, fs, RP_F_PAGEABLE, pageable_cost, &k);
	if (!f)
		return;
	rows_of(rep->ranks[k], is_pageable, &x);
	set_names(fs, f, &x, "copies");
	f->title = rp_f_str(fs, "copies from or to pageable host memory");
	rp_bprintf(&b, "On rank %s%s: ", rep->ranks[k]->label,
		   f->nranks > 1 ? " (the median of them)" : "");
	rows_text(&b, &x, &rep->m[k]);
	tp_buf_lit(&b, ". The driver stages a pageable copy through a "
		   "pinned buffer: it is slower, and it does not overlap the "
		   "host's work.");
	f->evidence = b.oom ? NULL : rp_f_str(fs, "%.*s", (int)b.len, b.p);
	b.len = 0;
	rows_text(&b, &x, &rep->m[k]);
	f->where = b.oom ? NULL : rp_f_str(fs, "the copies %.*s", (int)b.len,
					   b.p);
	tp_buf_free(&b);
	f->try_ = rp_f_str(fs, "Pin the host buffers: DataLoader("
			   "pin_memory=True), tensor.pin_memory(), "
			   "cudaHostAlloc or cudaHostRegister; then copy "
			   "with non_blocking=True (cudaMemcpyAsync on a "
			   "stream) so the copies overlap computation.");
}
