/* tprof diff: the Markdown output. The answer first (the step time and
 * what changed most), then the breakdown, then CPU-side calls and
 * ranges. */
#include "diff_cells.h"
#include "summary/summary.h"

#include <string.h>

/* Text of a paragraph: what Markdown would read as markup is escaped. */
static void md_text(struct tp_buf *b, const char *s)
{
	for (; *s; s++) {
		if (strchr("\\*_`[]<|", *s))
			tp_buf_char(b, '\\');
		tp_buf_char(b, (unsigned char)*s < 0x20 ? ' ' : *s);
	}
}

static void md_words(struct tp_buf *b, void (*f)(struct tp_buf *,
						   const struct df_diff *),
		     const struct df_diff *d)
{
	struct tp_buf w = { 0 };

	f(&w, d);
	tp_buf_char(&w, 0);
	md_text(b, w.oom ? "?" : w.p);
	b->oom |= w.oom;
	tp_buf_free(&w);
}

static void md_row(struct tp_buf *b, const struct df_cells *c, int head)
{
	size_t i;

	for (i = 0; i < c->ncols; i++) {
		tp_buf_lit(b, "| ");
		tp_md_cell(b, head ? c->head[i] : c->cell[i], 0);
		tp_buf_char(b, ' ');
	}
	tp_buf_lit(b, "|\n");
	if (!head)
		return;
	for (i = 0; i < c->ncols; i++)
		tp_buf_cstr(b, c->align[i] == 'r' ? "|---:" : "|:---");
	tp_buf_lit(b, "|\n");
}

static void md_breakdown(const struct df_diff *d, struct tp_buf *b)
{
	struct df_cells c;
	int p;

	tp_buf_lit(b, "\n## Step time and its breakdown\n\n"
		   "Per step (memory: the peak over the run); the GPU "
		   "figures are tprof report's temporal breakdown (HTA's): "
		   "busy is the union of all GPU work, exposed communication "
		   "the communication no computation overlaps, idle the GPU "
		   "span less busy.\n\n");
	df_cells_head(d, 1, &c);
	md_row(b, &c, 1);
	for (p = 0; p < DF_NPARTS; p++) {
		df_cells_row(d, &d->rows[p], 0, 1, &c);
		md_row(b, &c, 0);
	}
}

static void md_table(const struct df_diff *d, int t, struct tp_buf *b)
{
	const struct df_list *l = &d->t[t];
	struct df_cells c;
	size_t i, n = l->n < d->top ? l->n : d->top;

	rp_bprintf(b, "\n## %s\n\n", df_table_title(t));
	if (!l->n && !l->unchanged) {
		tp_buf_lit(b, "None in either run.\n");
		return;
	}
	if (!l->n) {
		rp_bprintf(b, "No changes (%zu names, each the same in both "
			   "runs).\n", l->unchanged);
		return;
	}
	md_text(b, df_table_note(t));
	tp_buf_lit(b, "\n\n");
	df_cells_head(d, 0, &c);
	md_row(b, &c, 1);
	for (i = 0; i < n; i++) {
		df_cells_row(d, &d->rows[l->v[i]], i + 1, 0, &c);
		md_row(b, &c, 0);
	}
	rp_bprintf(b, "\n%zu changed%s, %zu the same.\n", l->n,
		   n < l->n ? " (the top ones listed: --top N for more, "
		   "--json for every one)" : "", l->unchanged);
}

void df_write_md(const struct df_diff *d, struct tp_buf *b)
{
	struct tp_buf w = { 0 };
	int k, t;

	tp_buf_lit(b, "# tprof diff\n\n");
	for (k = 0; k < 2; k++) {
		w.len = 0;
		rp_bprintf(&w, "%s: %s: ", k ? "B" : "A", d->s[k].arg);
		df_side_words(&w, &d->s[k]);
		tp_buf_char(&w, 0);
		tp_buf_lit(b, "- ");
		md_text(b, w.oom ? "?" : w.p);
		tp_buf_char(b, '\n');
	}
	b->oom |= w.oom;
	tp_buf_free(&w);
	tp_buf_lit(b, "\n**");
	md_words(b, df_headline, d);
	tp_buf_lit(b, "**\n\n");
	md_words(b, df_steps_words, d);
	tp_buf_char(b, '\n');
	md_table(d, DF_T_CHANGES, b);
	md_breakdown(d, b);
	for (t = DF_T_OPS; t < DF_NTABLES; t++)
		md_table(d, t, b);
}
