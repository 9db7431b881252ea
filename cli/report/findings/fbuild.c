/* Inside the findings: what every rule builds a finding with (a new
 * finding, its strings and names) and the statistics they share. The
 * bottom of findings/: it calls nothing of the rules'. */
#define _GNU_SOURCE	/* vasprintf, qsort_r */
#include "findings_int.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct rp_finding *rp_f_add(struct rp_findings *fs, enum rp_fkind k,
			    const size_t *e, size_t n, long double cost,
			    long double step)
{
	struct rp_finding *f, *v;
	size_t cap;

	if (fs->oom)
		return NULL;
	if (fs->n == fs->cap) {
		cap = fs->cap ? fs->cap * 2 : 16;
		v = realloc(fs->v, cap * sizeof(*v));
		if (!v)
			goto oom;
		fs->v = v;
		fs->cap = cap;
	}
	f = &fs->v[fs->n];
	memset(f, 0, sizeof(*f));
	f->ranks = malloc((n ? n : 1) * sizeof(*f->ranks));
	if (!f->ranks)
		goto oom;
	memcpy(f->ranks, e, n * sizeof(*e));
	f->nranks = n;
	f->kind = k;
	f->cost = cost;
	f->step = step;
	f->step_index = RP_NONE;
	fs->n++;
	return f;
oom:
	fs->oom = 1;
	return NULL;
}

void *rp_f_per_rank(const struct rp_report *rep, size_t size)
{
	return malloc((rep->nranks ? rep->nranks : 1) * size);
}

char *rp_f_str(struct rp_findings *fs, const char *fmt, ...)
{
	va_list ap;
	char *s;
	int n;

	va_start(ap, fmt);
	n = vasprintf(&s, fmt, ap);
	va_end(ap);
	if (n < 0) {
		fs->oom = 1;
		return NULL;
	}
	return s;
}

void rp_f_names(struct rp_findings *fs, struct rp_finding *f,
		const char *are, const char **names, size_t n)
{
	if (!n)
		return;
	f->names = malloc(n * sizeof(*names));
	if (!f->names) {
		fs->oom = 1;
		return;
	}
	memcpy(f->names, names, n * sizeof(*names));
	f->nnames = n;
	f->names_are = are;
}

static int ld_cmp(const void *a, const void *b)
{
	long double x = *(const long double *)a, y = *(const long double *)b;

	return x < y ? -1 : x > y;
}

long double rp_f_median(long double *v, size_t n)
{
	if (!n)
		return 0;
	qsort(v, n, sizeof(*v), ld_cmp);
	return v[(n - 1) / 2];
}

int rp_f_cat(const struct rp_row *row, const char *cat)
{
	return !strcmp(row->cat, cat);
}

long double rp_f_floor(long double step)
{
	long double f = RP_F_MIN_SHARE * step;

	return f > RP_F_MIN_NS ? f : RP_F_MIN_NS;
}

static int by_cost(const void *a, const void *b, void *arg)
{
	const long double *c = arg;
	size_t x = *(const size_t *)a, y = *(const size_t *)b;

	if (c[x] != c[y])
		return c[x] < c[y] ? -1 : 1;
	return x < y ? -1 : 1;
}

struct rp_finding *rp_f_job(struct rp_findings *fs,
			    const struct rp_report *rep, enum rp_fkind k,
			    const size_t *v, const long double *c, size_t n,
			    size_t *med)
{
	size_t *idx, i, m;
	struct rp_finding *f;

	if (!n)
		return NULL;
	idx = malloc(n * sizeof(*idx));
	if (!idx) {
		fs->oom = 1;
		return NULL;
	}
	for (i = 0; i < n; i++)
		idx[i] = i;
	qsort_r(idx, n, sizeof(*idx), by_cost, (void *)c);
	m = idx[(n - 1) / 2];
	free(idx);
	*med = v[m];
	f = rp_f_add(fs, k, v, n, c[m], n == 1 ? rep->m[v[m]].step :
		     rep->ref.step);
	if (f)
		f->per_run = !rep->m[v[m]].has_steps;
	return f;
}
