/* tprof report --html: the host section (cli/report/report_host.h): each
 * rank's line, the rows of its top functions and blocking calls while
 * the GPU was idle, and an icicle of its CPU samples' stacks: the root
 * on top, each frame's callees below it, widths in proportion to their
 * time, a frame's full name and time in its <title>; Python frames blue,
 * native ones orange. With many ranks, those rp_chart_ranks picks. */
#include <inttypes.h>
#include <string.h>

#include "cli/report/report_host.h"
#include "report_charts.h"
#include "report_xml.h"

#define ICICLE_W 900.0
#define ICICLE_ROW 17
#define ICICLE_DEPTH 40

static double share(int64_t part_ns, int64_t whole)
{
	return whole > 0 ? (double)part_ns / (double)whole : 0.0;
}

static void html_row(const struct rp_hrow *r, void *ctx)
{
	struct tp_buf *b = ctx;
	char t[48];

	tp_buf_lit(b, "<tr><td>");
	rp_xml_text(b, r->rank);
	rp_bprintf(b, "</td><td>%s</td><td class=\"name\">", r->kind);
	rp_xml_text(b, r->what);
	rp_bprintf(b, "</td><td class=\"r\">%s</td><td class=\"r\">%.1f %%"
		   "</td></tr>\n", rp_fmt_ns(t, sizeof(t), (long double)r->ns),
		   100.0 * r->share);
}

static void frame(struct tp_buf *b, const struct rp_hnode *n, double x,
		  double w, int64_t root)
{
	char t[48];

	tp_buf_lit(b, "<g><title>");
	rp_xml_text(b, n->name);
	rp_bprintf(b, " %s (%.1f %%)</title><rect x=\"%.1f\" y=\"%u\" "
		   "width=\"%.1f\" height=\"%d\" class=\"%s\"/>",
		   rp_fmt_ns(t, sizeof(t), (long double)n->ns),
		   100.0 * share(n->ns, root), x, n->depth * ICICLE_ROW, w,
		   ICICLE_ROW - 1, !strncmp(n->name, "py::", 4) ? "py" : "nat");
	if (w > 40) {
		rp_bprintf(b, "<text x=\"%.1f\" y=\"%u\">", x + 3,
			   n->depth * ICICLE_ROW + 12);
		rp_xml_text(b, n->name);
		tp_buf_lit(b, "</text>");
	}
	tp_buf_lit(b, "</g>\n");
}

/* The tree is in preorder: a node's parent is the last node seen one
 * level up, and its x is where that parent's previous child ended. */
static void icicle(struct tp_buf *b, const struct rp_rank *r)
{
	const struct rp_host *h = &r->host_activity;
	double next[ICICLE_DEPTH], wid[ICICLE_DEPTH];
	int64_t ns[ICICLE_DEPTH];
	unsigned depth = 0;
	size_t i;

	if (!h->nflame || h->flame[0].ns <= 0)
		return;
	for (i = 0; i < h->nflame; i++)
		if (h->flame[i].depth < ICICLE_DEPTH &&
		    h->flame[i].depth + 1 > depth)
			depth = h->flame[i].depth + 1;
	tp_buf_lit(b, "<h3>Rank ");
	rp_xml_text(b, r->label);
	tp_buf_lit(b, ": CPU samples</h3>\n");
	rp_bprintf(b, "<svg xmlns=\"http://www.w3.org/2000/svg\" "
		   "class=\"icicle\" viewBox=\"0 0 %.0f %u\" width=\"%.0f\" "
		   "height=\"%u\">\n", ICICLE_W, depth * ICICLE_ROW, ICICLE_W,
		   depth * ICICLE_ROW);
	for (i = 0; i < h->nflame; i++) {
		const struct rp_hnode *n = &h->flame[i];
		unsigned d = n->depth;
		double x = 0, w = ICICLE_W;

		if (d >= ICICLE_DEPTH)
			continue;
		if (d) {
			x = next[d - 1];
			w = ns[d - 1] > 0 ? wid[d - 1] * (double)n->ns /
				(double)ns[d - 1] : 0;
			next[d - 1] += w;
		}
		next[d] = x;
		wid[d] = w;
		ns[d] = n->ns;
		if (w >= 0.5)
			frame(b, n, x, w, h->flame[0].ns);
	}
	tp_buf_lit(b, "</svg>\n");
}

void rp_html_host(struct tp_buf *b, const struct rp_report *rep)
{
	size_t sel[10], nsel, i;
	char line[512];

	if (!rp_host_any(rep))
		return;
	nsel = rp_chart_ranks(rep, sel);
	tp_buf_lit(b, "<h2>Host while the GPU was idle</h2>\n<style>"
		   "svg.icicle{width:auto}"
		   "svg.icicle rect.py{fill:#9ecae1}"
		   "svg.icicle rect.nat{fill:#fdd0a2}"
		   "svg.icicle rect{stroke:#fff}"
		   "svg.icicle text{font-size:10px}</style>\n"
		   "<p class=\"note\">CPU samples and blocking calls "
		   "(TPROF_TRACE=cpu,osrt) in the GPU's idle intervals, as "
		   "shares of the idle time (of the wall time for a rank "
		   "without GPU activity); the threads' shares add up.</p>\n"
		   "<ul>\n");
	for (i = 0; i < nsel; i++) {
		if (!rep->ranks[sel[i]]->host_activity.present)
			continue;
		rp_host_rank_line(rep->ranks[sel[i]], line, sizeof(line));
		tp_buf_lit(b, "<li>");
		rp_xml_text(b, line);
		tp_buf_lit(b, "</li>\n");
	}
	tp_buf_lit(b, "</ul>\n<table class=\"host\">\n<thead><tr><th>rank"
		   "</th><th>kind</th><th>what</th><th>time</th><th>share"
		   "</th></tr></thead>\n<tbody>\n");
	for (i = 0; i < nsel; i++)
		rp_host_rows(rep->ranks[sel[i]], html_row, b);
	tp_buf_lit(b, "</tbody></table>\n");
	for (i = 0; i < nsel; i++)
		if (rep->ranks[sel[i]]->host_activity.present)
			icicle(b, rep->ranks[sel[i]]);
}
