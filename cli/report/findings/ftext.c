/* tprof report: findings as words, the same in every output: the ranks
 * a finding is about, its headline and its cost per step. */
#include "findings_int.h"

#include <math.h>
#include <stdio.h>

/* Runs named in a list of many ranks before "...". */
#define MAX_RUNS 8
/* Ranks listed one by one up to this many. */
#define MAX_LISTED 6

static int next_to(const struct rp_report *rep, size_t a, size_t b)
{
	int64_t x = rep->ranks[a]->rank, y = rep->ranks[b]->rank;

	return b == a + 1 && x != RP_NONE && y == x + 1;
}

/* "0-9, 14, 20": consecutive ranks as runs. */
static void runs(struct tp_buf *b, const struct rp_report *rep,
		 const size_t *e, size_t n)
{
	size_t i = 0, k, nruns = 0;

	while (i < n) {
		for (k = i; k + 1 < n && next_to(rep, e[k], e[k + 1]); k++)
			;
		if (nruns++ == MAX_RUNS) {
			tp_buf_lit(b, ", ...");
			return;
		}
		if (i)
			tp_buf_lit(b, ", ");
		tp_buf_cstr(b, rep->ranks[e[i]]->label);
		if (k > i) {
			tp_buf_char(b, k == i + 1 ? ',' : '-');
			if (k == i + 1)
				tp_buf_char(b, ' ');
			tp_buf_cstr(b, rep->ranks[e[k]]->label);
		}
		i = k + 1;
	}
}

void rp_fmt_ranks(struct tp_buf *b, const struct rp_report *rep,
		  const size_t *e, size_t n)
{
	size_t i;

	if (!n) {
		tp_buf_lit(b, "no rank");
	} else if (n == 1) {
		rp_bprintf(b, "rank %s", rep->ranks[e[0]]->label);
	} else if (n == rep->nranks) {
		rp_bprintf(b, "all %zu ranks", n);
	} else if (n <= MAX_LISTED) {
		tp_buf_lit(b, "ranks ");
		for (i = 0; i < n; i++)
			rp_bprintf(b, "%s%s", i == 0 ? "" : i + 1 == n ?
				   " and " : ", ", rep->ranks[e[i]]->label);
	} else {
		rp_bprintf(b, "%zu ranks (", n);
		runs(b, rep, e, n);
		tp_buf_char(b, ')');
	}
}

void rp_finding_cost(struct tp_buf *b, const struct rp_finding *f)
{
	char t[40], p[40];

	if (f->cost < 0) {
		tp_buf_lit(b, "no time cost measured");
		return;
	}
	rp_bprintf(b, "+%s per %s", rp_fmt_ns(t, sizeof(t), f->cost),
		   f->per_run ? "run" : "step");
	if (f->step > 0)
		rp_bprintf(b, " (%s of %s %s)",
			   rp_fmt_pct(p, sizeof(p), llroundl(f->cost),
				      llroundl(f->step)),
			   f->nranks == 1 ? "its" : "the median",
			   f->per_run ? "run" : "step");
}

void rp_finding_headline(struct tp_buf *b, const struct rp_report *rep,
			 const struct rp_finding *f)
{
	rp_fmt_ranks(b, rep, f->ranks, f->nranks);
	tp_buf_lit(b, ": ");
	tp_buf_cstr(b, f->title ? f->title : "");
	tp_buf_lit(b, ": ");
	rp_finding_cost(b, f);
}

/* "rank 3, its kernels; its slowest step: #5 (30.100 ms)", start-up
 * steps aside (the summary lists steps in order). */
void rp_f_where_rank(struct rp_report *rep, struct rp_findings *fs,
		       struct rp_finding *f, size_t e, const char *what)
{
	const struct rp_rank *r = rep->ranks[e];
	size_t i, w = rep->steps[e].warmup, k = w;
	char t[40];

	/* the start-up steps left out, as in the rank's verdict */
	if (r->nsteps <= w) {
		f->where = rp_f_str(fs, "rank %s, %s", r->label, what);
		return;
	}
	for (i = w + 1; i < r->nsteps; i++)
		if (r->steps[i].dur > r->steps[k].dur)
			k = i;
	f->step_index = r->steps[k].step;
	f->where = rp_f_str(fs, "rank %s, %s; its slowest step: #%lld (%s)",
			    r->label, what, (long long)r->steps[k].step,
			    rp_fmt_ns(t, sizeof(t), r->steps[k].dur));
}

void rp_f_own_text(struct tp_buf *b, const struct rp_report *rep,
		   size_t e)
{
	const struct rp_rankm *m = &rep->m[e];
	const char *unit = m->has_steps ? "step" : "run";
	char t[3][40];

	rp_fmt_ns(t[0], 40, m->own);
	rp_fmt_ns(t[1], 40, rep->ref.own);
	rp_fmt_diff(t[2], 40, m->own - rep->ref.own);
	if (rep->ref.own == rep->ref.step && m->own == m->step)
		rp_bprintf(b, "Its %s takes %s against %s on the median rank "
			   "(%s). ", unit, t[0], t[1], t[2]);
	else
		rp_bprintf(b, "Less the time spent waiting in collectives, its "
			   "%s takes %s against %s on the median rank (%s). ",
			   unit, t[0], t[1], t[2]);
}
