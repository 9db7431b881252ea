/* tprof report: statistics across ranks.
 *
 * Names are joined on (category, name). A name's statistics are over the
 * ranks that have it: a rank without it is not a rank that spent 0 ns on
 * it (pipeline stages and rank-0-only work would otherwise look like
 * stragglers). Thresholds are compared on integers scaled by 100, so a
 * rank exactly 1.10 times the reference is flagged whatever the binary
 * fractions do.
 */
#include "report_data.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define STEP_PREFIX "ProfilerStep#"

/* Steps are reported in their own section (the aggregator keeps them out
 * of the calls rows; a hand-written summary may not), and torch's GPU-side
 * copies of them would be one name per step. */
int rp_is_step_name(const char *cat, const char *name)
{
	return (!strcmp(cat, "user_annotation") ||
		!strcmp(cat, "gpu_user_annotation")) &&
	       !strncmp(name, STEP_PREFIX, sizeof(STEP_PREFIX) - 1);
}

struct name_tab {
	uint32_t *slot;		/* name index + 1; 0: empty */
	size_t mask;
};

static uint64_t key_hash(const char *cat, const char *name)
{
	uint64_t h = 0xcbf29ce484222325ull;

	for (; *cat; cat++)
		h = (h ^ (unsigned char)*cat) * 0x100000001b3ull;
	h = (h ^ 0xff) * 0x100000001b3ull;
	for (; *name; name++)
		h = (h ^ (unsigned char)*name) * 0x100000001b3ull;
	return h;
}

static size_t count_rows(const struct rp_report *rep)
{
	size_t i, n = 0;

	for (i = 0; i < rep->nranks; i++)
		n += rep->ranks[i]->nrows;
	return n;
}

/* The name for (cat, name), added when new; NULL when out of memory. */
static struct rp_name *name_get(struct rp_report *rep, struct name_tab *t,
				const struct rp_row *row)
{
	size_t i = key_hash(row->cat, row->name) & t->mask;
	struct rp_name *nm;

	for (; t->slot[i]; i = (i + 1) & t->mask) {
		nm = &rep->names[t->slot[i] - 1];
		if (!strcmp(nm->cat, row->cat) && !strcmp(nm->name, row->name))
			return nm;
	}
	nm = &rep->names[rep->nnames];
	nm->rows = calloc(rep->nranks, sizeof(*nm->rows));
	if (!nm->rows)
		return NULL;
	nm->cat = row->cat;
	nm->name = row->name;
	t->slot[i] = (uint32_t)++rep->nnames;
	return nm;
}

static int collect(struct rp_report *rep)
{
	size_t total = count_rows(rep), size = 16, e, i;
	struct name_tab t;
	struct rp_name *nm;
	const struct rp_row *row;
	int ret = -1;

	while (size < total * 2)
		size *= 2;
	t.mask = size - 1;
	t.slot = calloc(size, sizeof(*t.slot));
	rep->names = calloc(total ? total : 1, sizeof(*rep->names));
	if (!t.slot || !rep->names)
		goto out;
	for (e = 0; e < rep->nranks; e++) {
		for (i = 0; i < rep->ranks[e]->nrows; i++) {
			row = &rep->ranks[e]->rows[i];
			if (rp_is_step_name(row->cat, row->name))
				continue;
			nm = name_get(rep, &t, row);
			if (!nm)
				goto out;
			/* a summary has one row per name; keep the first */
			if (!nm->rows[e])
				nm->rows[e] = row;
		}
	}
	ret = 0;
out:
	free(t.slot);
	return ret;
}

static void name_stats(const struct rp_report *rep, struct rp_name *nm)
{
	long double dev = 0, d, present;
	const struct rp_row *row;
	size_t e;

	nm->min_total = INT64_MAX;
	nm->max_total = INT64_MIN;
	for (e = 0; e < rep->nranks; e++) {
		row = nm->rows[e];
		if (!row)
			continue;
		nm->present++;
		nm->count += row->count;
		nm->sum_total += row->total;
		if (row->total < nm->min_total)
			nm->min_total = row->total;
		if (row->total > nm->max_total) {
			nm->max_total = row->total;
			nm->slowest = e;
		}
	}
	present = (long double)nm->present;
	nm->mean_total = nm->sum_total / present;
	for (e = 0; e < rep->nranks; e++) {
		if (!nm->rows[e])
			continue;
		d = nm->rows[e]->total - nm->mean_total;
		dev += d * d;
	}
	nm->std_total = sqrtl(dev / present);
	nm->mean_call = nm->count ? nm->sum_total / nm->count : 0;
	nm->imbalance = nm->mean_total > 0 ?
			nm->max_total / nm->mean_total : 1;
	/* max / mean >= 1.10 and max - mean >= 1 ms, times present */
	nm->straggler = nm->present >= 2 &&
		nm->max_total * present * 100 >= nm->sum_total * 110 &&
		nm->max_total * present - nm->sum_total >=
			RP_STRAGGLER_MIN_NS * present;
}

static int cmp_names(const void *a, const void *b)
{
	const struct rp_name *x = a, *y = b;
	int c;

	if (x->mean_total != y->mean_total)
		return x->mean_total > y->mean_total ? -1 : 1;
	c = strcmp(x->cat, y->cat);
	return c ? c : strcmp(x->name, y->name);
}

static int cmp_i64(const void *a, const void *b)
{
	int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;

	return x < y ? -1 : x > y;
}

static int cmp_ld(const void *a, const void *b)
{
	long double x = *(const long double *)a, y = *(const long double *)b;

	return x < y ? -1 : x > y;
}

static size_t warmup_steps(size_t n)
{
	return n >= RP_WARMUP_MORE ? 2 : n >= 3 ? 1 : 0;
}

static int step_ts_cmp(const void *a, const void *b)
{
	const struct rp_step *x = a, *y = b;

	return x->ts < y->ts ? -1 : x->ts > y->ts;
}

/* The verdict step: the nearest-rank median (ceil(m/2)-th shortest) of
 * the steps after the first warmup ones in time. The first steps hold
 * start-up (library load, allocation, autotuning, compilation): one of
 * them would make a healthy rank a straggler by its mean. */
static int rank_verdict(const struct rp_rank *r, struct rp_steps *st)
{
	struct rp_step *s = malloc(st->n * sizeof(*s));
	int64_t *d = malloc(st->n * sizeof(*d));
	size_t i, m;

	if (!s || !d) {
		free(s);
		free(d);
		return -1;
	}
	memcpy(s, r->steps, st->n * sizeof(*s));
	qsort(s, st->n, sizeof(*s), step_ts_cmp);
	st->warmup = warmup_steps(st->n);
	m = st->n - st->warmup;
	for (i = 0; i < m; i++)
		d[i] = s[st->warmup + i].dur;
	qsort(d, m, sizeof(*d), cmp_i64);
	st->verdict = d[(m + 1) / 2 - 1];
	free(s);
	free(d);
	return 0;
}

/* Mean, nearest-rank median and max of one rank's step times, and its
 * verdict step. */
static int rank_steps(const struct rp_rank *r, struct rp_steps *st)
{
	int64_t *d;
	long double sum = 0;
	size_t i;

	st->n = r->nsteps;
	if (!st->n)
		return 0;
	d = malloc(st->n * sizeof(*d));
	if (!d)
		return -1;
	for (i = 0; i < st->n; i++) {
		d[i] = r->steps[i].dur;
		sum += d[i];
	}
	qsort(d, st->n, sizeof(*d), cmp_i64);
	st->mean = sum / st->n;
	st->p50 = d[(st->n + 1) / 2 - 1];
	st->max = d[st->n - 1];
	free(d);
	return rank_verdict(r, st);
}

/* The reference is the lower median of the ranks' verdict steps: the
 * value of an actual rank, so with half the ranks slow it is a fast
 * one. The median of the ranks' means is kept for the tables. */
static int steps_stats(struct rp_report *rep)
{
	long double *means;
	int64_t *verdicts;
	size_t e, k = 0;

	rep->steps = calloc(rep->nranks ? rep->nranks : 1,
			    sizeof(*rep->steps));
	means = malloc((rep->nranks ? rep->nranks : 1) * sizeof(*means));
	verdicts = malloc((rep->nranks ? rep->nranks : 1) * sizeof(*verdicts));
	if (!rep->steps || !means || !verdicts)
		goto fail;
	for (e = 0; e < rep->nranks; e++) {
		if (rank_steps(rep->ranks[e], &rep->steps[e]))
			goto fail;
		if (!rep->steps[e].n)
			continue;
		verdicts[k] = rep->steps[e].verdict;
		means[k++] = rep->steps[e].mean;
	}
	rep->with_steps = k;
	if (k) {
		qsort(means, k, sizeof(*means), cmp_ld);
		qsort(verdicts, k, sizeof(*verdicts), cmp_i64);
		rep->steps_fastest = means[0];
		rep->steps_median = means[(k - 1) / 2];
		rep->steps_reference = verdicts[(k - 1) / 2];
	}
	free(means);
	free(verdicts);
	for (e = 0; e < rep->nranks; e++) {
		struct rp_steps *st = &rep->steps[e];

		if (!st->n)
			continue;
		st->vs_fastest = st->mean - rep->steps_fastest;
		st->straggler = k >= 2 && rep->steps_reference > 0 &&
			(long double)st->verdict * 100 >=
			(long double)rep->steps_reference * 110;
		rep->nstragglers += (size_t)st->straggler;
	}
	return 0;
fail:
	free(means);
	free(verdicts);
	return -1;
}

int rp_stats(struct rp_report *rep)
{
	size_t i;

	if (collect(rep) || steps_stats(rep))
		return -1;
	for (i = 0; i < rep->nnames; i++)
		name_stats(rep, &rep->names[i]);
	qsort(rep->names, rep->nnames, sizeof(*rep->names), cmp_names);
	for (i = 0; i < rep->nnames && i < rep->top; i++)
		rep->nstragglers += (size_t)rep->names[i].straggler;
	return 0;
}

void rp_stats_free(struct rp_report *rep)
{
	size_t i;

	for (i = 0; i < rep->nnames; i++)
		free(rep->names[i].rows);
	free(rep->names);
	free(rep->steps);
	rep->names = NULL;
	rep->steps = NULL;
	rep->nnames = 0;
}
