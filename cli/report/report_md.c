/* tprof report: the Markdown output, rendered from the tables. The
 * answer first: the findings, then one row per rank (and, with many
 * ranks, their distribution), then the details. */
#include "summary/summary.h"
#include "report_host.h"
#include "report_tables.h"
#include "findings/findings.h"

#include <string.h>

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
	if (t->sel_note)
		rp_bprintf(b, "%s\n\n", t->sel_note);
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

/* Text in a list item: what Markdown would read as emphasis, code, a
 * link or a tag is escaped (DataLoader.__next__ would lose its
 * underscores, float* start an emphasis). */
static void md_text(struct tp_buf *b, const char *s)
{
	for (; *s; s++) {
		if (strchr("\\*_`[]<|", *s))
			tp_buf_char(b, '\\');
		tp_buf_char(b, (unsigned char)*s < 0x20 ? ' ' : *s);
	}
}

/* A line of a finding: "   - Label: text". */
static void item(struct tp_buf *b, const char *label, const char *text)
{
	if (!text)
		return;
	rp_bprintf(b, "   - %s: ", label);
	md_text(b, text);
	tp_buf_char(b, '\n');
}

static void md_findings(const struct rp_report *rep, struct tp_buf *b)
{
	const struct rp_finding *f;
	struct tp_buf h = { 0 };
	size_t i;

	tp_buf_lit(b, "\n## Findings\n\n");
	if (!rep->fs->n)
		tp_buf_lit(b, "None: no rank is slower than the median rank "
			   "by 10%, and no rule of "
			   "docs/guide/reading-the-report.md applies.\n");
	for (i = 0; i < rep->fs->n; i++) {
		f = &rep->fs->v[i];
		h.len = 0;
		rp_finding_headline(&h, rep, f);
		tp_buf_char(&h, 0);
		rp_bprintf(b, "%zu. **", f->id);
		md_text(b, h.oom ? "?" : h.p);
		tp_buf_lit(b, "**\n");
		item(b, "Where", f->where);
		item(b, "Evidence", f->evidence);
		item(b, "Try", f->try_);
		item(b, "Caveat", f->caveat);
	}
	b->oom |= h.oom;
	tp_buf_free(&h);
}

/* The details, in the order a reader digs: steps, then the GPU, then
 * the names, then what was read. */
static const int details[] = {
	RP_T_STEPS, RP_T_HEALTH, RP_T_GPU, RP_T_BREAKDOWN, RP_T_LAUNCH, RP_T_RANGES,
	RP_T_GAPS, RP_T_NAMES, RP_T_DETAIL, RP_T_RANKS,
};

void rp_write_md(const struct rp_report *rep, struct tp_buf *b)
{
	struct rp_tables ts;
	size_t i;

	if (rp_tables_build(rep, &ts)) {
		b->oom = 1;
		goto out;
	}
	rp_bprintf(b, "# tprof report\n\n%s.\n", ts.intro);
	md_findings(rep, b);
	md_table(&ts.t[RP_T_OVERVIEW], b);
	if (ts.many)
		md_table(&ts.t[RP_T_DIST], b);
	for (i = 0; i < sizeof(details) / sizeof(details[0]); i++)
		md_table(&ts.t[details[i]], b);
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
