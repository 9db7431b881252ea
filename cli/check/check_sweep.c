/* tprof check's checks at the end of the trace (check_int.h), over the
 * sorted records: strict nesting of X slices per track, by a sweep that
 * keeps only the open slices, and flow matching, each flow judged when
 * its key's group of events ends. Calls check_out.c, the tables and the
 * external sort.
 */
#include "check.h"
#include "check_int.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct flow {
	uint64_t id;
	uint32_t cat, name, idx, is_str;
	uint32_t n_start, n_end;
	int64_t first_start, first_end;	/* earliest s and f ts, ns */
};

int ck_xev_cmp(const void *a, const void *b)
{
	const struct xev *x = a, *y = b;

	if (x->track != y->track)
		return x->track < y->track ? -1 : 1;
	if (x->ts != y->ts)
		return x->ts < y->ts ? -1 : 1;
	if (x->dur != y->dur)
		return x->dur > y->dur ? -1 : 1;	/* parent first */
	return x->idx < y->idx ? -1 : x->idx > y->idx;
}

static int64_t xend(const struct xev *x)
{
	int64_t e;

	return __builtin_add_overflow(x->ts, x->dur, &e) ? INT64_MAX : e;
}

static void report_overlap(struct ck *ck, const struct xev *a,
			   const struct xev *b)
{
	char qa[100], qb[100], t[4][32];
	const char *s;
	size_t len;

	s = ck_str_at(&ck->strs, a->name, &len);
	ck_quote(qa, sizeof(qa), s, len);
	s = ck_str_at(&ck->strs, b->name, &len);
	ck_quote(qb, sizeof(qb), s, len);
	ck_problem(ck, "partial overlap on track %s: \"%s\" [%s, %s] and "
		   "\"%s\" [%s, %s] (traceEvents[%u] and [%u])",
		ck_str_at(&ck->tracks, a->track, &len), qa,
		ck_fmt_us(t[0], 32, a->ts), ck_fmt_us(t[1], 32, xend(a)), qb,
		ck_fmt_us(t[2], 32, b->ts), ck_fmt_us(t[3], 32, xend(b)),
		a->idx, b->idx);
}

/* The slices come sorted (track, start, longest first), so only the
 * open ones are kept: the stack grows with the nesting depth, not the
 * slices. */
void ck_nesting(struct ck *ck)
{
	struct xev *stack = NULL, *top;
	size_t depth = 0, cap = 0;
	const struct xev *x;
	uint32_t track = 0;
	void *v;

	if (ck->sort_failed || tp_xsort_finish(ck->xsort)) {
		ck_sort_fail(ck, ck->xsort);
		return;
	}
	while ((x = tp_xsort_next(ck->xsort))) {
		if (x->track != track)
			depth = 0;
		track = x->track;
		while (depth && xend(&stack[depth - 1]) <= x->ts)
			depth--;
		top = depth ? &stack[depth - 1] : NULL;
		if (top && xend(x) > xend(top)) {
			if (!(x->gpu && top->gpu &&
			      ck_quirk(ck, W_GPU_OVERLAP)))
				report_overlap(ck, top, x);
			continue;
		}
		if (depth == cap) {
			cap = cap ? cap * 2 : 64;
			v = realloc(stack, cap * sizeof(*stack));
			if (!v) {
				ck_sort_fail(ck, NULL);
				break;
			}
			stack = v;
		}
		stack[depth++] = *x;
	}
	if (tp_xsort_error(ck->xsort))
		ck_sort_fail(ck, ck->xsort);
	free(stack);
}

int ck_flowev_cmp(const void *a, const void *b)
{
	const struct flowev *x = a, *y = b;

	if (x->id != y->id)
		return x->id < y->id ? -1 : 1;
	if (x->cat != y->cat)
		return x->cat < y->cat ? -1 : 1;
	if (x->name != y->name)
		return x->name < y->name ? -1 : 1;
	return x->idx < y->idx ? -1 : x->idx > y->idx;
}

/* The problem lines flow f gives (0: fine, or a quirk counted). */
static unsigned flow_lines(struct ck *ck, const struct flow *f)
{
	const char *s;
	size_t len;

	if (f->n_start && f->n_end && (f->first_start == INT64_MIN ||
				       f->first_end >= f->first_start))
		return 0;
	s = ck_str_at(&ck->strs, f->cat, &len);
	if (len == 4 && !memcmp(s, "ac2g", 4) && (!f->n_start ||
	    !f->n_end) && ck_quirk(ck, f->n_start ? W_FLOW_NO_END :
				      W_FLOW_NO_START))
		return 0;
	return !f->n_start + !f->n_end + (f->n_start && f->n_end);
}

static void flow_print(struct ck *ck, const struct flow *f)
{
	char qc[80], qn[80], id[32], t[2][32];
	const char *s;
	size_t len;

	s = ck_str_at(&ck->strs, f->cat, &len);
	ck_quote(qc, sizeof(qc), s, len);
	s = ck_str_at(&ck->strs, f->name, &len);
	ck_quote(qn, sizeof(qn), s, len);
	snprintf(id, sizeof(id), f->is_str ? "0x%" PRIx64 : "%" PRIu64,
		 f->id);
	if (!f->n_start)
		ck_problem(ck, "flow id=%s cat=\"%s\" name=\"%s\" has no "
			"start (ph \"s\") (first seen at "
			"traceEvents[%u])", id, qc, qn, f->idx);
	if (!f->n_end)
		ck_problem(ck, "flow id=%s cat=\"%s\" name=\"%s\" has no "
			"end (ph \"f\") (first seen at "
			"traceEvents[%u])", id, qc, qn, f->idx);
	if (f->n_start && f->n_end)
		ck_problem(ck, "flow id=%s cat=\"%s\" name=\"%s\" ends at "
			"%s before it starts at %s", id, qc, qn,
			ck_fmt_us(t[0], 32, f->first_end),
			ck_fmt_us(t[1], 32, f->first_start));
}

/* The bad flows printed first, in order of first appearance: the
 * MAX_SHOWN earliest, kept by index as the groups end. */
struct flow_shown {
	struct flow v[MAX_SHOWN];
	size_t n;
	unsigned long lines;	/* of every bad flow */
};

static void flow_done(struct ck *ck, const struct flow *f,
		      struct flow_shown *sh)
{
	unsigned lines = flow_lines(ck, f);
	size_t i;

	if (!lines)
		return;
	sh->lines += lines;
	if (sh->n == MAX_SHOWN && f->idx > sh->v[MAX_SHOWN - 1].idx)
		return;
	i = sh->n < MAX_SHOWN ? sh->n++ : MAX_SHOWN - 1;
	for (; i && sh->v[i - 1].idx > f->idx; i--)
		sh->v[i] = sh->v[i - 1];
	sh->v[i] = *f;
}

static void flow_start(struct flow *f, const struct flowev *e)
{
	memset(f, 0, sizeof(*f));
	f->id = e->id;
	f->cat = e->cat;
	f->name = e->name;
	f->idx = e->idx;
	f->first_start = f->first_end = INT64_MAX;
}

static void flow_take(struct flow *f, const struct flowev *e)
{
	f->is_str |= e->is_str;
	if (e->ph == 's') {
		f->n_start++;
		if (!e->ts_ok)
			f->first_start = INT64_MIN;
		else if (e->ts < f->first_start)
			f->first_start = e->ts;
	} else if (e->ph == 'f') {
		f->n_end++;
		if (e->ts_ok && e->ts < f->first_end)
			f->first_end = e->ts;
	}
}

/* Flow events by key, each key's first (lowest index) first: a flow is
 * judged when its group ends. Every problem is counted; the lines of
 * the earliest bad flows are printed in order, as ck_problem() would have
 * printed them flow by flow. */
void ck_flows(struct ck *ck)
{
	struct flow_shown sh;
	const struct flowev *e;
	unsigned long base;
	struct flow f;
	int have = 0;
	size_t i;

	if (ck->sort_failed || tp_xsort_finish(ck->fsort)) {
		ck_sort_fail(ck, ck->fsort);
		return;
	}
	memset(&sh, 0, sizeof(sh));
	while ((e = tp_xsort_next(ck->fsort))) {
		if (have && (e->id != f.id || e->cat != f.cat ||
			     e->name != f.name))
			flow_done(ck, &f, &sh);
		if (!have || e->id != f.id || e->cat != f.cat ||
		    e->name != f.name)
			flow_start(&f, e);
		have = 1;
		flow_take(&f, e);
	}
	if (have)
		flow_done(ck, &f, &sh);
	if (tp_xsort_error(ck->fsort)) {
		ck_sort_fail(ck, ck->fsort);
		return;
	}
	base = ck->problems;
	for (i = 0; i < sh.n && ck->problems < MAX_SHOWN; i++)
		flow_print(ck, &sh.v[i]);
	ck->problems = base + sh.lines;
}
