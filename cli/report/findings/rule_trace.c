/* Rule: an incomplete trace. Events lost (a full ring, GPU records
 * CUPTI dropped: the summary's "dropped") or GPU figures a bounded
 * window could not keep exact (gpu.approx: slices that came late,
 * launch calls evicted before their work was seen). It costs no time;
 * it says which figures to trust less, and every other finding about
 * such a rank carries it as a caveat. */
#include "findings_int.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#define LISTED 5	/* ranks described one by one */

int rp_f_incomplete(const struct rp_rank *r)
{
	return r->dropped || r->gpu.approx.late_slices ||
	       r->gpu.approx.calls_evicted;
}

/* "1234 of 41234 events lost (2.99%)", and what is approximate. */
static void lost(struct tp_buf *b, const struct rp_rank *r)
{
	const struct rp_approx *a = &r->gpu.approx;
	char t[2][40];

	if (r->dropped)
		rp_bprintf(b, "%" PRIu64 " of %" PRIu64 " events lost (%s)",
			   r->dropped, r->events + r->dropped,
			   rp_fmt_pct(t[0], 40, (int64_t)r->dropped,
				      (int64_t)(r->events + r->dropped)));
	if (a->late_slices)
		rp_bprintf(b, "%s%" PRIu64 " GPU slices (%s) came too late to "
			   "be swept in order", r->dropped ? ", " : "",
			   a->late_slices, rp_fmt_ns(t[1], 40,
						     a->late_slice_ns));
	if (a->calls_evicted)
		rp_bprintf(b, "%s%" PRIu64 " launch calls never joined to "
			   "their work", r->dropped || a->late_slices ? ", " :
			   "", a->calls_evicted);
}

void rp_rule_incomplete(struct rp_report *rep, struct rp_findings *fs)
{
	size_t e, n = 0, *v = rp_f_per_rank(rep, sizeof(*v));
	struct rp_finding *f;
	struct tp_buf b = { 0 };

	if (!v) {
		fs->oom = 1;
		return;
	}
	for (e = 0; e < rep->nranks; e++)
		if (rp_f_incomplete(rep->ranks[e]))
			v[n++] = e;
	f = n ? rp_f_add(fs, RP_F_INCOMPLETE, v, n, -1, rep->ref.step) :
		NULL;
	if (!f)
		goto out;
	f->title = rp_f_str(fs, "incomplete trace: figures may be low");
	for (e = 0; e < n && e < LISTED; e++) {
		rp_bprintf(&b, "%sRank %s: ", e ? " " : "",
			   rep->ranks[v[e]]->label);
		lost(&b, rep->ranks[v[e]]);
		tp_buf_char(&b, '.');
	}
	if (n > LISTED)
		rp_bprintf(&b, " And %zu more ranks (--json has each).",
			   n - LISTED);
	f->evidence = b.oom ? NULL : rp_f_str(fs, "%.*s", (int)b.len, b.p);
	f->where = rp_f_str(fs, "the traces of these ranks; every finding "
			    "about them says so");
	f->try_ = rp_f_str(fs, "Give tprof more room: a larger ring "
			   "(tprof-run --buffer-mb 64) and CUPTI buffer "
			   "(--cupti-buffer-mb 256), fewer sources (-t), or "
			   "fewer steps recorded (--active N). The figures of "
			   "these ranks count only what was kept.");
out:
	tp_buf_free(&b);
	free(v);
}

static size_t count_incomplete(const struct rp_report *rep,
			       const size_t *v, size_t n, size_t *first)
{
	size_t i, k = 0;

	for (i = 0; i < n; i++)
		if (rp_f_incomplete(rep->ranks[v[i]]) && !k++)
			*first = v[i];
	return k;
}

void rp_caveats(struct rp_report *rep, struct rp_findings *fs)
{
	struct rp_finding *f;
	struct tp_buf b = { 0 };
	size_t i, k, w, first = 0, wfirst = 0;

	for (i = 0; i < fs->n; i++) {
		f = &fs->v[i];
		if (f->kind == RP_F_INCOMPLETE)
			continue;
		k = count_incomplete(rep, f->ranks, f->nranks, &first);
		w = count_incomplete(rep, f->waited, f->nwaited, &wfirst);
		if (!k && !w)
			continue;
		b.len = 0;
		if (k == 1 && f->nranks == 1) {
			rp_bprintf(&b, "The trace of rank %s is incomplete (",
				   rep->ranks[first]->label);
			lost(&b, rep->ranks[first]);
			tp_buf_lit(&b, "): its figures here may be low.");
		} else if (k) {
			rp_bprintf(&b, "The traces of %zu of these ranks are "
				   "incomplete (rank %s first): their figures "
				   "may be low.", k, rep->ranks[first]->label);
		}
		if (w)
			rp_bprintf(&b, "%sThe traces of %zu of the ranks "
				   "waited for are incomplete (rank %s "
				   "first).", k ? " " : "", w,
				   rep->ranks[wfirst]->label);
		f->caveat = b.oom ? NULL : rp_f_str(fs, "%.*s", (int)b.len,
						    b.p);
	}
	tp_buf_free(&b);
}
