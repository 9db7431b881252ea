/* tprof report: the host side per rank (report_host.h): the rows the
 * outputs share, and the Markdown and JSON sections. The top functions
 * and Python functions by CPU time and the blocking calls by time while
 * the GPU was idle (over the whole run for a rank without GPU activity),
 * each a share of that time; several threads' shares add up, and may
 * pass 100 %. Calls the formatting (report_fmt.c). */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "summary/summary.h"
#include "report_host.h"

int rp_host_any(const struct rp_report *rep)
{
	size_t i;

	for (i = 0; i < rep->nranks; i++)
		if (rep->ranks[i]->host_activity.present)
			return 1;
	return 0;
}

static double share(int64_t part_ns, int64_t whole)
{
	return whole > 0 ? (double)part_ns / (double)whole : 0.0;
}

/* What shares are of: the GPU's idle time, or the rank's wall time. */
static int64_t base_ns(const struct rp_rank *r)
{
	return r->host_activity.idle ? r->gpu.idle_ns : r->wall_ns;
}

void rp_host_fn_label(const struct rp_hfn *f, char *buf, size_t len)
{
	const char *base;

	if (!f->python || !f->file) {
		snprintf(buf, len, "%s", f->function);
		return;
	}
	base = strrchr(f->file, '/');
	snprintf(buf, len, "%s (%s:%" PRId64 ")", f->function,
		 base ? base + 1 : f->file, f->line);
}

void rp_host_call_label(const struct rp_hcall *c, char *buf, size_t len)
{
	snprintf(buf, len, "%s%s%s", c->call, c->file ? " on " : "",
		 c->file ? c->file : "");
}

static void fn_rows(const struct rp_rank *r, const struct rp_hfn *v,
		    size_t n, const char *kind,
		    void (*fn)(const struct rp_hrow *row, void *ctx),
		    void *ctx)
{
	struct rp_hrow row;
	size_t i;

	for (i = 0; i < n && i < RP_HOST_ROWS; i++) {
		row.rank = r->label;
		row.kind = kind;
		rp_host_fn_label(&v[i], row.what, sizeof(row.what));
		row.ns = v[i].ns;
		row.share = share(row.ns, base_ns(r));
		fn(&row, ctx);
	}
}

void rp_host_rows(const struct rp_rank *r,
		  void (*fn)(const struct rp_hrow *row, void *ctx), void *ctx)
{
	const struct rp_host *h = &r->host_activity;
	struct rp_hrow row;
	size_t i;

	if (!h->present)
		return;
	fn_rows(r, h->python, h->npython, "Python", fn, ctx);
	fn_rows(r, h->functions, h->nfunctions, "native", fn, ctx);
	for (i = 0; i < h->nblocking && i < RP_HOST_ROWS; i++) {
		row.rank = r->label;
		row.kind = "blocked";
		rp_host_call_label(&h->blocking[i], row.what,
				   sizeof(row.what));
		row.ns = h->blocking[i].ns;
		row.share = share(row.ns, base_ns(r));
		fn(&row, ctx);
	}
}

void rp_host_rank_line(const struct rp_rank *r, char *buf, size_t len)
{
	const struct rp_host *h = &r->host_activity;
	char a[48], c[48], d[48], e[48];

	rp_fmt_ns(d, sizeof(d), (long double)h->sampled_ns);
	rp_fmt_ns(e, sizeof(e), (long double)h->blocking_ns);
	if (h->idle)
		snprintf(buf, len, "rank %s: GPU idle %s of %s (%.1f %%); "
			 "meanwhile CPU samples %s, blocked %s", r->label,
			 rp_fmt_ns(a, sizeof(a), (long double)r->gpu.idle_ns),
			 rp_fmt_ns(c, sizeof(c), (long double)r->gpu.span_ns),
			 100.0 * share(r->gpu.idle_ns, r->gpu.span_ns), d, e);
	else
		snprintf(buf, len, "rank %s: no GPU activity; over the run "
			 "CPU samples %s, blocked %s", r->label, d, e);
}

static void md_row(const struct rp_hrow *r, void *ctx)
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

void rp_host_md(const struct rp_report *rep, struct tp_buf *b)
{
	char line[512];
	size_t i;

	if (!rp_host_any(rep))
		return;
	tp_buf_lit(b, "\n## Host while the GPU was idle\n\n"
		   "CPU samples and blocking calls (TPROF_TRACE=cpu,osrt) "
		   "that fell in the GPU's idle intervals, as shares of the "
		   "idle time (of the wall time for a rank without GPU "
		   "activity; the threads' shares add up, and may pass 100 "
		   "%). Python: the innermost Python function of a sample; "
		   "native: the innermost function.\n\n");
	for (i = 0; i < rep->nranks; i++) {
		if (!rep->ranks[i]->host_activity.present)
			continue;
		rp_host_rank_line(rep->ranks[i], line, sizeof(line));
		tp_buf_lit(b, "- ");
		tp_md_cell(b, line, 0);
		tp_buf_char(b, '\n');
	}
	tp_buf_lit(b, "\n| rank | kind | what | time | share |\n"
		   "|:---|:---|:---|---:|---:|\n");
	for (i = 0; i < rep->nranks; i++)
		rp_host_rows(rep->ranks[i], md_row, b);
}

static void json_row(const struct rp_hrow *r, void *ctx)
{
	struct tp_buf *b = ctx;

	tp_buf_cstr(b, b->p[b->len - 1] == '[' ? "\n   {\"kind\": " :
		    ",\n   {\"kind\": ");
	tp_json_str(b, r->kind);
	tp_buf_lit(b, ", \"what\": ");
	tp_json_str(b, r->what);
	rp_bprintf(b, ", \"ns\": %" PRId64 ", \"share\": ", r->ns);
	rp_json_ratio(b, r->share);
	tp_buf_char(b, '}');
}

void rp_host_json(const struct rp_report *rep, struct tp_buf *b)
{
	size_t i, n = 0;

	tp_buf_lit(b, ",\n\"host\": [");
	for (i = 0; i < rep->nranks; i++) {
		const struct rp_rank *r = rep->ranks[i];
		const struct rp_host *h = &r->host_activity;

		if (!h->present)
			continue;
		tp_buf_cstr(b, n++ ? ",\n {\"rank\": " : "\n {\"rank\": ");
		tp_json_str(b, r->label);
		rp_bprintf(b, ", \"over\": \"%s\", \"sampled_ns\": %" PRId64
			   ", \"blocking_ns\": %" PRId64 ", \"top\": [",
			   h->idle ? "gpu_idle" : "all", h->sampled_ns,
			   h->blocking_ns);
		rp_host_rows(r, json_row, b);
		tp_buf_lit(b, "]}");
	}
	tp_buf_lit(b, "]");
}
