/* Rules about communication:
 *
 * - ranks waiting in collectives for slow ranks (rp_f_waiting, after the
 *   slow ranks are known): their exposed communication is
 *   RP_F_WAIT_SHARE of the median step above the least-waiting rank's,
 *   time spent inside the collective until the slow rank arrives;
 * - exposed communication: the least-waiting rank's communication not
 *   overlapped by computation is RP_F_COMM_SHARE of the median step.
 *   The least-waiting rank's, because every other rank's includes
 *   waiting, which the first finding explains.
 */
#include "findings_int.h"

#include <stdlib.h>
#include <string.h>

#include "summary/gpu.h"

/* The communication kernels, largest mean total first. */
static size_t comm_names(const struct rp_report *rep, const char **names)
{
	size_t i, n = 0;

	for (i = 0; i < rep->nnames && n < RP_F_TOP_NAMES; i++)
		if (!strcmp(rep->names[i].cat, "kernel") &&
		    tp_gpu_class(rep->names[i].name) == TP_GPU_COMM)
			names[n++] = rep->names[i].name;
	return n;
}

/* The least-waiting rank with GPU figures. */
static size_t least_waiting(const struct rp_report *rep)
{
	size_t e;

	for (e = 0; e < rep->nranks; e++)
		if (rep->m[e].has_gpu &&
		    rep->m[e].exposed == rep->min_exposed)
			return e;
	return 0;
}

static int is_in(const size_t *v, size_t n, size_t e)
{
	size_t lo = 0, hi = n, mid;

	while (lo < hi) {
		mid = (lo + hi) / 2;
		if (v[mid] == e)
			return 1;
		if (v[mid] < e)
			lo = mid + 1;
		else
			hi = mid;
	}
	return 0;
}

static char *names_text(struct rp_findings *fs, const char **names,
			size_t n)
{
	struct tp_buf b = { 0 };
	char *s;
	size_t i;

	for (i = 0; i < n; i++)
		rp_bprintf(&b, "%s%s", i ? ", " : "", names[i]);
	s = b.oom ? NULL : rp_f_str(fs, "%.*s", (int)b.len,
				    b.p ? b.p : "");
	tp_buf_free(&b);
	return s;
}

static void wait_text(struct rp_report *rep, struct rp_findings *fs,
		      struct rp_finding *f, const char **names, size_t nn)
{
	size_t k = least_waiting(rep);
	struct tp_buf b = { 0 };
	char t[3][40], *nt = names_text(fs, names, nn);

	rp_fmt_ranks(&b, rep, f->waited, f->nwaited);
	tp_buf_char(&b, 0);
	if (!b.oom)
		f->title = rp_f_str(fs, "they wait in collectives for %s",
				    b.p);
	b.len = 0;
	rp_bprintf(&b, "Their communication not overlapped by computation "
		   "is %s per step on the median of them, against %s on "
		   "the least-waiting rank (rank %s): %s more, spent inside "
		   "the collectives until the slow ranks arrive.",
		   rp_fmt_ns(t[0], 40, f->cost + rep->min_exposed),
		   rp_fmt_ns(t[1], 40, rep->min_exposed),
		   rep->ranks[k]->label, rp_fmt_ns(t[2], 40, f->cost));
	f->evidence = b.oom ? NULL : rp_f_str(fs, "%.*s", (int)b.len, b.p);
	tp_buf_free(&b);
	f->where = rp_f_str(fs, "the communication kernels%s%s",
			    nn ? ": " : "", nt && nn ? nt : "");
	free(nt);
	f->try_ = rp_f_str(fs, "Make the slow ranks fast (their findings "
			   "say why they are slow): the waiting goes with "
			   "them. Until then the whole job runs at the "
			   "slowest rank's pace.");
}

void rp_f_waiting(struct rp_report *rep, struct rp_findings *fs,
		  const size_t *slow, size_t nslow)
{
	long double thr = RP_F_WAIT_SHARE * rep->ref.step, *w, x;
	const char *names[RP_F_TOP_NAMES];
	struct rp_finding *f;
	size_t e, n = 0, *v, nn;

	if (!nslow)
		return;
	if (thr < RP_F_MIN_NS)
		thr = RP_F_MIN_NS;
	v = rp_f_per_rank(rep, sizeof(*v));
	w = rp_f_per_rank(rep, sizeof(*w));
	if (!v || !w) {
		fs->oom = 1;
		goto out;
	}
	for (e = 0; e < rep->nranks; e++) {
		x = rep->m[e].exposed - rep->min_exposed;
		if (!rep->m[e].has_gpu || x < thr || is_in(slow, nslow, e))
			continue;
		v[n] = e;
		w[n++] = x;
	}
	if (!n)
		goto out;
	f = rp_f_add(fs, RP_F_COLL_WAIT, v, n, rp_f_median(w, n),
		     rep->ref.step);
	if (!f)
		goto out;
	f->waited = malloc(nslow * sizeof(*slow));
	if (!f->waited) {
		fs->oom = 1;
		goto out;
	}
	memcpy(f->waited, slow, nslow * sizeof(*slow));
	f->nwaited = nslow;
	nn = comm_names(rep, names);
	rp_f_names(fs, f, "kernels", names, nn);
	wait_text(rep, fs, f, names, nn);
out:
	free(v);
	free(w);
}

void rp_rule_exposed_comm(struct rp_report *rep, struct rp_findings *fs)
{
	long double thr = RP_F_COMM_SHARE * rep->ref.step;
	const char *names[RP_F_TOP_NAMES];
	const struct rp_rankm *m;
	struct rp_finding *f;
	size_t e, n = 0, *v, k = least_waiting(rep), nn;
	char t[6][40], *nt;

	if (thr < RP_F_MIN_NS)
		thr = RP_F_MIN_NS;
	if (!rep->nranks || rep->min_exposed < thr)
		return;
	v = rp_f_per_rank(rep, sizeof(*v));
	if (!v) {
		fs->oom = 1;
		return;
	}
	for (e = 0; e < rep->nranks; e++)
		if (rep->m[e].has_gpu && rep->m[e].comm > 0)
			v[n++] = e;
	f = rp_f_add(fs, RP_F_EXPOSED_COMM, v, n, rep->min_exposed,
		     rep->ref.step);
	free(v);
	if (!f)
		return;
	m = &rep->m[k];
	f->title = rp_f_str(fs, "communication is not overlapped with "
			    "computation");
	f->evidence = rp_f_str(fs, "On the least-waiting rank (rank %s), "
			       "communication takes %s per step, %s of it "
			       "with computation running: %s per step "
			       "exposed, %s of the median step %s. The "
			       "median rank's communication: %s per step.",
			       rep->ranks[k]->label,
			       rp_fmt_ns(t[0], 40, m->comm),
			       rp_fmt_ns(t[1], 40, m->comm - m->exposed),
			       rp_fmt_ns(t[2], 40, m->exposed),
			       rp_fmt_pct(t[3], 40, (int64_t)m->exposed,
					  (int64_t)rep->ref.step),
			       rp_fmt_ns(t[4], 40, rep->ref.step),
			       rp_fmt_ns(t[5], 40, rep->ref.comm));
	nn = comm_names(rep, names);
	rp_f_names(fs, f, "kernels", names, nn);
	nt = names_text(fs, names, nn);
	f->where = rp_f_str(fs, "the communication kernels%s%s",
			    nn ? ": " : "", nt && nn ? nt : "");
	free(nt);
	f->try_ = rp_f_str(fs, "Overlap communication with computation: "
			   "DDP starts each gradient bucket's all-reduce "
			   "during the backward pass (bucket_cap_mb; check "
			   "nothing serializes it); FSDP prefetches "
			   "(backward_prefetch, forward_prefetch); keep "
			   "collectives on their own stream. Compare the "
			   "collectives' bus bandwidth (the nccl rows of each "
			   "summary) with the links': fewer, larger "
			   "collectives use them better.");
}
