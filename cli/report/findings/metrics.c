/* tprof report: each rank's figures per step, the rules' common ground.
 *
 * A rank's totals (GPU busy, idle, computation, communication, kernels)
 * are divided by its steps, so ranks that ran different numbers of steps
 * compare; a rank without steps is taken per run. Its step is its
 * verdict step (report_stats.c: the median after the warm-up ones).
 *
 * In a synchronous job every rank's step lasts as long as the slowest
 * rank's: a fast rank spends the difference waiting inside a collective,
 * which shows as exposed communication above the least-waiting rank's.
 * A rank's own step is its step less that waiting, and ranks are ordered
 * by it: the slow rank is the one the others wait for, even when all
 * steps are equally long.
 */
#define _GNU_SOURCE	/* qsort_r */
#include "findings_int.h"

#include <stddef.h>
#include <stdlib.h>
#include <string.h>

static void rank_figures(const struct rp_report *rep, size_t e,
			 struct rp_rankm *m)
{
	const struct rp_rank *r = rep->ranks[e];
	const struct rp_gpu *g = &r->gpu;

	m->has_steps = rep->steps[e].n > 0;
	m->div = m->has_steps ? (long double)r->steps_count : 1;
	if (m->has_steps)
		m->step = rep->steps[e].verdict;
	else
		m->step = r->wall_ns == RP_NONE ? 0 : r->wall_ns;
	m->has_gpu = g->present && g->span_ns != RP_NONE && g->span_ns > 0;
	if (!m->has_gpu)
		return;
	m->busy = (g->busy_ns == RP_NONE ? 0 : g->busy_ns) / m->div;
	m->idle = (g->idle_ns == RP_NONE ? 0 : g->idle_ns) / m->div;
	m->compute = (g->compute_ns == RP_NONE ? 0 : g->compute_ns) / m->div;
	m->comm = (g->comm_ns == RP_NONE ? 0 : g->comm_ns) / m->div;
	m->exposed = m->comm - (g->overlap_ns == RP_NONE ? 0 :
				g->overlap_ns) / m->div;
	if (m->exposed < 0)
		m->exposed = 0;
	m->kernels = (long double)g->kernels / m->div;
}

/* The lower median of one figure over the ranks it applies to. */
static long double median_of(const struct rp_report *rep, long double *tmp,
			     size_t off, int gpu_only)
{
	size_t e, n = 0;

	for (e = 0; e < rep->nranks; e++) {
		if (gpu_only && !rep->m[e].has_gpu)
			continue;
		if (!gpu_only && rep->m[e].step <= 0)
			continue;
		tmp[n++] = *(const long double *)((const char *)&rep->m[e] +
						  off);
	}
	return rp_f_median(tmp, n);
}

/* Slowest own step first; then by entry, so the order is total. */
static int own_cmp(const void *a, const void *b, void *arg)
{
	const struct rp_report *rep = arg;
	const struct rp_rankm *x = &rep->m[*(const size_t *)a];
	const struct rp_rankm *y = &rep->m[*(const size_t *)b];

	if (x->own != y->own)
		return x->own > y->own ? -1 : 1;
	return *(const size_t *)a < *(const size_t *)b ? -1 : 1;
}

#define OFF(f) offsetof(struct rp_rankm, f)

int rp_f_metrics(struct rp_report *rep)
{
	size_t e, n = rep->nranks ? rep->nranks : 1;
	long double *tmp = malloc(n * sizeof(*tmp));
	int any_gpu = 0;

	rep->m = calloc(n, sizeof(*rep->m));
	rep->order = malloc(n * sizeof(*rep->order));
	if (!tmp || !rep->m || !rep->order) {
		free(tmp);
		return -1;
	}
	rep->min_exposed = 0;
	for (e = 0; e < rep->nranks; e++) {
		rank_figures(rep, e, &rep->m[e]);
		if (rep->m[e].has_gpu && (!any_gpu ||
		    rep->m[e].exposed < rep->min_exposed))
			rep->min_exposed = rep->m[e].exposed;
		any_gpu |= rep->m[e].has_gpu;
	}
	for (e = 0; e < rep->nranks; e++) {
		struct rp_rankm *m = &rep->m[e];

		m->own = m->step - (m->has_gpu ? m->exposed -
				    rep->min_exposed : 0);
		rep->order[e] = e;
	}
	rep->ref.step = median_of(rep, tmp, OFF(step), 0);
	rep->ref.own = median_of(rep, tmp, OFF(own), 0);
	rep->ref.busy = median_of(rep, tmp, OFF(busy), 1);
	rep->ref.idle = median_of(rep, tmp, OFF(idle), 1);
	rep->ref.compute = median_of(rep, tmp, OFF(compute), 1);
	rep->ref.comm = median_of(rep, tmp, OFF(comm), 1);
	rep->ref.exposed = median_of(rep, tmp, OFF(exposed), 1);
	rep->ref.kernels = median_of(rep, tmp, OFF(kernels), 1);
	free(tmp);
	if (rep->nranks)
		qsort_r(rep->order, rep->nranks, sizeof(*rep->order), own_cmp,
			rep);
	return 0;
}
