/* tprof diff: a row's cells. With one rank on each side the medians are
 * the values and the max columns would repeat them, so they are left
 * out; with more, both, and how many ranks have each name. */
#include "diff_cells.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

static void col(struct df_cells *c, const char *head, char align)
{
	c->head[c->ncols] = head;
	c->align[c->ncols++] = align;
}

void df_cells_head(const struct df_diff *d, int breakdown,
		   struct df_cells *c)
{
	int one = df_single(d);

	memset(c, 0, sizeof(*c));
	if (!breakdown)
		col(c, "#", 'r');
	c->name_col = (int)c->ncols;
	col(c, breakdown ? "figure" : "name", 'l');
	if (!breakdown)
		col(c, "kind", 'l');
	col(c, one ? "A" : "A median", 'r');
	if (!one)
		col(c, "A max", 'r');
	col(c, one ? "B" : "B median", 'r');
	if (!one)
		col(c, "B max", 'r');
	col(c, one ? "change" : "change (median)", 'r');
	if (!one)
		col(c, "change (max)", 'r');
	col(c, "ratio", 'r');
	if (!breakdown)
		col(c, "calls per step", 'r');
	if (!breakdown && !one)
		col(c, "ranks A, B", 'r');
	col(c, "note", 'l');
}

/* A change's cell: its text and its sign as written. */
static void change(struct df_cells *c, size_t *i, const struct df_row *r,
		   long double v)
{
	long long n = llroundl(v);

	c->sign[*i] = r->status == DF_NA ? 0 : n > 0 ? 1 : n < 0 ? -1 : 0;
	c->cell[*i] = df_fmt_delta(c->buf[*i], sizeof(c->buf[0]), r, v);
	(*i)++;
}

/* The next cell, formatted into its own buffer. */
static char *next(struct df_cells *c, size_t *i)
{
	c->cell[*i] = c->buf[*i];
	return c->buf[(*i)++];
}

void df_cells_row(const struct df_diff *d, const struct df_row *r,
		  size_t place, int breakdown, struct df_cells *c)
{
	const size_t B = sizeof(c->buf[0]);
	int one = df_single(d);
	size_t i = 0;

	df_cells_head(d, breakdown, c);
	if (!breakdown)
		snprintf(next(c, &i), B, "%zu", place);
	c->cell[i++] = r->name;
	if (!breakdown)
		c->cell[i++] = df_kind(r);
	df_fmt_val(next(c, &i), B, r, r->v[0].med, r->v[0].of && r->v[0].n);
	if (!one)
		df_fmt_val(next(c, &i), B, r, r->v[0].max,
			   r->v[0].of && r->v[0].n);
	df_fmt_val(next(c, &i), B, r, r->v[1].med, r->v[1].of && r->v[1].n);
	if (!one)
		df_fmt_val(next(c, &i), B, r, r->v[1].max,
			   r->v[1].of && r->v[1].n);
	change(c, &i, r, r->delta);
	if (!one)
		change(c, &i, r, r->delta_max);
	df_fmt_ratio(next(c, &i), B, r);
	if (!breakdown)
		df_fmt_calls(next(c, &i), B, r);
	if (!breakdown && !one)
		snprintf(next(c, &i), B, "%zu/%zu, %zu/%zu", r->v[0].n,
			 r->v[0].of, r->v[1].n, r->v[1].of);
	c->cell[i++] = df_status_words(r);
}
