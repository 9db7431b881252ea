/* Rule, one cause of a slow rank: it is host-bound, its GPU idles
 * waiting for work. Where: the CPU ranges and calls that held the
 * middle of its longest idle gaps (summary/gpu_sweep.c keeps the five
 * longest, each with the innermost CPU spans around its middle); the
 * step spans themselves name nothing. */
#define _GNU_SOURCE	/* strcasestr */
#include "findings_int.h"

#include <stdlib.h>
#include <string.h>

#define MAX_GAPS 16	/* more than a summary holds (5) */

struct held {
	const char *name;	/* NULL: no CPU range or call */
	size_t n;
	int64_t ns;
};

/* The innermost CPU span around a gap's middle, steps aside. */
static const char *gap_name(const struct rp_gap *x)
{
	size_t k;

	for (k = x->ncpu; k--;)
		if (!rp_is_step_name("user_annotation", x->cpu[k]))
			return x->cpu[k];
	return NULL;
}

/* The gaps by what held them, the longest total first. */
static size_t by_name(const struct rp_gpu *g, struct held *h,
		      int64_t *total)
{
	size_t i, k, n = 0;
	const char *name;
	struct held t;

	*total = 0;
	for (i = 0; i < g->ngaps && i < MAX_GAPS; i++) {
		name = gap_name(&g->gaps[i]);
		*total += g->gaps[i].dur;
		for (k = 0; k < n; k++)
			if (h[k].name == name || (h[k].name && name &&
						  !strcmp(h[k].name, name)))
				break;
		if (k == n)
			h[n++] = (struct held){ name, 0, 0 };
		h[k].n++;
		h[k].ns += g->gaps[i].dur;
	}
	for (i = 1; i < n; i++)
		for (k = i; k && h[k].ns > h[k - 1].ns; k--) {
			t = h[k];
			h[k] = h[k - 1];
			h[k - 1] = t;
		}
	return n;
}

static int is_loader(const char *name)
{
	return name && (strcasestr(name, "dataloader") ||
			strcasestr(name, "data_loader") ||
			strstr(name, "__next__"));
}

static void evidence(struct tp_buf *b, const struct rp_report *rep,
		     size_t e, const struct held *h, size_t n, int64_t total)
{
	const struct rp_rankm *m = &rep->m[e];
	const struct rp_gpu *g = &rep->ranks[e]->gpu;
	const char *unit = m->has_steps ? "step" : "run";
	char t[4][40];
	size_t i;

	rp_f_own_text(b, rep, e);
	rp_bprintf(b, "Its GPU idles %s per %s (%s of it) against %s on the "
		   "median rank (%s).", rp_fmt_ns(t[0], 40, m->idle), unit,
		   rp_fmt_pct(t[1], 40, (int64_t)m->idle, (int64_t)m->step),
		   rp_fmt_ns(t[2], 40, rep->ref.idle),
		   rp_fmt_diff(t[3], 40, m->idle - rep->ref.idle));
	if (n) {
		rp_bprintf(b, " Its %zu longest idle gaps, %s in all, were "
			   "inside ", g->ngaps, rp_fmt_ns(t[0], 40, total));
		for (i = 0; i < n; i++)
			rp_bprintf(b, "%s%s (%zu, %s)", i ? ", " : "",
				   h[i].name ? h[i].name :
				   "no CPU range or call", h[i].n,
				   rp_fmt_ns(t[0], 40, h[i].ns));
		tp_buf_char(b, '.');
	}
	if (g->steps_cpu_bound || g->steps_gpu_bound)
		rp_bprintf(b, " %llu of its %llu steps were CPU-bound (the "
			   "GPU busy for less than half of the step).",
			   (unsigned long long)g->steps_cpu_bound,
			   (unsigned long long)(g->steps_cpu_bound +
						g->steps_gpu_bound));
}

static char *advice(struct rp_findings *fs, const char *name)
{
	if (is_loader(name))
		return rp_f_str(fs, "The GPU waits while the host loads data "
				"in %s: give the DataLoader more workers "
				"(num_workers), pin_memory=True, a larger "
				"prefetch_factor and persistent_workers=True; "
				"move decoding and augmentation into the workers "
				"or onto the GPU; check this node's CPU load and "
				"storage (another job, a slow disk or network "
				"file system).", name);
	if (name)
		return rp_f_str(fs, "The GPU waits while the host runs %s: "
				"profile that code (tprof-run --backtrace 1ms, "
				"py-spy), take it off the step's critical path "
				"(a background thread or process, prefetching "
				"the next step's inputs), and check this node's "
				"CPU load.", name);
	return rp_f_str(fs, "The GPU waits for this rank's host, in code "
			"no range names: wrap the step's phases in ranges "
			"(torch.profiler.record_function, NVTX or "
			"tprof_range_push) so the report can name them, and "
			"check this node's CPU load.");
}

void rp_f_host_bound(struct rp_report *rep, struct rp_findings *fs,
		     size_t e, long double excess, long double idle)
{
	const struct rp_gpu *g = &rep->ranks[e]->gpu;
	struct held h[MAX_GAPS];
	struct tp_buf b = { 0 };
	struct rp_finding *f;
	const char *names[RP_F_TOP_NAMES], *top;
	size_t n, i, k = 0;
	int64_t total;
	char *what;

	n = by_name(g, h, &total);
	/* named when it held at least half of the gaps' time */
	top = n && h[0].name && h[0].ns * 2 >= total ? h[0].name : NULL;
	f = rp_f_add(fs, RP_F_HOST_BOUND, &e, 1, idle < excess ? idle :
		     excess, rep->m[e].step);
	if (!f)
		return;
	f->per_run = !rep->m[e].has_steps;
	f->title = top ? rp_f_str(fs, "its GPU waits for the host (in %s)",
				  top) :
			 rp_f_str(fs, "its GPU waits for the host");
	evidence(&b, rep, e, h, n, total);
	f->evidence = b.oom ? NULL : rp_f_str(fs, "%.*s", (int)b.len, b.p);
	tp_buf_free(&b);
	for (i = 0; i < n && k < RP_F_TOP_NAMES; i++)
		if (h[i].name)
			names[k++] = h[i].name;
	rp_f_names(fs, f, "cpu", names, k);
	what = top ? rp_f_str(fs, "the host in %s, around %zu of its %zu "
			      "longest idle gaps", top, h[0].n, g->ngaps) :
		     rp_f_str(fs, "its GPU idle time");
	rp_f_where_rank(rep, fs, f, e, what ? what : "");
	free(what);
	f->try_ = advice(fs, top);
}
