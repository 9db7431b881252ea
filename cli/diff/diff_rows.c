/* tprof diff: the rows. Names are joined on (category, name) across the
 * two runs; each row holds, per run, one figure's lower median and max
 * over the run's ranks (a rank without the name spent 0 ns on it, so
 * the median is the typical rank's; GPU names are taken over the ranks
 * that recorded GPU work at all, since a rank without CUPTI did not
 * spend 0 ns in kernels), and the rows are ranked by impact: the larger
 * of the change of the median rank and of the slowest rank, which a
 * synchronous job's other ranks wait for. Calls cli/report's data only.
 */
#define _GNU_SOURCE	/* qsort_r */
#include "diff_data.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *const part_names[DF_NPARTS] = {
	"step", "GPU busy", "compute", "communication",
	"exposed communication", "GPU idle", "memory peak",
};

static int ld_cmp(const void *a, const void *b)
{
	long double x = *(const long double *)a, y = *(const long double *)b;

	return x < y ? -1 : x > y;
}

/* Lower median and max of v[0..n), into *med and *max. */
static void med_max(long double *v, size_t n, long double *med,
		    long double *max)
{
	*med = *max = 0;
	if (!n)
		return;
	qsort(v, n, sizeof(*v), ld_cmp);
	*med = v[(n - 1) / 2];
	*max = v[n - 1];
}

static enum df_group group_of(const char *cat)
{
	if (!strcmp(cat, "kernel") || !strcmp(cat, "gpu_memcpy") ||
	    !strcmp(cat, "gpu_memset"))
		return DF_GPU;
	if (!strcmp(cat, "user_annotation") ||
	    !strcmp(cat, "gpu_user_annotation"))
		return DF_RANGES;
	return DF_OPS;
}

/* One part's figure of rank e, and whether the rank has it. */
static int part_of(const struct df_side *s, size_t e, int p, long double *v)
{
	const struct rp_rankm *m = &s->rep.m[e];
	int64_t peak;

	switch (p) {
	case DF_P_STEP:
		*v = m->step;
		return m->step > 0;
	case DF_P_MEMORY:
		peak = rp_mem_peak(s->rep.ranks[e]);
		*v = (long double)peak;
		return peak != RP_NONE;
	}
	if (!m->has_gpu)
		return 0;
	*v = p == DF_P_BUSY ? m->busy : p == DF_P_COMPUTE ? m->compute :
	     p == DF_P_COMM ? m->comm : p == DF_P_EXPOSED ? m->exposed :
	     m->idle;
	return 1;
}

static void part_dist(const struct df_side *s, int p, long double *tmp,
		      struct df_dist *d)
{
	size_t e;

	for (e = 0; e < s->rep.nranks; e++)
		if (part_of(s, e, p, &tmp[d->of]))
			d->of++;
	d->n = d->of;
	med_max(tmp, d->of, &d->med, &d->max);
}

/* Why run k (0: A) cannot give part p. */
static void part_na(const struct df_side *s, int k, int p, char *buf,
		    size_t size)
{
	const char *run = k ? "B" : "A";

	if (p == DF_P_STEP)
		snprintf(buf, size, "%s: no steps and no wall time", run);
	else if (p == DF_P_MEMORY)
		snprintf(buf, size, "%s: no device memory recorded", run);
	else if (s->nsummaries && !s->ntraces)
		snprintf(buf, size, "%s: its summaries have no GPU analyses "
			 "(written without GPU activity, or before schema "
			 "version 2): give its traces", run);
	else
		snprintf(buf, size, "%s: no GPU activity recorded", run);
}

/* A name's figures in run s (nm: NULL when the run lacks it). */
static void name_dist(const struct df_side *s, const struct rp_name *nm,
		      enum df_group g, long double *tmp, long double *ctmp,
		      struct df_dist *d)
{
	const struct rp_row *row;
	long double div;
	size_t e;

	for (e = 0; e < s->rep.nranks; e++) {
		if (g == DF_GPU && !s->gpu_rows[e])
			continue;
		row = nm ? nm->rows[e] : NULL;
		div = s->rep.m[e].div > 0 ? s->rep.m[e].div : 1;
		tmp[d->of] = row ? row->total / div : 0;
		ctmp[d->of] = row ? row->count / div : 0;
		d->of++;
		d->n += row != NULL;
	}
	med_max(tmp, d->of, &d->med, &d->max);
	med_max(ctmp, d->of, &d->cmed, &d->cmax);
}

/* Calls per step differ as the tables write them (two decimals). */
static int calls_differ(const struct df_dist *a, const struct df_dist *b)
{
	return llroundl(a->cmed * 100) != llroundl(b->cmed * 100) ||
	       llroundl(a->cmax * 100) != llroundl(b->cmax * 100);
}

/* A change is one of at least 1 ns (or byte) as the tables write it:
 * below, two runs of the same kernels differ by their clocks' rounding. */
static void settle(struct df_row *r)
{
	const struct df_dist *a = &r->v[0], *b = &r->v[1];

	if (r->status == DF_NA)
		return;
	r->delta = b->med - a->med;
	r->delta_max = b->max - a->max;
	r->impact = fabsl(r->delta) > fabsl(r->delta_max) ?
		    fabsl(r->delta) : fabsl(r->delta_max);
	if (r->cat && !a->n)
		r->status = DF_NEW;
	else if (r->cat && !b->n)
		r->status = DF_GONE;
	else if (r->cat && calls_differ(a, b))
		r->status = DF_CALLS;
	else if (llroundl(r->delta) || llroundl(r->delta_max))
		r->status = DF_CHANGED;
	else
		r->status = DF_SAME;
}

static void build_parts(struct df_diff *d, long double *tmp)
{
	struct df_row *r;
	int p, k;

	for (p = 0; p < DF_NPARTS; p++) {
		r = &d->rows[p];
		r->group = DF_PART;
		r->name = part_names[p];
		r->bytes = p == DF_P_MEMORY;
		for (k = 0; k < 2; k++) {
			part_dist(&d->s[k], p, tmp, &r->v[k]);
			if (!r->v[k].of && r->status != DF_NA) {
				r->status = DF_NA;
				part_na(&d->s[k], k, p, r->na, sizeof(r->na));
			}
		}
		settle(r);
	}
}

/* A name of either run, for the join. */
struct ref {
	const struct rp_name *nm;
	int side;
};

static int ref_cmp(const void *a, const void *b)
{
	const struct ref *x = a, *y = b;
	int c = strcmp(x->nm->cat, y->nm->cat);

	if (!c)
		c = strcmp(x->nm->name, y->nm->name);
	return c ? c : x->side - y->side;
}

static void build_name(struct df_diff *d, const struct rp_name *nm[2],
		       long double *tmp, long double *ctmp)
{
	struct df_row *r = &d->rows[d->nrows++];
	const struct rp_name *any = nm[0] ? nm[0] : nm[1];
	int k;

	r->cat = any->cat;
	r->name = any->name;
	r->group = group_of(r->cat);
	for (k = 0; k < 2; k++) {
		name_dist(&d->s[k], nm[k], r->group, tmp, ctmp, &r->v[k]);
		if (!r->v[k].of && r->status != DF_NA) {
			r->status = DF_NA;
			snprintf(r->na, sizeof(r->na), "%s: no GPU activity "
				 "recorded", k ? "B" : "A");
		}
	}
	settle(r);
}

static int build_names(struct df_diff *d, long double *tmp,
		       long double *ctmp)
{
	size_t n = d->s[0].rep.nnames + d->s[1].rep.nnames, i, k = 0;
	struct ref *v = malloc((n ? n : 1) * sizeof(*v));
	const struct rp_name *pair[2];
	int s;

	if (!v)
		return -1;
	for (s = 0; s < 2; s++)
		for (i = 0; i < d->s[s].rep.nnames; i++) {
			v[k].nm = &d->s[s].rep.names[i];
			v[k++].side = s;
		}
	qsort(v, n, sizeof(*v), ref_cmp);
	for (i = 0; i < n; i++) {
		pair[0] = pair[1] = NULL;
		pair[v[i].side] = v[i].nm;
		if (i + 1 < n && v[i].side == 0 && v[i + 1].side == 1 &&
		    !strcmp(v[i].nm->cat, v[i + 1].nm->cat) &&
		    !strcmp(v[i].nm->name, v[i + 1].nm->name))
			pair[1] = v[++i].nm;
		build_name(d, pair, tmp, ctmp);
	}
	free(v);
	return 0;
}

/* Most impact first; then calls changes before unchanged calls, then by
 * category and name, so the order is total. */
static int row_cmp(const void *a, const void *b, void *arg)
{
	const struct df_row *rows = arg;
	const struct df_row *x = &rows[*(const size_t *)a];
	const struct df_row *y = &rows[*(const size_t *)b];
	int c;

	if (x->impact != y->impact)
		return x->impact > y->impact ? -1 : 1;
	if ((x->status == DF_CALLS) != (y->status == DF_CALLS))
		return x->status == DF_CALLS ? -1 : 1;
	c = strcmp(x->cat ? x->cat : "", y->cat ? y->cat : "");
	return c ? c : strcmp(x->name, y->name);
}

/* Which table a row is listed in, or -1. The changes table holds GPU
 * work per name and the parts of the step no name owns (exposed
 * communication, idle): their changes add up to the step's on a
 * GPU-bound step. CPU-side calls and ranges include waiting for the GPU
 * and nest, so they get tables of their own. */
static int table_of(const struct df_row *r)
{
	if (r->group == DF_GPU)
		return DF_T_CHANGES;
	if (r->group == DF_OPS)
		return DF_T_OPS;
	if (r->group == DF_RANGES)
		return DF_T_RANGES;
	return !strcmp(r->name, "exposed communication") ||
	       !strcmp(r->name, "GPU idle") ? DF_T_CHANGES : -1;
}

static int build_tables(struct df_diff *d)
{
	struct df_list *l;
	size_t i;
	int t;

	for (t = 0; t < DF_NTABLES; t++) {
		d->t[t].v = malloc((d->nrows ? d->nrows : 1) * sizeof(size_t));
		if (!d->t[t].v)
			return -1;
	}
	for (i = 0; i < d->nrows; i++) {
		t = table_of(&d->rows[i]);
		if (t < 0)
			continue;
		l = &d->t[t];
		if (d->rows[i].status == DF_SAME)
			l->unchanged++;
		else
			l->v[l->n++] = i;
	}
	for (t = 0; t < DF_NTABLES; t++)
		qsort_r(d->t[t].v, d->t[t].n, sizeof(size_t), row_cmp,
			d->rows);
	return 0;
}

int df_rows_build(struct df_diff *d)
{
	size_t n = d->s[0].rep.nnames + d->s[1].rep.nnames + DF_NPARTS;
	size_t nr = d->s[0].rep.nranks + d->s[1].rep.nranks + 1;
	long double *tmp = malloc(nr * sizeof(*tmp));
	long double *ctmp = malloc(nr * sizeof(*ctmp));
	int k, ret = -1;

	d->rows = calloc(n, sizeof(*d->rows));
	if (!tmp || !ctmp || !d->rows)
		goto out;
	for (k = 0; k < 2; k++)
		d->per_run[k] = d->s[k].with_steps < d->s[k].rep.nranks;
	build_parts(d, tmp);
	d->nrows = DF_NPARTS;
	if (build_names(d, tmp, ctmp) || build_tables(d))
		goto out;
	ret = 0;
out:
	free(tmp);
	free(ctmp);
	return ret;
}

void df_rows_free(struct df_diff *d)
{
	int t;

	for (t = 0; t < DF_NTABLES; t++)
		free(d->t[t].v);
	free(d->rows);
	d->rows = NULL;
	d->nrows = 0;
}
