/* Rule: slow ranks, and why.
 *
 * A rank is slow when its own step (metrics.c: its step less its
 * waiting in collectives) is RP_F_SLOW_RATIO times the median rank's
 * and RP_F_SLOW_MIN_NS longer. Its excess is then split by cause, each
 * named when it explains RP_F_CAUSE_SHARE of it:
 *
 * - its own GPU work is slower: kernels it calls as often per step as
 *   the median rank (within RP_F_SAME_CALLS) take RP_F_KERNEL_RATIO times
 *   as long per call (same kernels, so not more work: a slower GPU);
 * - it is host-bound: its GPU idles longer per step than the median
 *   rank's, waiting for work (rule_idle.c names the CPU ranges and calls
 *   that held its idle gaps);
 * - neither: the excess is said as such, with its figures.
 *
 * The slowest RP_F_EACH ranks get a finding each; further slow ranks of
 * one cause share one (a job with half its nodes slow is one answer).
 * Then the ranks that waited for them in collectives (rule_wait.c).
 */
#include "findings_int.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "summary/gpu.h"

#define RP_F_EACH 16

/* The median rank's figures of one kernel name. */
struct kref {
	long double mean, calls;	/* ns per call, calls per step */
	int ok;				/* on 2 ranks or more */
};

/* A slower kernel of one rank. */
struct kslow {
	size_t name;			/* index in rep->names */
	long double mean, calls, excess;
};

static int is_compute_kernel(const struct rp_name *nm)
{
	return !strcmp(nm->cat, "kernel") &&
	       tp_gpu_class(nm->name) != TP_GPU_COMM;
}

static struct kref *kernel_refs(const struct rp_report *rep)
{
	size_t n = rep->nranks ? rep->nranks : 1, i, e, k;
	struct kref *v = calloc(rep->nnames ? rep->nnames : 1, sizeof(*v));
	long double *mean = malloc(n * sizeof(*mean));
	long double *calls = malloc(n * sizeof(*calls));
	const struct rp_row *row;

	if (!v || !mean || !calls) {
		free(v);
		v = NULL;
		goto out;
	}
	for (i = 0; i < rep->nnames; i++) {
		if (!is_compute_kernel(&rep->names[i]))
			continue;
		for (e = 0, k = 0; e < rep->nranks; e++) {
			row = rep->names[i].rows[e];
			if (!row || !row->count)
				continue;
			mean[k] = (long double)row->total / row->count;
			calls[k++] = row->count / rep->m[e].div;
		}
		v[i].ok = k >= 2;
		v[i].mean = rp_f_median(mean, k);
		v[i].calls = rp_f_median(calls, k);
	}
out:
	free(mean);
	free(calls);
	return v;
}

/* The rank's kernels that are slower than the median rank's, the most
 * costly first in top[0..RP_F_TOP_NAMES); returns the excess of all per
 * step. */
static long double gpu_excess(const struct rp_report *rep,
			      const struct kref *kr, size_t e,
			      struct kslow *top, size_t *ntop)
{
	const struct rp_row *row;
	struct kslow x;
	long double sum = 0;
	size_t i, k;

	*ntop = 0;
	for (i = 0; i < rep->nnames; i++) {
		row = rep->names[i].rows[e];
		if (!kr[i].ok || !row || !row->count)
			continue;
		x.name = i;
		x.calls = row->count / rep->m[e].div;
		x.mean = (long double)row->total / row->count;
		if (fabsl(x.calls - kr[i].calls) >
		    RP_F_SAME_CALLS * kr[i].calls ||
		    x.mean < RP_F_KERNEL_RATIO * kr[i].mean)
			continue;
		x.excess = x.calls * (x.mean - kr[i].mean);
		sum += x.excess;
		for (k = *ntop; k && top[k - 1].excess < x.excess; k--)
			if (k < RP_F_TOP_NAMES)
				top[k] = top[k - 1];
		if (k < RP_F_TOP_NAMES) {
			top[k] = x;
			if (*ntop < RP_F_TOP_NAMES)
				(*ntop)++;
		}
	}
	return sum;
}

/* A name for a headline: long C++ kernel names cut. */
static const char *short_name(char *buf, size_t size, const char *name)
{
	if (strlen(name) < size)
		return name;
	memcpy(buf, name, size - 4);
	strcpy(buf + size - 4, "...");
	return buf;
}

static void slow_gpu(struct rp_report *rep, struct rp_findings *fs,
		     size_t e, long double excess, long double gx,
		     const struct kslow *top, size_t ntop)
{
	const char *names[RP_F_TOP_NAMES];
	struct tp_buf b = { 0 };
	struct rp_finding *f;
	char t[4][40], sn[52];
	size_t i;

	f = rp_f_add(fs, RP_F_SLOW_GPU, &e, 1, gx < excess ? gx : excess,
		     rep->m[e].step);
	if (!f)
		return;
	f->per_run = !rep->m[e].has_steps;
	f->title = rp_f_str(fs, "its kernels run slower than the other "
			    "ranks' (%s %s times)", short_name(sn, sizeof(sn),
			    rep->names[top[0].name].name),
			    rp_fmt_ratio(t[0], 40, top[0].mean /
					 (top[0].mean - top[0].excess /
					  top[0].calls)));
	rp_f_own_text(&b, rep, e);
	tp_buf_lit(&b, "Kernels it calls as often as the median rank take "
		   "longer per call:");
	for (i = 0; i < ntop; i++) {
		long double ref = top[i].mean - top[i].excess / top[i].calls;

		names[i] = rep->names[top[i].name].name;
		rp_bprintf(&b, "%s %s %s per call against %s (%s times, "
			   "%.1Lf calls per %s: %s)", i ? ";" : "", names[i],
			   rp_fmt_ns(t[0], 40, top[i].mean),
			   rp_fmt_ns(t[1], 40, ref),
			   rp_fmt_ratio(t[2], 40, top[i].mean / ref),
			   top[i].calls, f->per_run ? "run" : "step",
			   rp_fmt_diff(t[3], 40, top[i].excess));
	}
	rp_bprintf(&b, ". All its slower kernels: %s per %s.",
		   rp_fmt_diff(t[0], 40, gx), f->per_run ? "run" : "step");
	f->evidence = b.oom ? NULL : rp_f_str(fs, "%.*s", (int)b.len, b.p);
	rp_f_names(fs, f, "kernels", names, ntop);
	b.len = 0;
	tp_buf_lit(&b, "the kernels ");
	for (i = 0; i < ntop; i++)
		rp_bprintf(&b, "%s%s", i ? ", " : "",
			   short_name(sn, sizeof(sn), names[i]));
	tp_buf_char(&b, 0);
	rp_f_where_rank(rep, fs, f, e, b.oom ? "its kernels" : b.p);
	tp_buf_free(&b);
	f->try_ = rp_f_str(fs, "The same kernels, as often, take longer on "
			   "this GPU: compare it with the others' (clocks and "
			   "throttle reasons: nvidia-smi -q -d PERFORMANCE,"
			   "CLOCK,TEMPERATURE,POWER; another process on it: "
			   "nvidia-smi; its links: nvidia-smi topo -m; ECC "
			   "errors), and replace or drain the node if it stays "
			   "slower. If this rank's inputs differ (longer "
			   "sequences, other shapes), balance the work.");
}

static void slow_other(struct rp_report *rep, struct rp_findings *fs,
		       size_t e, long double excess)
{
	const struct rp_rankm *m = &rep->m[e], *ref = &rep->ref;
	struct tp_buf b = { 0 };
	struct rp_finding *f;
	char t[6][40];

	f = rp_f_add(fs, RP_F_SLOW_OTHER, &e, 1, excess, m->step);
	if (!f)
		return;
	f->per_run = !m->has_steps;
	f->title = rp_f_str(fs, "slower than the median rank, neither in "
			    "its kernels nor in GPU idle time");
	rp_f_own_text(&b, rep, e);
	if (m->has_gpu)
		rp_bprintf(&b, "Per %s: computation %s (median rank %s), GPU "
			   "idle %s (%s), communication %s (%s).",
			   m->has_steps ? "step" : "run",
			   rp_fmt_ns(t[0], 40, m->compute),
			   rp_fmt_ns(t[1], 40, ref->compute),
			   rp_fmt_ns(t[2], 40, m->idle),
			   rp_fmt_ns(t[3], 40, ref->idle),
			   rp_fmt_ns(t[4], 40, m->comm),
			   rp_fmt_ns(t[5], 40, ref->comm));
	else
		tp_buf_lit(&b, "Its summary has no GPU figures (written at "
			   "exit by an older tprof, or a trace without GPU "
			   "activity): --traces reads the trace.");
	f->evidence = b.oom ? NULL : rp_f_str(fs, "%.*s", (int)b.len, b.p);
	tp_buf_free(&b);
	rp_f_where_rank(rep, fs, f, e, "all of its step");
	f->try_ = rp_f_str(fs, "Open its trace at its slowest step (tprof "
			   "convert, then Perfetto) and compare it with a "
			   "median rank's: the time is on the CPU side or in "
			   "work this report does not split.");
}

/* One finding for the slow ranks past the first RP_F_EACH of a cause. */
static void group(struct rp_report *rep, struct rp_findings *fs,
		  enum rp_fkind k, size_t *e, long double *cost, size_t n)
{
	static const char *const title[] = {
		[RP_F_SLOW_GPU] = "their kernels run slower than the median "
				  "rank's",
		[RP_F_HOST_BOUND] = "their GPUs wait for their hosts",
		[RP_F_SLOW_OTHER] = "slower than the median rank",
	};
	long double *tmp, med;
	struct rp_finding *f;
	char t[40];

	if (!n)
		return;
	tmp = malloc(n * sizeof(*tmp));
	if (!tmp) {
		fs->oom = 1;
		return;
	}
	memcpy(tmp, cost, n * sizeof(*tmp));
	med = rp_f_median(tmp, n);
	free(tmp);
	f = rp_f_add(fs, k, e, n, med, rep->ref.step);
	if (!f)
		return;
	f->title = rp_f_str(fs, "%s", title[k]);
	f->where = rp_f_str(fs, "the %zu slow ranks past the %d slowest, "
			    "which have findings of their own", n, RP_F_EACH);
	f->evidence = rp_f_str(fs, "The median of them loses %s per step "
			       "this way; each rank's figures are in the "
			       "per-rank table and in --json.",
			       rp_fmt_ns(t, sizeof(t), med));
	f->try_ = rp_f_str(fs, "See the finding of the same kind about a "
			   "single rank above: the same applies to these.");
}

struct pending {
	size_t *e;
	long double *cost;
	size_t n;
};

static int pend(struct pending *p, size_t e, long double cost)
{
	void *x = realloc(p->e, (p->n + 1) * sizeof(*p->e));

	if (!x)
		return -1;
	p->e = x;
	x = realloc(p->cost, (p->n + 1) * sizeof(*p->cost));
	if (!x)
		return -1;
	p->cost = x;
	p->e[p->n] = e;
	p->cost[p->n++] = cost;
	return 0;
}

int rp_f_is_slow(const struct rp_report *rep, size_t e)
{
	const struct rp_rankm *m = &rep->m[e];

	return m->step > 0 && rep->ref.own > 0 &&
	       m->own >= RP_F_SLOW_RATIO * rep->ref.own &&
	       m->own - rep->ref.own >= RP_F_SLOW_MIN_NS;
}

static int cmp_size(const void *a, const void *b)
{
	size_t x = *(const size_t *)a, y = *(const size_t *)b;

	return x < y ? -1 : x > y;
}

int rp_rule_slow(struct rp_report *rep, struct rp_findings *fs)
{
	struct pending more[RP_F_NKINDS] = { { 0 } };
	struct kslow top[RP_F_TOP_NAMES];
	size_t i, e, ntop, nslow = 0, *slow;
	struct kref *kr;
	long double excess, gx, ix;
	int ret = -1, named;

	if (rep->nranks < 2)
		return 0;
	kr = kernel_refs(rep);
	slow = rp_f_per_rank(rep, sizeof(*slow));
	if (!kr || !slow)
		goto out;
	for (i = 0; i < rep->nranks && rp_f_is_slow(rep, rep->order[i]); i++) {
		e = rep->order[i];
		slow[nslow++] = e;
		excess = rep->m[e].own - rep->ref.own;
		gx = gpu_excess(rep, kr, e, top, &ntop);
		ix = rep->m[e].has_gpu ? rep->m[e].idle - rep->ref.idle : 0;
		named = 0;
		if (ntop && gx >= RP_F_CAUSE_SHARE * excess) {
			named = 1;
			if (i >= RP_F_EACH) {
				if (pend(&more[RP_F_SLOW_GPU], e,
					 gx < excess ? gx : excess))
					goto out;
			} else {
				slow_gpu(rep, fs, e, excess, gx, top, ntop);
			}
		}
		if (ix >= RP_F_CAUSE_SHARE * excess) {
			named = 1;
			if (i >= RP_F_EACH) {
				if (pend(&more[RP_F_HOST_BOUND], e,
					 ix < excess ? ix : excess))
					goto out;
			} else {
				rp_f_host_bound(rep, fs, e, excess, ix);
			}
		}
		if (named)
			continue;
		if (i >= RP_F_EACH) {
			if (pend(&more[RP_F_SLOW_OTHER], e, excess))
				goto out;
		} else {
			slow_other(rep, fs, e, excess);
		}
	}
	for (i = 0; i < RP_F_NKINDS; i++) {
		if (more[i].n)
			qsort(more[i].e, more[i].n, sizeof(size_t), cmp_size);
		group(rep, fs, (enum rp_fkind)i, more[i].e, more[i].cost,
		      more[i].n);
	}
	if (nslow)
		qsort(slow, nslow, sizeof(*slow), cmp_size);
	rp_f_waiting(rep, fs, slow, nslow);
	ret = 0;
out:
	for (i = 0; i < RP_F_NKINDS; i++) {
		free(more[i].e);
		free(more[i].cost);
	}
	free(kr);
	free(slow);
	return ret;
}
