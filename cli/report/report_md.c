/* tprof report: the Markdown output, rendered from the tables. */
#include "summary/summary.h"
#include "report_host.h"
#include "report_tables.h"

static void md_table(const struct rp_table *t, struct tp_buf *b)
{
	size_t r, c;

	rp_bprintf(b, "\n## %s\n\n", t->title);
	if (!t->nrows) {
		rp_bprintf(b, "%s\n", t->empty ? t->empty : "None.");
		return;
	}
	if (t->note)
		rp_bprintf(b, "%s\n\n", t->note);
	for (c = 0; c < t->ncols; c++)
		rp_bprintf(b, "| %s ", t->head[c]);
	tp_buf_lit(b, "|\n");
	for (c = 0; c < t->ncols; c++)
		tp_buf_cstr(b, t->align[c] == 'r' ? "|---:" : "|:---");
	tp_buf_lit(b, "|\n");
	for (r = 0; r < t->nrows; r++) {
		for (c = 0; c < t->ncols; c++) {
			tp_buf_lit(b, "| ");
			tp_md_cell(b, rp_cell(t, r, c), 0);
			tp_buf_char(b, ' ');
		}
		tp_buf_lit(b, "|\n");
	}
}

void rp_write_md(const struct rp_report *rep, struct tp_buf *b)
{
	struct rp_tables ts;
	size_t i;

	if (rp_tables_build(rep, &ts)) {
		b->oom = 1;
		goto out;
	}
	rp_bprintf(b, "# tprof report\n\n%s\n", ts.intro);
	for (i = 0; i < RP_N_TABLES; i++)
		md_table(&ts.t[i], b);
	rp_host_md(rep, b);
	tp_buf_lit(b, "\n## Stragglers\n\n");
	if (!ts.nlines)
		tp_buf_lit(b, "None.\n");
	for (i = 0; i < ts.nlines; i++) {
		tp_buf_lit(b, "- ");
		tp_md_cell(b, ts.lines[i], 0);
		tp_buf_char(b, '\n');
	}
out:
	rp_tables_free(&ts);
}
