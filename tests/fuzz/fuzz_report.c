/* libFuzzer harness: `tprof report`'s readers over arbitrary bytes: the
 * same file read as a trace (cli/read/trace_summary.c: streamed, folded by the
 * preload's aggregator, GPU analyses) and as a summary.json
 * (cli/report/report_input.c, cli/report/report_summary.c); then what it
 * read, twice, as a report of two ranks, the second's steps twice as
 * long so that the slow-rank rules run too: the statistics, the
 * findings (cli/report/findings/) and every output. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "cli/report/report_data.h"
#include "cli/report/report_input.h"
#include "cli/report/findings/findings.h"
#include "fuzz_file.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void report(struct rp_rank *a, struct rp_rank *b)
{
	struct rp_rank *v[2] = { a, b };
	struct rp_report rep = { .ranks = v, .nranks = 2,
				 .top = RP_TOP_NAMES };
	struct tp_buf out = { 0 };
	size_t i;

	for (i = 0; i < b->nsteps; i++)
		if (b->steps[i].dur > 0 && b->steps[i].dur < INT64_MAX / 2)
			b->steps[i].dur *= 2;
	a->entry = 0;
	b->entry = 1;
	snprintf(a->label, sizeof(a->label), "0");
	snprintf(b->label, sizeof(b->label), "1");
	if (!rp_stats(&rep) && !rp_findings_run(&rep)) {
		rp_write_md(&rep, &out);
		rp_write_json(&rep, &out);
		rp_write_html(&rep, &out);
	}
	rp_findings_free(&rep);
	rp_stats_free(&rep);
	tp_buf_free(&out);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const char *names[] = { "in-rank0.trace.json",
				       "in-rank0.summary.json" };

	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		const char *path = fz_file(names[i], data, size);
		struct rp_rank *r, *twin;
		char err[512];

		if (!path)
			continue;
		r = rp_read_input(path, err, sizeof(err));
		twin = r ? rp_read_input(path, err, sizeof(err)) : NULL;
		if (r && twin)
			report(r, twin);
		rp_rank_free(r);
		rp_rank_free(twin);
	}
	return 0;
}
