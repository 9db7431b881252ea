/* tprof diff -o FILE.html: one self-contained page (inline CSS and SVG,
 * no script, nothing fetched, well-formed XML): the step time, a chart
 * of the largest changes, then the tables the Markdown has, a change in
 * red when B is slower (or holds more), green when faster. */
#include "diff_cells.h"
#include "cli/report/html/report_xml.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#define CHART_ROWS 12
#define CHART_W 960
#define LABEL_W 330
#define ROW_H 24

static const char css[] =
	"body{font:14px/1.45 system-ui,sans-serif;margin:24px auto;"
	"max-width:1400px;color:#1d2330;padding:0 16px}"
	"h1{font-size:22px;margin:0 0 8px}h2{font-size:17px;margin:28px 0 6px}"
	".runs{color:#444;margin:0 0 10px;padding-left:18px}"
	".head{font-size:18px;font-weight:600;margin:14px 0}"
	".note{color:#555;max-width:70em}"
	"table{border-collapse:collapse;margin:8px 0}"
	"th,td{padding:4px 9px;border-bottom:1px solid #e3e6ec;"
	"vertical-align:top}th{background:#f3f5f9;text-align:left;"
	"font-weight:600}td.r,th.r{text-align:right;white-space:nowrap}"
	"td.name{font-family:ui-monospace,monospace;font-size:12.5px;"
	"min-width:14em;max-width:420px;overflow-wrap:anywhere}"
	"td.up{color:#b3261e;font-weight:600}"
	"td.down{color:#1e7b34;font-weight:600}"
	".wrap{overflow-x:auto}"
	"svg text{font:12px system-ui,sans-serif;fill:#1d2330}"
	"svg .worse{fill:#d9534f}svg .better{fill:#3c9a55}"
	"svg .axis{stroke:#888;stroke-width:1}";

static void text(struct tp_buf *b, const char *s)
{
	rp_xml_text(b, s);
}

static void words(struct tp_buf *b, void (*f)(struct tp_buf *,
						const struct df_diff *),
		  const struct df_diff *d)
{
	struct tp_buf w = { 0 };

	f(&w, d);
	tp_buf_char(&w, 0);
	text(b, w.oom ? "?" : w.p);
	b->oom |= w.oom;
	tp_buf_free(&w);
}

/* name: the name column holds names of the program (monospace). */
static void table_row(struct tp_buf *b, const struct df_cells *c, int head,
		      int name)
{
	size_t i;

	tp_buf_lit(b, "<tr>");
	for (i = 0; i < c->ncols; i++) {
		const char *h = c->head[i];

		rp_bprintf(b, "<%s class=\"%s%s%s\">", head ? "th" : "td",
			   c->align[i] == 'r' ? "r" : "l",
			   (int)i == c->name_col && name ? " name" : "",
			   head || !c->sign[i] ? "" : c->sign[i] > 0 ?
			   " up" : " down");
		text(b, head ? h : c->cell[i]);
		rp_bprintf(b, "</%s>", head ? "th" : "td");
	}
	tp_buf_lit(b, "</tr>\n");
}

/* A bar per row of the largest changes, right of the axis when B is
 * slower, left when faster; its width the change of the median rank
 * (of the slowest one when the median's did not change). */
static void chart(const struct df_diff *d, struct tp_buf *b)
{
	const struct df_list *l = &d->t[DF_T_CHANGES];
	size_t n = l->n < CHART_ROWS ? l->n : CHART_ROWS, i;
	long double top = 0, v;
	const int mid = LABEL_W + (CHART_W - LABEL_W) / 2;
	const int half = (CHART_W - LABEL_W) / 2 - 90;
	char s[64];

	for (i = 0; i < n; i++) {
		const struct df_row *r = &d->rows[l->v[i]];

		v = fabsl(r->delta ? r->delta : r->delta_max);
		if (r->status != DF_NA && v > top)
			top = v;
	}
	if (!n || top <= 0)
		return;
	rp_bprintf(b, "<svg class=\"changes\" width=\"%d\" height=\"%zu\" "
		   "xmlns=\"http://www.w3.org/2000/svg\">\n", CHART_W,
		   n * ROW_H + 8);
	for (i = 0; i < n; i++) {
		const struct df_row *r = &d->rows[l->v[i]];
		long double dv = r->delta ? r->delta : r->delta_max;
		int y = (int)(i * ROW_H) + 4, w;
		char name[56];

		if (r->status == DF_NA)
			continue;
		w = (int)llroundl(fabsl(dv) / top * half);
		if (w < 1)
			w = 1;
		snprintf(name, sizeof(name), "%s", r->name);
		if (strlen(r->name) >= sizeof(name))
			memcpy(name + sizeof(name) - 4, "...", 4);
		rp_bprintf(b, "<text x=\"%d\" y=\"%d\" text-anchor=\"end\">",
			   LABEL_W - 8, y + 15);
		text(b, name);
		tp_buf_lit(b, "</text>");
		/* no bar for no change as written (a calls change) */
		if (llroundl(dv)) {
			rp_bprintf(b, "<rect class=\"%s\" x=\"%d\" y=\"%d\" "
				   "width=\"%d\" height=\"%d\" data-name=\"",
				   dv > 0 ? "worse" : "better",
				   dv > 0 ? mid : mid - w, y + 3, w, ROW_H - 8);
			text(b, r->name);
			tp_buf_lit(b, "\"/>");
		}
		rp_bprintf(b, "<text x=\"%d\" y=\"%d\"%s>%s</text>\n",
			   dv > 0 ? mid + w + 6 : mid - w - 6, y + 15,
			   dv > 0 ? "" : " text-anchor=\"end\"",
			   df_fmt_delta(s, sizeof(s), r, dv));
	}
	rp_bprintf(b, "<line class=\"axis\" x1=\"%d\" y1=\"0\" x2=\"%d\" "
		   "y2=\"%zu\"/>\n</svg>\n", mid, mid, n * ROW_H + 8);
}

static void table(const struct df_diff *d, int t, struct tp_buf *b)
{
	const struct df_list *l = &d->t[t];
	struct df_cells c;
	size_t i, n = l->n < d->top ? l->n : d->top;

	tp_buf_lit(b, "<h2>");
	text(b, df_table_title(t));
	tp_buf_lit(b, "</h2>\n");
	if (!l->n && !l->unchanged) {
		tp_buf_lit(b, "<p>None in either run.</p>\n");
		return;
	}
	if (!l->n) {
		rp_bprintf(b, "<p>No changes (%zu names, each the same in both "
			   "runs).</p>\n", l->unchanged);
		return;
	}
	tp_buf_lit(b, "<p class=\"note\">");
	text(b, df_table_note(t));
	tp_buf_lit(b, "</p>\n");
	if (t == DF_T_CHANGES)
		chart(d, b);
	tp_buf_lit(b, "<div class=\"wrap\"><table>\n");
	df_cells_head(d, 0, &c);
	table_row(b, &c, 1, 0);
	for (i = 0; i < n; i++) {
		df_cells_row(d, &d->rows[l->v[i]], i + 1, 0, &c);
		table_row(b, &c, 0, d->rows[l->v[i]].cat != NULL);
	}
	rp_bprintf(b, "</table></div>\n<p class=\"note\">%zu changed%s, %zu the "
		   "same.</p>\n", l->n, n < l->n ? " (the top ones listed)" :
		   "", l->unchanged);
}

static void breakdown(const struct df_diff *d, struct tp_buf *b)
{
	struct df_cells c;
	int p;

	tp_buf_lit(b, "<h2>Step time and its breakdown</h2>\n<p class=\"note\">"
		   "Per step (memory: the peak over the run); the GPU figures "
		   "are tprof report's temporal breakdown (HTA's).</p>\n"
		   "<div class=\"wrap\"><table>\n");
	df_cells_head(d, 1, &c);
	table_row(b, &c, 1, 0);
	for (p = 0; p < DF_NPARTS; p++) {
		df_cells_row(d, &d->rows[p], 0, 1, &c);
		table_row(b, &c, 0, 0);
	}
	tp_buf_lit(b, "</table></div>\n");
}

void df_write_html(const struct df_diff *d, struct tp_buf *b)
{
	struct tp_buf w = { 0 };
	int k, t;

	tp_buf_lit(b, "<!DOCTYPE html>\n<html xmlns=\"http://www.w3.org/1999/"
		   "xhtml\" lang=\"en\"><head><meta charset=\"utf-8\"/>"
		   "<title>tprof diff</title><style>");
	tp_buf_cstr(b, css);
	tp_buf_lit(b, "</style></head>\n<body>\n<h1>tprof diff</h1>\n"
		   "<ul class=\"runs\">\n");
	for (k = 0; k < 2; k++) {
		w.len = 0;
		rp_bprintf(&w, "%s: %s: ", k ? "B" : "A", d->s[k].arg);
		df_side_words(&w, &d->s[k]);
		tp_buf_char(&w, 0);
		tp_buf_lit(b, "<li>");
		text(b, w.oom ? "?" : w.p);
		tp_buf_lit(b, "</li>\n");
	}
	b->oom |= w.oom;
	tp_buf_free(&w);
	tp_buf_lit(b, "</ul>\n<p class=\"head\">");
	words(b, df_headline, d);
	tp_buf_lit(b, "</p>\n<p class=\"note\">");
	words(b, df_steps_words, d);
	tp_buf_lit(b, "</p>\n");
	table(d, DF_T_CHANGES, b);
	breakdown(d, b);
	for (t = DF_T_OPS; t < DF_NTABLES; t++)
		table(d, t, b);
	tp_buf_lit(b, "</body></html>\n");
}
