/* Rule: launch-bound steps. Many short kernels a step, and the GPU
 * idle between them: each kernel ends before the host has launched the
 * next. The idle time counted is the GPU's idle time outside its
 * longest idle gaps (those are long waits, which rule_idle.c names),
 * so it is the time lost between kernels. A kernel is short below
 * RP_F_SHORT_NS, counted from each kernel row's duration histogram
 * (summary/hist.h: a bucket counts as short when it ends by then). */
#include "findings_int.h"

#include <stdlib.h>
#include <string.h>

#include "summary/hist.h"

struct launch {
	uint64_t kernels, brief;	/* calls, and those shorter */
	long double between;		/* idle ns per step between kernels */
	const struct rp_row *top[RP_F_TOP_NAMES];	/* most calls */
	size_t ntop;
};

static uint64_t short_calls(const struct rp_row *row)
{
	uint64_t n = 0;
	size_t i;

	if (!row->nhist)
		return row->count && row->total / (int64_t)row->count <
		       RP_F_SHORT_NS ? row->count : 0;
	for (i = 0; i < row->nhist; i++)
		if (tp_hist_lower(row->hist[i].b) +
		    tp_hist_width(row->hist[i].b) <= RP_F_SHORT_NS)
			n += row->hist[i].n;
	return n;
}

static void keep_top(struct launch *x, const struct rp_row *row)
{
	size_t k;

	for (k = x->ntop; k && x->top[k - 1]->count < row->count; k--)
		if (k < RP_F_TOP_NAMES)
			x->top[k] = x->top[k - 1];
	if (k < RP_F_TOP_NAMES) {
		x->top[k] = row;
		if (x->ntop < RP_F_TOP_NAMES)
			x->ntop++;
	}
}

static void launch_of(const struct rp_report *rep, size_t e,
		      struct launch *x)
{
	const struct rp_rank *r = rep->ranks[e];
	int64_t idle = r->gpu.idle_ns == RP_NONE ? 0 : r->gpu.idle_ns;
	size_t i;

	memset(x, 0, sizeof(*x));
	for (i = 0; i < r->nrows; i++) {
		if (!rp_f_cat(&r->rows[i], "kernel"))
			continue;
		x->kernels += r->rows[i].count;
		x->brief += short_calls(&r->rows[i]);
		keep_top(x, &r->rows[i]);
	}
	for (i = 0; i < r->gpu.ngaps; i++)
		idle -= r->gpu.gaps[i].dur;
	x->between = idle > 0 ? idle / rep->m[e].div : 0;
}

static long double launch_cost(const struct rp_report *rep, size_t e)
{
	const struct rp_rankm *m = &rep->m[e];
	struct launch x;
	long double floor = RP_F_LAUNCH_IDLE * m->step;

	if (!m->has_gpu || m->kernels < RP_F_LAUNCH_KERNELS)
		return -1;
	launch_of(rep, e, &x);
	if (!x.kernels || x.brief < RP_F_SHORT_SHARE * x.kernels)
		return -1;
	if (floor < RP_F_MIN_NS)
		floor = RP_F_MIN_NS;
	return x.between >= floor ? x.between : -1;
}

static void text(struct rp_report *rep, struct rp_findings *fs,
		 struct rp_finding *f, size_t k)
{
	const struct rp_rankm *m = &rep->m[k];
	const struct rp_gpu *g = &rep->ranks[k]->gpu;
	const char *names[RP_F_TOP_NAMES];
	struct tp_buf b = { 0 };
	struct launch x;
	char t[4][40];
	size_t i;

	launch_of(rep, k, &x);
	for (i = 0; i < x.ntop; i++)
		names[i] = x.top[i]->name;
	rp_f_names(fs, f, "kernels", names, x.ntop);
	f->title = rp_f_str(fs, "launch-bound: many short kernels, the GPU "
			    "idle between them");
	rp_bprintf(&b, "On rank %s%s: %.0Lf kernels per %s, %s of them "
		   "shorter than %s; its GPU idles %s per %s between them "
		   "(outside its %zu longest idle gaps), %s of the %s.",
		   rep->ranks[k]->label, f->nranks > 1 ?
		   " (the median of them)" : "", m->kernels,
		   m->has_steps ? "step" : "run",
		   rp_fmt_pct(t[0], 40, (int64_t)x.brief, (int64_t)x.kernels),
		   rp_fmt_ns(t[1], 40, RP_F_SHORT_NS),
		   rp_fmt_ns(t[2], 40, x.between),
		   m->has_steps ? "step" : "run", g->ngaps,
		   rp_fmt_pct(t[3], 40, (int64_t)x.between, (int64_t)m->step),
		   m->has_steps ? "step" : "run");
	if (g->launches && g->delay_p50 != RP_NONE)
		rp_bprintf(&b, " Half its kernels start within %s of their "
			   "launch call's end: the GPU runs them as soon as "
			   "they come, and waits for the next.",
			   rp_fmt_ns(t[0], 40, g->delay_p50));
	f->evidence = b.oom ? NULL : rp_f_str(fs, "%.*s", (int)b.len, b.p);
	b.len = 0;
	for (i = 0; i < x.ntop; i++)
		rp_bprintf(&b, "%s%s (%.0Lf per %s)", i ? ", " : "", names[i],
			   x.top[i]->count / m->div,
			   m->has_steps ? "step" : "run");
	f->where = b.oom ? NULL : rp_f_str(fs, "the most frequent kernels: "
					   "%.*s", (int)b.len, b.p ? b.p : "");
	tp_buf_free(&b);
	f->try_ = rp_f_str(fs, "Launch fewer, larger kernels: capture the "
			   "step in a CUDA graph (torch.cuda.CUDAGraph, "
			   "torch.cuda.make_graphed_callables) or use "
			   "torch.compile(mode=\"reduce-overhead\"), which "
			   "also fuses small kernels; fused optimizers "
			   "(foreach=True, fused=True); a larger batch per "
			   "step.");
}

void rp_rule_launch(struct rp_report *rep, struct rp_findings *fs)
{
	size_t e, n = 0, k, *v = rp_f_per_rank(rep, sizeof(*v));
	long double *c = rp_f_per_rank(rep, sizeof(*c));
	struct rp_finding *f;

	if (!v || !c) {
		fs->oom = 1;
		goto out;
	}
	for (e = 0; e < rep->nranks; e++) {
		c[n] = launch_cost(rep, e);
		if (c[n] >= 0)
			v[n++] = e;
	}
	f = rp_f_job(fs, rep, RP_F_LAUNCH, v, c, n, &k);
	if (f)
		text(rep, fs, f, k);
out:
	free(v);
	free(c);
}
