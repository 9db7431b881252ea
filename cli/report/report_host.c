/* tprof report: the host side per rank (report_host.h). Reads each
 * rank's "host_activity" member as parsed (rp_rank.host_member) and writes its own
 * Markdown and HTML sections, so it stands apart from the report's other
 * tables: the top functions and Python functions by CPU time and the
 * blocking calls by time while the GPU was idle (over the whole run for
 * a rank without GPU activity), and in the HTML an icicle of the stacks.
 * Calls the formatting (report_fmt.c) and the escaping (report_xml.c). */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "summary/summary.h"
#include "report_host.h"
#include "report_xml.h"

#define TOP_ROWS 10
#define ICICLE_W 900.0
#define ICICLE_ROW 17
#define ICICLE_DEPTH 40

typedef const struct tp_json_node jnode;

static int64_t num(jnode *n, const char *key)
{
	int64_t v;

	return tp_json_int64(tp_json_get(n, key), &v) ? v : 0;
}

static const char *str(jnode *n, const char *key)
{
	jnode *s = tp_json_get(n, key);

	return s && s->type == TP_JSON_STRING ? s->str : NULL;
}

/* The part shown: "idle" when the rank had GPU activity, else "all". */
static jnode *part(const struct rp_rank *r, int *idle)
{
	jnode *p;

	if (!r->host_member)
		return NULL;
	p = tp_json_get(r->host_member, "idle");
	*idle = p && p->type == TP_JSON_OBJECT;
	if (!*idle)
		p = tp_json_get(r->host_member, "all");
	return p && p->type == TP_JSON_OBJECT ? p : NULL;
}

static int64_t host_ns(jnode *p)
{
	return num(p, "sampled_ns") + num(p, "blocking_ns");
}

/* What shares are of: the GPU's idle time, or the rank's wall time
 * (several threads together can pass 100 %). */
static int64_t base_ns(const struct rp_rank *r, int idle)
{
	return idle ? r->gpu.idle_ns : r->wall_ns;
}

static int any_host(const struct rp_report *rep)
{
	size_t i;

	for (i = 0; i < rep->nranks; i++)
		if (rep->ranks[i]->host_member)
			return 1;
	return 0;
}

static double share(int64_t part_ns, int64_t whole)
{
	return whole > 0 ? (double)part_ns / (double)whole : 0.0;
}

/* A function as shown: "decode (Image.py:12)" for Python. */
static void fn_label(jnode *f, char *buf, size_t len)
{
	const char *name = str(f, "function"), *file = str(f, "file");
	jnode *py = tp_json_get(f, "python");
	int64_t line = num(f, "line");

	if (py && py->type == TP_JSON_TRUE && file) {
		const char *base = strrchr(file, '/');

		snprintf(buf, len, "%s (%s:%" PRId64 ")", name ? name : "?",
			 base ? base + 1 : file, line);
		return;
	}
	snprintf(buf, len, "%s", name ? name : "?");
}

/* One row of the section: rank, what, ms, share. */
struct row {
	const char *rank, *kind;
	char what[640];
	int64_t ns;
	double share;
};

typedef void (*row_fn)(const struct row *r, void *ctx);

static void each_row(const struct rp_rank *r, jnode *p, int idle,
		     const char *list, row_fn fn, void *ctx)
{
	jnode *a = tp_json_get(p, list), *x;
	int64_t whole = base_ns(r, idle);
	unsigned n = 0;
	struct row row;

	if (!a || a->type != TP_JSON_ARRAY)
		return;
	for (x = a->child; x && n < TOP_ROWS; x = x->next, n++) {
		row.rank = r->label;
		if (!strcmp(list, "blocking")) {
			const char *file = str(x, "file");

			snprintf(row.what, sizeof(row.what), "%s%s%s",
				 str(x, "call") ? str(x, "call") : "?",
				 file ? " on " : "", file ? file : "");
			row.ns = num(x, "ns");
			row.kind = "blocked";
		} else {
			fn_label(x, row.what, sizeof(row.what));
			row.ns = num(x, !strcmp(list, "python") ? "ns" :
				     "self_ns");
			row.kind = !strcmp(list, "python") ? "Python" :
				   "native";
		}
		row.share = share(row.ns, whole);
		fn(&row, ctx);
	}
}

static const char *const lists[] = { "python", "functions", "blocking" };

static void md_row(const struct row *r, void *ctx)
{
	struct tp_buf *b = ctx;
	char t[48];

	tp_buf_lit(b, "| ");
	tp_md_cell(b, r->rank, 0);
	rp_bprintf(b, " | %s | ", r->kind);
	tp_md_cell(b, r->what, 200);
	rp_bprintf(b, " | %s | %.1f %% |\n",
		   rp_fmt_ns(t, sizeof(t), (long double)r->ns),
		   100.0 * r->share);
}

static void rank_line(const struct rp_rank *r, jnode *p, int idle, char *buf,
		      size_t len)
{
	char a[48], c[48], d[48], e[48];

	if (idle)
		snprintf(buf, len, "rank %s: GPU idle %s of %s (%.1f %%); "
			 "meanwhile CPU samples %s, blocked %s", r->label,
			 rp_fmt_ns(a, sizeof(a), (long double)r->gpu.idle_ns),
			 rp_fmt_ns(c, sizeof(c), (long double)r->gpu.span_ns),
			 100.0 * share(r->gpu.idle_ns, r->gpu.span_ns),
			 rp_fmt_ns(d, sizeof(d),
				   (long double)num(p, "sampled_ns")),
			 rp_fmt_ns(e, sizeof(e),
				   (long double)num(p, "blocking_ns")));
	else
		snprintf(buf, len, "rank %s: no GPU activity; over the run "
			 "CPU samples %s, blocked %s", r->label,
			 rp_fmt_ns(c, sizeof(c),
				   (long double)num(p, "sampled_ns")),
			 rp_fmt_ns(d, sizeof(d),
				   (long double)num(p, "blocking_ns")));
}

void rp_host_md(const struct rp_report *rep, struct tp_buf *b)
{
	char line[512];
	size_t i, k;
	int idle;

	if (!any_host(rep))
		return;
	tp_buf_lit(b, "\n## Host while the GPU was idle\n\n"
		   "CPU samples and blocking calls (TPROF_TRACE=cpu,osrt) "
		   "that fell in the GPU's idle intervals, as shares of the "
		   "idle time (of the wall time for a rank without GPU "
		   "activity; the threads' shares add up, and may pass 100 "
		   "%). Python: the innermost Python function of a sample; "
		   "native: the innermost function.\n\n");
	for (i = 0; i < rep->nranks; i++) {
		jnode *p = part(rep->ranks[i], &idle);

		if (!p)
			continue;
		rank_line(rep->ranks[i], p, idle, line, sizeof(line));
		tp_buf_lit(b, "- ");
		tp_md_cell(b, line, 0);
		tp_buf_char(b, '\n');
	}
	tp_buf_lit(b, "\n| rank | kind | what | time | share |\n"
		   "|:---|:---|:---|---:|---:|\n");
	for (i = 0; i < rep->nranks; i++) {
		jnode *p = part(rep->ranks[i], &idle);

		for (k = 0; p && k < 3; k++)
			each_row(rep->ranks[i], p, idle, lists[k], md_row, b);
	}
	for (i = 0; i < rep->nranks; i++) {
		struct rp_host_finding f;

		if (!rp_host_finding(rep, i, &f))
			continue;
		rp_host_finding_text(&f, line, sizeof(line));
		tp_buf_lit(b, "\n- **");
		tp_md_cell(b, line, 0);
		tp_buf_lit(b, "**");
	}
	tp_buf_char(b, '\n');
}

static void html_row(const struct row *r, void *ctx)
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

/* The icicle: the root on top, each frame's children below it, widths
 * in proportion to their time; a frame's full name and time in its
 * <title>. Python frames blue, native ones orange. */
static void icicle_node(struct tp_buf *b, jnode *n, double x, double w,
			int depth, int64_t root)
{
	const char *name = str(n, "name");
	int64_t ns = num(n, "ns");
	jnode *kids = tp_json_get(n, "children"), *c;
	double cx = x;
	char t[48];

	if (w < 0.5 || depth >= ICICLE_DEPTH)
		return;
	rp_bprintf(b, "<g><title>");
	rp_xml_text(b, name ? name : "?");
	rp_bprintf(b, " %s (%.1f %%)</title><rect x=\"%.1f\" y=\"%d\" "
		   "width=\"%.1f\" height=\"%d\" class=\"%s\"/>",
		   rp_fmt_ns(t, sizeof(t), (long double)ns),
		   100.0 * share(ns, root), x, depth * ICICLE_ROW, w,
		   ICICLE_ROW - 1, name && !strncmp(name, "py::", 4) ? "py" :
		   "nat");
	if (w > 40) {
		rp_bprintf(b, "<text x=\"%.1f\" y=\"%d\">", x + 3,
			   depth * ICICLE_ROW + 12);
		rp_xml_text(b, name ? name : "?");
		tp_buf_lit(b, "</text>");
	}
	tp_buf_lit(b, "</g>\n");
	if (!kids || kids->type != TP_JSON_ARRAY || ns <= 0)
		return;
	for (c = kids->child; c; c = c->next) {
		double cw = w * (double)num(c, "ns") / (double)ns;

		icicle_node(b, c, cx, cw, depth + 1, root);
		cx += cw;
	}
}

static int tree_depth(jnode *n, int d)
{
	jnode *kids = tp_json_get(n, "children"), *c;
	int best = d + 1;

	if (!kids || kids->type != TP_JSON_ARRAY || d >= ICICLE_DEPTH)
		return best;
	for (c = kids->child; c; c = c->next) {
		int k = tree_depth(c, d + 1);

		if (k > best)
			best = k;
	}
	return best;
}

static void icicle(struct tp_buf *b, const struct rp_rank *r, jnode *p)
{
	jnode *root = tp_json_get(p, "flame");
	int depth;

	if (!root || root->type != TP_JSON_OBJECT || num(root, "ns") <= 0)
		return;
	depth = tree_depth(root, 0);
	tp_buf_lit(b, "<h3>Rank ");
	rp_xml_text(b, r->label);
	tp_buf_lit(b, ": CPU samples</h3>\n");
	rp_bprintf(b, "<svg xmlns=\"http://www.w3.org/2000/svg\" "
		   "class=\"icicle\" width=\"%.0f\" height=\"%d\">\n",
		   ICICLE_W, depth * ICICLE_ROW);
	icicle_node(b, root, 0, ICICLE_W, 0, num(root, "ns"));
	tp_buf_lit(b, "</svg>\n");
}

void rp_host_html(const struct rp_report *rep, struct tp_buf *b)
{
	char line[512];
	size_t i, k;
	int idle;

	if (!any_host(rep))
		return;
	tp_buf_lit(b, "<h2>Host while the GPU was idle</h2>\n<style>"
		   "svg.icicle rect.py{fill:#9ecae1}"
		   "svg.icicle rect.nat{fill:#fdd0a2}"
		   "svg.icicle rect{stroke:#fff}"
		   "svg.icicle text{font-size:10px}</style>\n<ul>\n");
	for (i = 0; i < rep->nranks; i++) {
		jnode *p = part(rep->ranks[i], &idle);
		struct rp_host_finding f;

		if (!p)
			continue;
		rank_line(rep->ranks[i], p, idle, line, sizeof(line));
		tp_buf_lit(b, "<li>");
		rp_xml_text(b, line);
		if (rp_host_finding(rep, i, &f)) {
			rp_host_finding_text(&f, line, sizeof(line));
			tp_buf_lit(b, "<br/><b>");
			rp_xml_text(b, line);
			tp_buf_lit(b, "</b>");
		}
		tp_buf_lit(b, "</li>\n");
	}
	tp_buf_lit(b, "</ul>\n<table class=\"host\">\n<thead><tr><th>rank"
		   "</th><th>kind</th><th>what</th><th>time</th><th>share"
		   "</th></tr></thead>\n<tbody>\n");
	for (i = 0; i < rep->nranks; i++) {
		jnode *p = part(rep->ranks[i], &idle);

		for (k = 0; p && k < 3; k++)
			each_row(rep->ranks[i], p, idle, lists[k], html_row, b);
	}
	tp_buf_lit(b, "</tbody></table>\n");
	for (i = 0; i < rep->nranks; i++) {
		jnode *p = part(rep->ranks[i], &idle);

		if (p)
			icicle(b, rep->ranks[i], p);
	}
}

static void json_row(const struct row *r, void *ctx)
{
	struct tp_buf *b = ctx;

	tp_buf_cstr(b, b->p[b->len - 1] == '[' ? "\n   {\"kind\": " :
		    ",\n   {\"kind\": ");
	tp_json_str(b, r->kind);
	tp_buf_lit(b, ", \"what\": ");
	tp_json_str(b, r->what);
	rp_bprintf(b, ", \"ns\": %" PRId64 ", \"share\": %.4f}", r->ns,
		   r->share);
}

void rp_host_json(const struct rp_report *rep, struct tp_buf *b)
{
	size_t i, k, n = 0;
	int idle;

	if (!any_host(rep))
		return;
	tp_buf_lit(b, ",\n\"host\": [");
	for (i = 0; i < rep->nranks; i++) {
		const struct rp_rank *r = rep->ranks[i];
		jnode *p = part(r, &idle);
		struct rp_host_finding f;
		char line[512];

		if (!p)
			continue;
		tp_buf_cstr(b, n++ ? ",\n {\"rank\": " : "\n {\"rank\": ");
		tp_json_str(b, r->label);
		rp_bprintf(b, ", \"over\": \"%s\", \"sampled_ns\": %" PRId64
			   ", \"blocking_ns\": %" PRId64 ", \"top\": [",
			   idle ? "gpu_idle" : "all", num(p, "sampled_ns"),
			   num(p, "blocking_ns"));
		for (k = 0; k < 3; k++)
			each_row(r, p, idle, lists[k], json_row, b);
		tp_buf_lit(b, "], \"finding\": ");
		if (rp_host_finding(rep, i, &f)) {
			rp_host_finding_text(&f, line, sizeof(line));
			tp_json_str(b, line);
		} else {
			tp_buf_lit(b, "null");
		}
		tp_buf_char(b, '}');
	}
	tp_buf_lit(b, "]");
}

int rp_host_finding(const struct rp_report *rep, size_t e,
		    struct rp_host_finding *f)
{
	const struct rp_rank *r = rep->ranks[e];
	jnode *p, *fn, *bl;
	int idle;

	memset(f, 0, sizeof(*f));
	p = part(r, &idle);
	if (!p || !idle || r->gpu.span_ns <= 0 || host_ns(p) <= 0)
		return 0;
	f->rank = r->label;
	f->idle_ns = r->gpu.idle_ns;
	f->idle_share = share(r->gpu.idle_ns, r->gpu.span_ns);
	f->host_ns = host_ns(p);
	/* shares of the idle time */
	fn = tp_json_get(p, "python");
	if (!fn || fn->type != TP_JSON_ARRAY || !fn->child) {
		fn = tp_json_get(p, "functions");
		fn = fn && fn->type == TP_JSON_ARRAY ? fn->child : NULL;
		if (fn)
			f->function_share = share(num(fn, "self_ns"),
						  f->idle_ns);
	} else {
		fn = fn->child;
		f->python = 1;
		f->file = str(fn, "file");
		f->line = num(fn, "line");
		f->function_share = share(num(fn, "ns"), f->idle_ns);
	}
	if (fn)
		f->function = str(fn, "function");
	bl = tp_json_get(p, "blocking");
	bl = bl && bl->type == TP_JSON_ARRAY ? bl->child : NULL;
	if (bl) {
		f->blocking = str(bl, "call");
		f->blocking_file = str(bl, "file");
		f->blocking_share = share(num(bl, "ns"), f->idle_ns);
	}
	return 1;
}

void rp_host_finding_text(const struct rp_host_finding *f, char *buf,
			  size_t len)
{
	char what[400] = "", blk[400] = "";
	const char *base = f->file ? strrchr(f->file, '/') : NULL;

	if (f->function && f->python)
		snprintf(what, sizeof(what), " %.0f %% in %s (Python, %s:%"
			 PRId64 ")", 100.0 * f->function_share, f->function,
			 base ? base + 1 : f->file ? f->file : "?", f->line);
	else if (f->function)
		snprintf(what, sizeof(what), " %.0f %% in %s",
			 100.0 * f->function_share, f->function);
	if (f->blocking)
		snprintf(blk, sizeof(blk), "%s%.0f %% blocked in %s%s%s",
			 what[0] ? " and " : " ", 100.0 * f->blocking_share,
			 f->blocking, f->blocking_file ? " on " : "",
			 f->blocking_file ? f->blocking_file : "");
	snprintf(buf, len, "rank %s: GPU idle %.0f %% of its span; during it "
		 "the host spent%s%s", f->rank, 100.0 * f->idle_share, what,
		 blk);
}
