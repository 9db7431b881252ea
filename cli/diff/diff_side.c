/* tprof diff: one run read as tprof report reads its inputs (the same
 * files from a directory, summaries before traces, the same ranks), and
 * report's figures computed over it: statistics (report_stats.c) and each
 * rank's figures per step (findings/metrics.c). Calls cli/report only. */
#include "diff_data.h"

#include <stdlib.h>
#include <string.h>

#include "cli/report/report_input.h"
#include "cli/report/report_read.h"
#include "cli/report/report_ranks.h"
#include "cli/report/findings/findings.h"

static int read_ranks(struct df_side *s, int traces)
{
	struct rp_inputs in = { .traces = traces };
	/* rp_find_inputs takes argv's type; it only reads the string */
	char *arg = (char *)s->arg;
	int ret = -1;

	if (rp_find_inputs(&arg, 1, &in))
		goto out;
	s->rep.ranks = calloc(in.n ? in.n : 1, sizeof(*s->rep.ranks));
	if (!s->rep.ranks) {
		rp_fail(s->arg, "out of memory");
		goto out;
	}
	if (rp_read_inputs(in.paths, in.n, s->rep.ranks))
		goto out;
	s->rep.nranks = in.n;
	ret = 0;
out:
	rp_inputs_free(&in);
	return ret;
}

/* A rank has GPU rows when its trace recorded any GPU work: without
 * them (no CUPTI) its kernels are unknown, not absent. */
static int has_gpu_rows(const struct rp_rank *r)
{
	size_t i;

	for (i = 0; i < r->nrows; i++)
		if (!strcmp(r->rows[i].cat, "kernel") ||
		    !strcmp(r->rows[i].cat, "gpu_memcpy") ||
		    !strcmp(r->rows[i].cat, "gpu_memset"))
			return 1;
	return 0;
}

static void count(struct df_side *s)
{
	const struct rp_rank *r;
	size_t e;

	for (e = 0; e < s->rep.nranks; e++) {
		r = s->rep.ranks[e];
		if (!strcmp(r->kind, "summary"))
			s->nsummaries++;
		else
			s->ntraces++;
		s->gpu_rows[e] = (unsigned char)has_gpu_rows(r);
		s->with_gpu_rows += s->gpu_rows[e];
		s->with_gpu += (size_t)s->rep.m[e].has_gpu;
		s->with_mem += rp_mem_peak(r) != RP_NONE;
		if (!s->rep.m[e].has_steps)
			continue;
		if (!s->with_steps++ || r->steps_count < s->steps_lo)
			s->steps_lo = r->steps_count;
		if (r->steps_count > s->steps_hi)
			s->steps_hi = r->steps_count;
	}
}

int df_side_read(struct df_side *s, const char *arg, int traces)
{
	s->arg = arg;
	s->rep.top = RP_TOP_NAMES;
	if (read_ranks(s, traces))
		return -1;
	rp_label_ranks(&s->rep);
	s->gpu_rows = calloc(s->rep.nranks ? s->rep.nranks : 1, 1);
	if (!s->gpu_rows || rp_stats(&s->rep) || rp_findings_run(&s->rep))
		return rp_fail(arg, "out of memory");
	count(s);
	return 0;
}

void df_side_free(struct df_side *s)
{
	size_t i;

	rp_findings_free(&s->rep);
	rp_stats_free(&s->rep);
	for (i = 0; i < s->rep.nranks; i++)
		rp_rank_free(s->rep.ranks[i]);
	free(s->rep.ranks);
	free(s->gpu_rows);
	memset(s, 0, sizeof(*s));
}
