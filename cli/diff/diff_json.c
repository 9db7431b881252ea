/* tprof diff --json: every row, exact (docs/reference/diff-json.md).
 * Times in nanoseconds with three decimals (per step, a total divided
 * by the steps), bytes as integers; what a run cannot say is null. */
#include "diff_data.h"

#include <math.h>

static void str_or_null(struct tp_buf *b, const char *s)
{
	if (s)
		tp_json_str(b, s);
	else
		tp_buf_lit(b, "null");
}

static void val(struct tp_buf *b, const struct df_row *r, long double v)
{
	if (r->bytes)
		tp_json_i64(b, (int64_t)llroundl(v));
	else
		rp_json_milli(b, v);
}

static void side(struct tp_buf *b, const struct df_side *s, int per_run)
{
	tp_buf_lit(b, "{\"input\": ");
	tp_json_str(b, s->arg);
	tp_buf_lit(b, ", \"ranks\": ");
	tp_json_u64(b, s->rep.nranks);
	tp_buf_lit(b, ", \"summaries\": ");
	tp_json_u64(b, s->nsummaries);
	tp_buf_lit(b, ", \"traces\": ");
	tp_json_u64(b, s->ntraces);
	tp_buf_lit(b, ", \"ranks_with_steps\": ");
	tp_json_u64(b, s->with_steps);
	tp_buf_lit(b, ", \"steps_min\": ");
	rp_json_i64_or_null(b, s->with_steps ? (int64_t)s->steps_lo : RP_NONE);
	tp_buf_lit(b, ", \"steps_max\": ");
	rp_json_i64_or_null(b, s->with_steps ? (int64_t)s->steps_hi : RP_NONE);
	tp_buf_lit(b, ", \"per\": ");
	tp_json_str(b, per_run ? "run" : "step");
	tp_buf_lit(b, ", \"ranks_with_gpu\": ");
	tp_json_u64(b, s->with_gpu);
	tp_buf_lit(b, "}");
}

static void dist(struct tp_buf *b, const struct df_row *r,
		 const struct df_dist *d)
{
	if (!d->of) {
		tp_buf_lit(b, "null");
		return;
	}
	tp_buf_lit(b, "{\"ranks\": ");
	tp_json_u64(b, d->of);
	tp_buf_lit(b, ", \"present\": ");
	tp_json_u64(b, d->n);
	tp_buf_lit(b, ", \"median\": ");
	val(b, r, d->med);
	tp_buf_lit(b, ", \"max\": ");
	val(b, r, d->max);
	if (r->cat) {
		tp_buf_lit(b, ", \"calls_median\": ");
		rp_json_milli(b, d->cmed);
		tp_buf_lit(b, ", \"calls_max\": ");
		rp_json_milli(b, d->cmax);
	}
	tp_buf_lit(b, "}");
}

static void row(struct tp_buf *b, const struct df_row *r)
{
	int na = r->status == DF_NA;

	tp_buf_lit(b, "{\"name\": ");
	tp_json_str(b, r->name);
	tp_buf_lit(b, ", \"cat\": ");
	str_or_null(b, r->cat);
	tp_buf_lit(b, ", \"unit\": ");
	tp_json_str(b, r->bytes ? "bytes" : "ns");
	tp_buf_lit(b, ", \"status\": ");
	tp_json_str(b, df_status_name(r->status));
	tp_buf_lit(b, ", \"unavailable\": ");
	str_or_null(b, na ? r->na : NULL);
	tp_buf_lit(b, ", \"a\": ");
	dist(b, r, &r->v[0]);
	tp_buf_lit(b, ", \"b\": ");
	dist(b, r, &r->v[1]);
	tp_buf_lit(b, ", \"delta\": ");
	if (na)
		tp_buf_lit(b, "null");
	else
		val(b, r, r->delta);
	tp_buf_lit(b, ", \"delta_max\": ");
	if (na)
		tp_buf_lit(b, "null");
	else
		val(b, r, r->delta_max);
	tp_buf_lit(b, ", \"ratio\": ");
	if (na || !r->v[0].n || !r->v[1].n || r->v[0].med <= 0)
		tp_buf_lit(b, "null");
	else
		rp_json_ratio(b, r->v[1].med / r->v[0].med);
	tp_buf_lit(b, "}");
}

static void list(struct tp_buf *b, const struct df_diff *d, int t)
{
	size_t i;

	tp_buf_lit(b, "[");
	for (i = 0; i < d->t[t].n; i++) {
		tp_buf_cstr(b, i ? ",\n  " : "\n  ");
		row(b, &d->rows[d->t[t].v[i]]);
	}
	tp_buf_cstr(b, d->t[t].n ? "\n]" : "]");
}

void df_write_json(const struct df_diff *d, struct tp_buf *b)
{
	static const char *const key[DF_NTABLES] = {
		"changes", "cpu_calls", "ranges",
	};
	const struct df_side *a = &d->s[0], *bs = &d->s[1];
	int p, t;

	tp_buf_lit(b, "{\"schema\": \"tprof.diff\", \"schema_version\": 1,\n"
		   "\"a\": ");
	side(b, a, d->per_run[0]);
	tp_buf_lit(b, ",\n\"b\": ");
	side(b, bs, d->per_run[1]);
	tp_buf_lit(b, ",\n\"steps_differ\": ");
	tp_buf_cstr(b, a->with_steps && bs->with_steps &&
		    (a->steps_lo != bs->steps_lo ||
		     a->steps_hi != bs->steps_hi) ? "true" : "false");
	tp_buf_lit(b, ",\n\"breakdown\": [");
	for (p = 0; p < DF_NPARTS; p++) {
		tp_buf_cstr(b, p ? ",\n  " : "\n  ");
		row(b, &d->rows[p]);
	}
	tp_buf_lit(b, "\n]");
	for (t = 0; t < DF_NTABLES; t++) {
		rp_bprintf(b, ",\n\"%s\": ", key[t]);
		list(b, d, t);
	}
	tp_buf_lit(b, ",\n\"unchanged\": {");
	for (t = 0; t < DF_NTABLES; t++) {
		rp_bprintf(b, "%s\"%s\": ", t ? ", " : "", key[t]);
		tp_json_u64(b, d->t[t].unchanged);
	}
	tp_buf_lit(b, "}}\n");
}
