/* tprof report: the answer in a few lines, for a terminal: what the
 * report found, most costly first, and where the full report went.
 * Printed when the report goes to a file (-o, --html), and by tprof-run
 * at the end of a run. */
#include "report_data.h"
#include "findings/findings.h"

/* Findings listed; the others are in the report. */
#define BRIEF_FINDINGS 5

void rp_write_brief(const struct rp_report *rep, struct tp_buf *b,
		    const char *const *files, size_t nfiles)
{
	char t[40];
	size_t i;

	rp_bprintf(b, "tprof report: %zu rank%s", rep->nranks,
		   rep->nranks == 1 ? "" : "s");
	if (rep->with_steps)
		rp_bprintf(b, "; median step %s",
			   rp_fmt_ns(t, sizeof(t), rep->steps_reference));
	tp_buf_char(b, '\n');
	if (!rep->fs->n)
		tp_buf_lit(b, "No findings: no rank is slower than the median "
			   "rank by 10%, and no rule applies.\n");
	for (i = 0; i < rep->fs->n && i < BRIEF_FINDINGS; i++) {
		rp_bprintf(b, "%2zu. ", rep->fs->v[i].id);
		rp_finding_headline(b, rep, &rep->fs->v[i]);
		tp_buf_char(b, '\n');
	}
	if (rep->fs->n > BRIEF_FINDINGS)
		rp_bprintf(b, "    and %zu more findings in the report.\n",
			   rep->fs->n - BRIEF_FINDINGS);
	for (i = 0; i < nfiles; i++)
		rp_bprintf(b, "Report: %s\n", files[i]);
}
