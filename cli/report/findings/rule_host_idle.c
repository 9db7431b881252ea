/* Rule: where the host's time went while a rank's GPU was idle, from its
 * CPU samples and blocking calls (TPROF_TRACE=cpu,osrt; the summary's
 * "host_activity" member, read into struct rp_host). A rank with GPU
 * idle time whose samples over the idle intervals name a function (the
 * innermost Python one when there are Python frames, else the innermost
 * native one), or whose blocking calls name a call, holding at least
 * RP_F_HOST_SHARE of that idle time. The cost is the GPU's idle time per
 * step while the host was there: the idle time times the two shares
 * together, at most the idle time (threads' shares add up). Ranks with
 * the same function and call make one finding, with the median rank's
 * figures. */
#include "findings_int.h"
#include "cli/report/report_host.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct top {
	const struct rp_hfn *fn;	/* NULL: under the share */
	const struct rp_hcall *call;	/* likewise */
	double fshare, cshare;
	char fl[640], cl[640];		/* their labels */
};

static double share(int64_t part, int64_t whole)
{
	return whole > 0 ? (double)part / (double)whole : 0.0;
}

/* 0 when rank e has none. */
static int top_of(const struct rp_report *rep, size_t e, struct top *t)
{
	const struct rp_rank *r = rep->ranks[e];
	const struct rp_host *h = &r->host_activity;
	int64_t idle = r->gpu.idle_ns;

	memset(t, 0, sizeof(*t));
	if (!h->present || !h->idle || idle <= 0 || !rep->m[e].has_gpu)
		return 0;
	t->fn = h->npython ? &h->python[0] : h->nfunctions ?
		&h->functions[0] : NULL;
	if (t->fn) {
		t->fshare = share(t->fn->ns, idle);
		if (t->fshare < RP_F_HOST_SHARE)
			t->fn = NULL;
		else
			rp_host_fn_label(t->fn, t->fl, sizeof(t->fl));
	}
	if (h->nblocking) {
		t->call = &h->blocking[0];
		t->cshare = share(t->call->ns, idle);
		if (t->cshare < RP_F_HOST_SHARE)
			t->call = NULL;
		else
			rp_host_call_label(t->call, t->cl, sizeof(t->cl));
	}
	return t->fn || t->call;
}

static long double cost_of(const struct rp_report *rep, size_t e,
			   const struct top *t)
{
	const struct rp_rankm *m = &rep->m[e];
	double s = (t->fn ? t->fshare : 0) + (t->call ? t->cshare : 0);
	long double cost = m->idle * (s < 1 ? s : 1);

	return cost >= rp_f_floor(m->step) ? cost : -1;
}

static int same(const struct top *a, const struct top *b)
{
	return !strcmp(a->fl, b->fl) && !strcmp(a->cl, b->cl);
}

/* "GPU idle 45.00% of each step; during it the host spent 70% in f
 * (lib.so) and 20% blocked in read on pipe:[7]" */
static char *title(struct rp_findings *fs, const struct rp_report *rep,
		   size_t e, const struct top *t)
{
	const struct rp_rankm *m = &rep->m[e];
	char p[3][40], what[1400] = "";

	rp_fmt_pct(p[0], 40, (int64_t)m->idle, (int64_t)m->step);
	rp_fmt_pct(p[1], 40, (int64_t)(t->fshare * 1e6), 1000000);
	rp_fmt_pct(p[2], 40, (int64_t)(t->cshare * 1e6), 1000000);
	if (t->fn && t->call)
		snprintf(what, sizeof(what), "%s in %s and %s blocked in %s",
			 p[1], t->fl, p[2], t->cl);
	else if (t->fn)
		snprintf(what, sizeof(what), "%s in %s", p[1], t->fl);
	else
		snprintf(what, sizeof(what), "%s blocked in %s", p[2], t->cl);
	return rp_f_str(fs, "GPU idle %s of %s; during it the host spent %s",
			p[0], m->has_steps ? "each step" : "its run", what);
}

static void evidence(struct tp_buf *b, const struct rp_report *rep,
		     size_t e, const struct rp_finding *f)
{
	const struct rp_rank *r = rep->ranks[e];
	const struct rp_host *h = &r->host_activity;
	char t[5][40];

	rp_bprintf(b, "On rank %s%s: its GPU idles %s per %s (%s of it). "
		   "Over its idle intervals (%s in all) the CPU samples stand "
		   "for %s of CPU time and the blocking calls for %s (the "
		   "threads' times add up).", r->label,
		   f->nranks > 1 ? " (the median of them)" : "",
		   rp_fmt_ns(t[0], 40, rep->m[e].idle),
		   rep->m[e].has_steps ? "step" : "run",
		   rp_fmt_pct(t[1], 40, (int64_t)rep->m[e].idle,
			      (int64_t)rep->m[e].step),
		   rp_fmt_ns(t[2], 40, r->gpu.idle_ns),
		   rp_fmt_ns(t[3], 40, h->sampled_ns),
		   rp_fmt_ns(t[4], 40, h->blocking_ns));
}

static char *advice(struct rp_findings *fs, const struct top *t)
{
	if (t->fn && (!t->call || t->fshare >= t->cshare))
		return rp_f_str(fs, "The GPU waits while the host runs %s: "
				"see its callers in the HTML report's icicle "
				"(or the trace's cpu_sample instants), make it "
				"cheaper or take it off the step's critical "
				"path (a background thread, DataLoader workers, "
				"prefetching the next step's inputs).", t->fl);
	return rp_f_str(fs, "The GPU waits while the host blocks in %s: "
			"overlap that I/O or wait with the GPU's work (a "
			"background thread, prefetching, non-blocking "
			"calls), or make it shorter (local or cached data, "
			"fewer locks held across the step).", t->cl);
}

static void make(struct rp_report *rep, struct rp_findings *fs,
		 const size_t *v, const long double *c, size_t n)
{
	struct tp_buf b = { 0 };
	struct rp_finding *f;
	const char *names[2];
	struct top t;
	size_t k, nn = 0;

	f = rp_f_job(fs, rep, RP_F_HOST_IDLE, v, c, n, &k);
	if (!f || !top_of(rep, k, &t))
		return;
	f->title = title(fs, rep, k, &t);
	evidence(&b, rep, k, f);
	f->evidence = b.oom ? NULL : rp_f_str(fs, "%.*s", (int)b.len, b.p);
	tp_buf_free(&b);
	if (t.fn)
		names[nn++] = t.fn->function;
	if (t.call)
		names[nn++] = t.call->call;
	rp_f_names(fs, f, "cpu", names, nn);
	if (n == 1)
		rp_f_where_rank(rep, fs, f, k, t.fn ? "the host's CPU samples"
				" while its GPU was idle" :
				"the host's blocking calls while its GPU was "
				"idle");
	else
		f->where = rp_f_str(fs, "the host's CPU samples and blocking "
				    "calls while the GPU was idle, on each "
				    "of these ranks");
	f->try_ = advice(fs, &t);
}

void rp_rule_host_idle(struct rp_report *rep, struct rp_findings *fs)
{
	size_t e, j, n, *v = rp_f_per_rank(rep, sizeof(*v));
	long double *c = rp_f_per_rank(rep, sizeof(*c));
	long double *cv = rp_f_per_rank(rep, sizeof(*cv));
	struct top *t = rp_f_per_rank(rep, sizeof(*t));

	if (!v || !c || !cv || !t) {
		fs->oom = 1;
		goto out;
	}
	for (e = 0; e < rep->nranks; e++)
		c[e] = top_of(rep, e, &t[e]) ? cost_of(rep, e, &t[e]) : -1;
	/* the ranks with the same top, ascending, as one finding (c[j] < 0:
	 * none, or taken) */
	for (e = 0; e < rep->nranks; e++) {
		if (c[e] < 0)
			continue;
		for (n = 0, j = e; j < rep->nranks; j++)
			if (c[j] >= 0 && same(&t[e], &t[j])) {
				v[n] = j;
				cv[n++] = c[j];
			}
		for (j = 0; j < n; j++)
			c[v[j]] = -1;
		make(rep, fs, v, cv, n);
	}
out:
	free(v);
	free(c);
	free(cv);
	free(t);
}
