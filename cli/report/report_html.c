/* tprof report --html: one self-contained page, the Markdown's tables
 * plus charts. Written as well-formed XML (every element closed, values
 * quoted, only the five XML entities) so XML tools can read it too.
 *
 * The top of the HTML side: it calls the charts (report_charts.c), the
 * tables (report_tables.c), the escaping (report_xml.c) and the
 * formatting helpers (report_fmt.c); nothing below calls back into it. */
#include "report_charts.h"
#include "report_host.h"
#include "report_tables.h"
#include "report_xml.h"

#include <string.h>

static const char style[] =
	"body{font:14px/1.4 system-ui,sans-serif;margin:24px;color:#222}"
	"table{border-collapse:collapse;margin:8px 0 20px}"
	"th,td{border:1px solid #ccc;padding:3px 8px}"
	"th{background:#f3f3f3}td.r{text-align:right}"
	"tr.straggler td{background:#fde2e1}"
	"td.name{max-width:40em;overflow-wrap:anywhere}"
	"svg{display:block;margin:8px 0 18px;font-size:11px}"
	"svg .frame{fill:none;stroke:#999}svg .grid{stroke:#eee}"
	"svg .tk{stroke:#999}svg .series{fill:none;stroke-width:1.5}"
	"svg .tx,svg .ax,svg .note{text-anchor:middle}"
	"svg .ty{text-anchor:end}svg .ct{font-weight:bold}"
	"svg .note{fill:#888}"
	"svg .idle{fill:#ccc}svg .compute{fill:#2ca02c}"
	"svg .noncompute{fill:#ff7f0e}svg .bar{fill:#1f77b4}";

static void html_table(struct tp_buf *b, const struct rp_table *t,
		       const char *cls)
{
	size_t r, c;

	rp_bprintf(b, "<h2>");
	rp_xml_text(b, t->title);
	tp_buf_lit(b, "</h2>\n");
	if (!t->nrows) {
		tp_buf_lit(b, "<p>");
		rp_xml_text(b, t->empty ? t->empty : "None.");
		tp_buf_lit(b, "</p>\n");
		return;
	}
	if (t->note) {
		tp_buf_lit(b, "<p>");
		rp_xml_text(b, t->note);
		tp_buf_lit(b, "</p>\n");
	}
	rp_bprintf(b, "<table class=\"%s\">\n<thead><tr>", cls);
	for (c = 0; c < t->ncols; c++) {
		tp_buf_lit(b, "<th>");
		rp_xml_text(b, t->head[c]);
		tp_buf_lit(b, "</th>");
	}
	tp_buf_lit(b, "</tr></thead>\n<tbody>\n");
	for (r = 0; r < t->nrows; r++) {
		tp_buf_cstr(b, t->flag[r] ? "<tr class=\"straggler\">" :
			    "<tr>");
		for (c = 0; c < t->ncols; c++) {
			tp_buf_cstr(b, t->align[c] == 'r' ? "<td class=\"r\">" :
				    !strcmp(t->head[c], "name") ?
				    "<td class=\"name\">" : "<td>");
			rp_xml_text(b, rp_cell(t, r, c));
			tp_buf_lit(b, "</td>");
		}
		tp_buf_lit(b, "</tr>\n");
	}
	tp_buf_lit(b, "</tbody></table>\n");
}

static void html_hists(struct tp_buf *b, const struct rp_report *rep)
{
	size_t i;

	rp_bprintf(b, "<h2>Duration histograms by rank (top %d names)</h2>\n"
		   "<p>Calls per histogram bucket (summary/hist.h: 16 buckets "
		   "per power of two), one line per rank.</p>\n",
		   RP_TOP_DETAIL);
	if (!rep->nnames)
		tp_buf_lit(b, "<p>No calls.</p>\n");
	for (i = 0; i < rep->nnames && i < RP_TOP_DETAIL; i++) {
		tp_buf_lit(b, "<h3>");
		rp_xml_text(b, rep->names[i].cat);
		tp_buf_lit(b, ": ");
		rp_xml_text(b, rep->names[i].name);
		tp_buf_lit(b, "</h3>\n");
		rp_svg_hist(b, rep, &rep->names[i]);
	}
}

static void html_stragglers(struct tp_buf *b, const struct rp_tables *ts)
{
	size_t i;

	tp_buf_lit(b, "<h2>Stragglers</h2>\n");
	if (!ts->nlines) {
		tp_buf_lit(b, "<p>None.</p>\n");
		return;
	}
	tp_buf_lit(b, "<ul class=\"stragglers\">\n");
	for (i = 0; i < ts->nlines; i++) {
		tp_buf_lit(b, "<li>");
		rp_xml_text(b, ts->lines[i]);
		tp_buf_lit(b, "</li>\n");
	}
	tp_buf_lit(b, "</ul>\n");
}

void rp_write_html(const struct rp_report *rep, struct tp_buf *b)
{
	struct rp_tables ts;

	if (rp_tables_build(rep, &ts)) {
		b->oom = 1;
		goto out;
	}
	rp_bprintf(b, "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n"
		   "<meta charset=\"utf-8\"/>\n<title>tprof report</title>\n"
		   "<style>%s</style>\n</head>\n<body>\n<h1>tprof report</h1>\n"
		   "<p>", style);
	rp_xml_text(b, ts.intro);
	tp_buf_lit(b, "</p>\n");
	html_table(b, &ts.t[RP_T_RANKS], "ranks");
	html_table(b, &ts.t[RP_T_NAMES], "names");
	html_hists(b, rep);
	html_table(b, &ts.t[RP_T_DETAIL], "detail");
	html_table(b, &ts.t[RP_T_STEPS], "steps");
	rp_svg_steps(b, rep);
	tp_buf_lit(b, "<h2>Device memory</h2>\n");
	rp_svg_memory(b, rep);
	html_table(b, &ts.t[RP_T_GPU], "gpu");
	html_table(b, &ts.t[RP_T_BREAKDOWN], "breakdown");
	rp_svg_breakdown(b, rep);
	rp_svg_utilisation(b, rep);
	rp_svg_top_kernels(b, rep);
	html_table(b, &ts.t[RP_T_LAUNCH], "launch");
	html_table(b, &ts.t[RP_T_RANGES], "ranges");
	rp_svg_ranges(b, rep);
	html_table(b, &ts.t[RP_T_GAPS], "gaps");
	rp_host_html(rep, b);
	html_stragglers(b, &ts);
	tp_buf_lit(b, "</body>\n</html>\n");
out:
	rp_tables_free(&ts);
}
