/* tprof report --html: one self-contained page, answer first: the
 * findings (what is slow, where, its cost per step, what to try) at the
 * top, then one row per rank and GPU activity over time, then the
 * charts and the details. Written as well-formed XML (every element
 * closed, values quoted, only the five XML entities) so XML tools can
 * read it too; no script.
 *
 * The top of the HTML side: it calls the charts (report_charts.c,
 * report_heat.c), the tables (report_tables.c), the escaping
 * (report_xml.c), the findings' words and the formatting helpers;
 * nothing below calls back into it. */
#include "report_charts.h"
#include "cli/report/report_tables.h"
#include "report_xml.h"
#include "cli/report/findings/findings.h"

#include <string.h>

/* Histograms drawn, of the top names. */
#define HTML_HISTS 5

static const char style[] =
	"body{font:14px/1.4 system-ui,sans-serif;margin:16px 24px;"
	"color:#222}"
	"h1{font-size:22px;margin:0 0 2px}h2{margin:22px 0 6px;"
	"font-size:18px;border-bottom:1px solid #ddd}"
	"p.intro{margin:0 0 8px;color:#555}p.note{color:#666;margin:2px 0}"
	"ol.findings{margin:0;padding:0;list-style:none}"
	"li.finding{border-left:6px solid #d9822b;background:#fff8f0;"
	"margin:0 0 8px;padding:6px 10px}"
	"li.slow_gpu,li.host_bound,li.slow_other{border-color:#c23030;"
	"background:#fdf0ef}"
	"li.memory_near_capacity,li.incomplete_trace{border-color:#888;"
	"background:#f4f4f4}"
	"div.headline{font-size:16px}span.n{font-weight:bold;margin-right:6px}"
	"span.cost{font-weight:bold;color:#a0281e;white-space:nowrap;"
	"margin-left:6px}"
	"div.where,div.try,div.caveat{font-size:13px;margin-top:2px}"
	"div.caveat{color:#8a5a00}details{font-size:13px}"
	"details summary{cursor:pointer;color:#555}"
	"p.none{background:#eef7ee;padding:8px 10px}"
	"table{border-collapse:collapse;margin:8px 0 16px}"
	"th,td{border:1px solid #ccc;padding:3px 8px}"
	"th{background:#f3f3f3}td.r{text-align:right;white-space:nowrap}"
	"tr.straggler td,tr.flag td{background:#fde2e1}"
	"td.name{max-width:40em;overflow-wrap:anywhere}"
	"svg{display:block;margin:8px 0 14px;font-size:12px;width:100%;"
	"height:auto}"
	"svg .frame{fill:none;stroke:#999}svg .grid{stroke:#eee}"
	"svg .tk{stroke:#999}svg .series{fill:none;stroke-width:1.5}"
	"svg .tx,svg .ax,svg .note{text-anchor:middle}"
	"svg .ty{text-anchor:end}svg .ct{font-weight:bold;font-size:14px}"
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
		tp_buf_lit(b, "<p class=\"note\">");
		rp_xml_text(b, t->note);
		tp_buf_lit(b, "</p>\n");
	}
	if (t->sel_note) {
		tp_buf_lit(b, "<p class=\"note\">");
		rp_xml_text(b, t->sel_note);
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

static void div_text(struct tp_buf *b, const char *cls, const char *label,
		     const char *text)
{
	if (!text)
		return;
	rp_bprintf(b, "<div class=\"%s\"><b>%s:</b> ", cls, label);
	rp_xml_text(b, text);
	tp_buf_lit(b, "</div>\n");
}

static void html_finding(struct tp_buf *b, const struct rp_report *rep,
			 const struct rp_finding *f)
{
	struct tp_buf t = { 0 };
	size_t i;

	rp_bprintf(b, "<li class=\"finding %s\" id=\"finding-%zu\" "
		   "data-kind=\"%s\" data-ranks=\"", rp_fkind_name(f->kind),
		   f->id, rp_fkind_name(f->kind));
	for (i = 0; i < f->nranks; i++) {
		if (i)
			tp_buf_char(b, ' ');
		rp_xml_text(b, rep->ranks[f->ranks[i]]->label);
	}
	rp_bprintf(b, "\">\n<div class=\"headline\"><span class=\"n\">%zu."
		   "</span><b>", f->id);
	rp_fmt_ranks(&t, rep, f->ranks, f->nranks);
	tp_buf_char(&t, 0);
	rp_xml_text(b, t.oom ? "?" : t.p);
	tp_buf_lit(b, "</b>: ");
	rp_xml_text(b, f->title ? f->title : "");
	tp_buf_lit(b, " <span class=\"cost\">");
	t.len = 0;
	rp_finding_cost(&t, f);
	tp_buf_char(&t, 0);
	rp_xml_text(b, t.oom ? "?" : t.p);
	tp_buf_lit(b, "</span></div>\n");
	tp_buf_free(&t);
	div_text(b, "where", "Where", f->where);
	div_text(b, "try", "Try", f->try_);
	div_text(b, "caveat", "Caveat", f->caveat);
	if (f->evidence) {
		tp_buf_lit(b, "<details><summary>Evidence</summary><p>");
		rp_xml_text(b, f->evidence);
		tp_buf_lit(b, "</p></details>\n");
	}
	tp_buf_lit(b, "</li>\n");
}

static void html_findings(struct tp_buf *b, const struct rp_report *rep)
{
	size_t i;

	tp_buf_lit(b, "<section id=\"findings\">\n<h2>Findings</h2>\n");
	if (!rep->fs->n)
		tp_buf_lit(b, "<p class=\"none\">None: no rank is slower than "
			   "the median rank by 10 %, and no rule of "
			   "docs/guide/reading-the-report.md applies.</p>\n");
	else
		tp_buf_lit(b, "<ol class=\"findings\">\n");
	for (i = 0; i < rep->fs->n; i++)
		html_finding(b, rep, &rep->fs->v[i]);
	if (rep->fs->n)
		tp_buf_lit(b, "</ol>\n");
	tp_buf_lit(b, "</section>\n");
}

static void html_hists(struct tp_buf *b, const struct rp_report *rep)
{
	size_t i;

	rp_bprintf(b, "<h2>Duration histograms (top %d names)</h2>\n"
		   "<p class=\"note\">Calls per histogram bucket "
		   "(summary/hist.h: 16 buckets per power of two), one line "
		   "per rank.</p>\n", HTML_HISTS);
	if (!rep->nnames)
		tp_buf_lit(b, "<p>No calls.</p>\n");
	for (i = 0; i < rep->nnames && i < HTML_HISTS && i < rep->top; i++)
		rp_svg_hist(b, rep, &rep->names[i]);
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
		   "<meta charset=\"utf-8\"/>\n<meta name=\"viewport\" "
		   "content=\"width=device-width\"/>\n<title>tprof report"
		   "</title>\n<style>%s</style>\n</head>\n<body>\n<h1>tprof "
		   "report</h1>\n<p class=\"intro\">", style);
	rp_xml_text(b, ts.intro);
	tp_buf_lit(b, ".</p>\n");
	html_findings(b, rep);
	html_table(b, &ts.t[RP_T_OVERVIEW], "overview");
	if (ts.many)
		html_table(b, &ts.t[RP_T_DIST], "distribution");
	rp_svg_heat(b, rep);
	tp_buf_lit(b, "<h2>Steps</h2>\n");
	rp_svg_steps(b, rep);
	rp_svg_breakdown(b, rep);
	rp_svg_top_kernels(b, rep);
	rp_svg_ranges(b, rep);
	tp_buf_lit(b, "<h2>Device memory</h2>\n");
	rp_svg_memory(b, rep);
	rp_html_host(b, rep);
	tp_buf_lit(b, "<h1>Details</h1>\n");
	html_table(b, &ts.t[RP_T_STEPS], "steps");
	html_table(b, &ts.t[RP_T_HEALTH], "gpu-health");
	html_table(b, &ts.t[RP_T_GPU], "gpu");
	html_table(b, &ts.t[RP_T_BREAKDOWN], "breakdown");
	html_table(b, &ts.t[RP_T_LAUNCH], "launch");
	html_table(b, &ts.t[RP_T_RANGES], "ranges");
	html_table(b, &ts.t[RP_T_GAPS], "gaps");
	html_table(b, &ts.t[RP_T_NAMES], "names");
	html_table(b, &ts.t[RP_T_DETAIL], "detail");
	html_table(b, &ts.t[RP_T_RANKS], "ranks");
	html_stragglers(b, &ts);
	html_hists(b, rep);
	tp_buf_lit(b, "</body>\n</html>\n");
out:
	rp_tables_free(&ts);
}
