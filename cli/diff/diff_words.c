/* tprof diff: the words and numbers the Markdown and the HTML share, so
 * the two cannot say different things. Calls cli/report's formatting. */
#include "diff_data.h"

#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

const char *df_status_name(enum df_status st)
{
	static const char *const n[] = {
		"same", "changed", "calls", "new", "vanished", "unavailable",
	};

	return n[st];
}

const char *df_status_words(const struct df_row *r)
{
	long double dv = r->delta ? r->delta : r->delta_max;

	switch (r->status) {
	case DF_SAME:
		return "";
	case DF_CHANGED:
		/* a name or the step takes longer; a part has more of it */
		if (r->cat || !strcmp(r->name, "step"))
			return dv > 0 ? "slower" : "faster";
		return dv > 0 ? "more" : "less";
	case DF_CALLS:
		return "calls per step changed";
	case DF_NEW:
		return "new";
	case DF_GONE:
		return "vanished";
	case DF_NA:
		return r->na;
	}
	return "";
}

static void plural(struct tp_buf *b, size_t n, const char *one,
		   const char *many)
{
	rp_bprintf(b, "%zu %s", n, n == 1 ? one : many);
}

void df_side_words(struct tp_buf *b, const struct df_side *s)
{
	plural(b, s->rep.nranks, "rank", "ranks");
	tp_buf_lit(b, " (");
	if (s->nsummaries)
		plural(b, s->nsummaries, "summary", "summaries");
	if (s->nsummaries && s->ntraces)
		tp_buf_lit(b, ", ");
	if (s->ntraces)
		plural(b, s->ntraces, "trace", "traces");
	tp_buf_lit(b, ")");
}

static void steps_of(struct tp_buf *b, const struct df_side *s,
		     const char *run)
{
	if (!s->with_steps) {
		rp_bprintf(b, "%s: no steps, its figures are per run", run);
		return;
	}
	if (s->steps_lo == s->steps_hi)
		rp_bprintf(b, "%s: %" PRIu64 " steps per rank", run,
			   s->steps_lo);
	else
		rp_bprintf(b, "%s: %" PRIu64 " to %" PRIu64 " steps per rank",
			   run, s->steps_lo, s->steps_hi);
	if (s->with_steps < s->rep.nranks)
		rp_bprintf(b, " (%zu of its %zu ranks have none: per run "
			   "there)", s->rep.nranks - s->with_steps,
			   s->rep.nranks);
}

void df_steps_words(struct tp_buf *b, const struct df_diff *d)
{
	const struct df_side *a = &d->s[0], *bs = &d->s[1];

	tp_buf_lit(b, "Steps: the ProfilerStep#N spans, as tprof report "
		   "finds them (tprof_step, --torch-steps, TPROF_STEP_NVTX, "
		   "torch.profiler's steps). ");
	steps_of(b, a, "A");
	tp_buf_lit(b, "; ");
	steps_of(b, bs, "B");
	if (a->with_steps && bs->with_steps &&
	    (a->steps_lo != bs->steps_lo || a->steps_hi != bs->steps_hi))
		tp_buf_lit(b, ". The step counts differ: every time is per "
			   "step, so the runs compare");
	if (!a->with_steps != !bs->with_steps)
		tp_buf_lit(b, ". One run has steps and the other none: "
			   "per step against per run, they do not compare");
	tp_buf_lit(b, ". A rank's step time is its median step after "
		   "start-up (its first step; its first two from 10 steps), "
		   "as tprof report's.");
}

const char *df_fmt_val(char *buf, size_t size, const struct df_row *r,
		       long double v, size_t have)
{
	if (!have)
		snprintf(buf, size, "-");
	else if (r->bytes)
		rp_fmt_bytes(buf, size, (int64_t)llroundl(v));
	else
		rp_fmt_ns(buf, size, v);
	return buf;
}

const char *df_fmt_delta(char *buf, size_t size, const struct df_row *r,
			 long double v)
{
	if (r->status == DF_NA) {
		snprintf(buf, size, "-");
	} else if (r->bytes) {
		buf[0] = v < 0 ? '-' : '+';
		rp_fmt_bytes(buf + 1, size - 1, (int64_t)llroundl(fabsl(v)));
	} else {
		rp_fmt_diff(buf, size, v);
	}
	return buf;
}

const char *df_fmt_ratio(char *buf, size_t size, const struct df_row *r)
{
	size_t n;

	if (r->status == DF_NA || !r->v[0].n || !r->v[1].n ||
	    r->v[0].med <= 0) {
		snprintf(buf, size, "-");
		return buf;
	}
	rp_fmt_ratio(buf, size, r->v[1].med / r->v[0].med);
	n = strlen(buf);
	snprintf(buf + n, size - n, "x");
	return buf;
}

/* Two decimals, trailing zeros dropped: "1", "1.5", "0.25". */
static void calls(char *buf, size_t size, long double v)
{
	long long c = llroundl(v * 100);

	if (c % 100 == 0)
		snprintf(buf, size, "%lld", c / 100);
	else if (c % 10 == 0)
		snprintf(buf, size, "%lld.%lld", c / 100, c % 100 / 10);
	else
		snprintf(buf, size, "%lld.%02lld", c / 100, c % 100);
}

const char *df_fmt_calls(char *buf, size_t size, const struct df_row *r)
{
	char a[32], b[32];
	size_t n;

	buf[0] = 0;
	if (!r->cat || r->status == DF_NA)
		return buf;
	calls(a, sizeof(a), r->v[0].cmed);
	calls(b, sizeof(b), r->v[1].cmed);
	n = (size_t)snprintf(buf, size, "%s -> %s", r->v[0].n ? a : "-",
			     r->v[1].n ? b : "-");
	/* with several ranks, the slowest rank's when it is not the
	 * median's: a kernel launched twice on one rank only */
	if (llroundl(r->v[0].cmax * 100) == llroundl(r->v[0].cmed * 100) &&
	    llroundl(r->v[1].cmax * 100) == llroundl(r->v[1].cmed * 100))
		return buf;
	calls(a, sizeof(a), r->v[0].cmax);
	calls(b, sizeof(b), r->v[1].cmax);
	if (n < size)
		snprintf(buf + n, size - n, " (max %s -> %s)",
			 r->v[0].n ? a : "-", r->v[1].n ? b : "-");
	return buf;
}

const char *df_kind(const struct df_row *r)
{
	return r->cat ? r->cat : "step part";
}

int df_single(const struct df_diff *d)
{
	return d->s[0].rep.nranks <= 1 && d->s[1].rep.nranks <= 1;
}

void df_headline(struct tp_buf *b, const struct df_diff *d)
{
	const struct df_row *r = &d->rows[DF_P_STEP];
	char x[48], y[48], z[48], q[48];
	const char *per = d->per_run[0] && d->per_run[1] ? "Run" : "Step";

	if (r->status == DF_NA) {
		rp_bprintf(b, "%s time: unavailable (%s).", per, r->na);
		return;
	}
	rp_bprintf(b, "%s time%s: %s -> %s (%s, %s)", per,
		   df_single(d) ? "" : " of the median rank",
		   df_fmt_val(x, sizeof(x), r, r->v[0].med, 1),
		   df_fmt_val(y, sizeof(y), r, r->v[1].med, 1),
		   df_fmt_delta(z, sizeof(z), r, r->delta),
		   df_fmt_ratio(q, sizeof(q), r));
	if (!df_single(d))
		rp_bprintf(b, "; of the slowest rank: %s -> %s (%s)",
			   df_fmt_val(x, sizeof(x), r, r->v[0].max, 1),
			   df_fmt_val(y, sizeof(y), r, r->v[1].max, 1),
			   df_fmt_delta(z, sizeof(z), r, r->delta_max));
	tp_buf_lit(b, ".");
}

const char *df_table_title(int t)
{
	static const char *const title[DF_NTABLES] = {
		"What changed, by impact on the step",
		"CPU-side calls",
		"Ranges",
	};

	return title[t];
}

const char *df_table_note(int t)
{
	static const char *const note[DF_NTABLES] = {
		"GPU work per name (kernels, copies, sets) and the parts of "
		"the step that no name owns (exposed communication: "
		"communication no computation hides; GPU idle), per step: on "
		"a GPU-bound step their changes add up to the step's. Impact: "
		"the larger of the change of the median rank and of the "
		"slowest rank (which a synchronous job's other ranks wait "
		"for).",
		"Runtime, library and framework calls, per step. Their times "
		"include waiting for the GPU (synchronizing calls), so they "
		"are not added to the step.",
		"NVTX, tprof_range and record_function ranges, per step. "
		"Ranges nest and include waiting: each is the time spent "
		"inside it.",
	};

	return note[t];
}
