/* tprof report: the command. Reads every input first, then writes; an
 * input that fails stops the report before anything is printed, so a
 * caller never sees half a report (or an HTML file) from bad inputs. */
#include "report.h"
#include "report_data.h"
#include "report_input.h"
#include "report_read.h"
#include "report_ranks.h"
#include "report_opts.h"
#include "report_hang.h"
#include "findings/findings.h"
#include "cli/usage/usage.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

struct opts {
	const char *html;
	const char *summaries;
	const char *out;	/* -o FILE */
	int out_fmt;		/* from its extension */
	size_t top;		/* --top N */
	int json;
	int traces;		/* --traces */
	char **files;
	size_t nfiles;
};

static void usage(FILE *f)
{
	fprintf(f,
		"usage: tprof report [--json] [--traces] [--html FILE]\n"
		"                    [-o FILE] [--top N] [--summaries DIR]\n"
		"                    DIR_OR_FILE...\n"
		"\n"
		"One report over many ranks: findings first (what is slow,\n"
		"where, its cost per step, what to try), one row per rank,\n"
		"then per-name statistics across ranks, steps, the GPU\n"
		"analyses and stragglers, as Markdown on stdout. Reads\n"
		"<name>-rank<R>.summary.json files, or the traces (tprof's\n"
		"or torch.profiler's) when a rank has no summary; a\n"
		"directory gives every rank in it.\n"
		"\n"
		"  --json       print the report as JSON instead (every\n"
		"               row of every rank; docs/reference/\n"
		"               report-json.md)\n"
		"  -o FILE      write the report to FILE, as its extension\n"
		"               says: .md, .html or .json; stdout then gets\n"
		"               the findings in a few lines\n"
		"  --top N      the tables list the top N names (default\n"
		"               30); --json lists every one\n"
		"  --traces     read each rank's trace even when it has a\n"
		"               summary: the GPU analyses need the trace\n"
		"               (summaries written at exit lack them)\n"
		"  --html FILE  also write a self-contained HTML report with\n"
		"               charts to FILE (stdout: as with -o)\n"
		"  --summaries DIR\n"
		"               also write the summary computed from each\n"
		"               trace read to DIR/<stem>.summary.json, so\n"
		"               later reports need not read the trace again\n"
		"  --help       show this help\n"
		"\n"
		"Exit status: 0 done, 1 an input or output failed, 2 usage "
		"error.\n");
}

/* Returns -1 to exit 2, 1 to exit 0 (help), 0 to go on. */
static int parse_args(int argc, char **argv, struct opts *o)
{
	const char *v;
	int i, opts = 1;

	o->top = RP_TOP_NAMES;
	o->files = calloc((size_t)argc, sizeof(*o->files));
	if (!o->files)
		return -1;
	for (i = 1; i < argc; i++) {
		const char *a = argv[i];

		if (!opts || a[0] != '-' || !a[1]) {
			o->files[o->nfiles++] = argv[i];
		} else if (!strcmp(a, "--")) {
			opts = 0;
		} else if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
			usage(stdout);
			return 1;
		} else if (!strcmp(a, "--json")) {
			o->json = 1;
		} else if (!strcmp(a, "--traces")) {
			o->traces = 1;
		} else if (!strcmp(a, "--html") && i + 1 < argc) {
			o->html = argv[++i];
		} else if (!strncmp(a, "--html=", 7) && a[7]) {
			o->html = a + 7;
		} else if ((v = rp_value_of(argc, argv, &i, "--output", "-o"))) {
			if (rp_opt_output("report", v, &o->out, &o->out_fmt))
				return -1;
		} else if ((v = rp_value_of(argc, argv, &i, "--top", NULL))) {
			if (rp_opt_top("report", v, &o->top))
				return -1;
		} else if (!strcmp(a, "--summaries") && i + 1 < argc) {
			o->summaries = argv[++i];
		} else if (!strncmp(a, "--summaries=", 12) && a[12]) {
			o->summaries = a + 12;
		} else {
			tp_usage_error("report", "%s '%s'",
				       !strcmp(a, "--html") ||
				       !strcmp(a, "--summaries") ||
				       !strcmp(a, "-o") ||
				       !strcmp(a, "--output") ||
				       !strcmp(a, "--top") ?
				       "missing argument to" :
				       "unknown option", a);
			return -1;
		}
	}
	if (!o->nfiles) {
		tp_usage_error("report", "no input: give the directory the "
			       "traces were written to, or files");
		return -1;
	}
	return 0;
}

/* Inputs of one job share a world size; two sizes mean traces of
 * different runs side by side, which the comparison would not mean. */
static void warn_world_sizes(const struct rp_report *rep)
{
	const struct rp_rank *a = NULL, *r;
	size_t i;

	for (i = 0; i < rep->nranks; i++) {
		r = rep->ranks[i];
		if (r->world_size <= 0)
			continue;
		if (!a) {
			a = r;
		} else if (r->world_size != a->world_size) {
			fprintf(stderr, "tprof: warning: the inputs mix world "
				"sizes (%lld in %s, %lld in %s): are they one "
				"job's?\n", (long long)a->world_size, a->path,
				(long long)r->world_size, r->path);
			return;
		}
	}
}

static int read_all_inputs(struct rp_report *rep, const struct opts *o)
{
	struct rp_inputs in = { 0 };
	int ret = -1;

	in.traces = o->traces;
	if (rp_find_inputs(o->files, o->nfiles, &in))
		goto out;
	rep->ranks = calloc(in.n ? in.n : 1, sizeof(*rep->ranks));
	if (!rep->ranks) {
		rp_fail(o->files[0], "out of memory");
		goto out;
	}
	if (rp_read_inputs(in.paths, in.n, rep->ranks))
		goto out;
	rep->nranks = in.n;
	ret = 0;
out:
	rp_inputs_free(&in);
	return ret;
}

static int write_summaries(const struct rp_report *rep, const char *dir)
{
	const struct rp_rank *r;
	char *path;
	size_t i;
	int ret;

	for (i = 0; i < rep->nranks; i++) {
		r = rep->ranks[i];
		if (strcmp(r->kind, "trace"))
			continue;
		path = rp_summary_path(dir, r->path);
		if (!path)
			return rp_fail(dir, "out of memory");
		ret = rp_write_file(path, &r->json);
		free(path);
		if (ret)
			return -1;
	}
	return 0;
}

/* The report in one format. */
static void render(const struct rp_report *rep, int fmt, struct tp_buf *b)
{
	if (fmt == RP_OUT_JSON)
		rp_write_json(rep, b);
	else if (fmt == RP_OUT_HTML)
		rp_write_html(rep, b);
	else
		rp_write_md(rep, b);
}

/* The files asked for: -o FILE, --html FILE. */
static int write_outputs(const struct rp_report *rep, const struct opts *o)
{
	const char *path[2] = { o->out, o->html };
	int fmt[2] = { o->out_fmt, RP_OUT_HTML };
	struct tp_buf b = { 0 };
	int i, ret = 0;

	for (i = 0; i < 2 && !ret; i++) {
		if (!path[i])
			continue;
		b.len = 0;
		render(rep, fmt[i], &b);
		if (b.oom)
			ret = rp_fail(path[i], "out of memory");
		else
			ret = rp_write_file(path[i], &b);
	}
	tp_buf_free(&b);
	return ret;
}

/* hang: the hang section (Markdown) first; with no other input, alone.
 * On stdout: the JSON (--json), else the findings in a few lines when
 * the report went to a file, else the Markdown. */
static int emit(const struct rp_report *rep, const struct opts *o,
		struct tp_buf *hang)
{
	const char *files[2];
	struct tp_buf out = { 0 };
	size_t nfiles = 0;
	int ret = -1;

	if (o->out)
		files[nfiles++] = o->out;
	if (o->html)
		files[nfiles++] = o->html;
	if (hang->len && !o->json)
		tp_buf_put(&out, hang->p, hang->len);
	if (hang->len && !rep->nranks)
		;
	else if (o->json)
		rp_write_json(rep, &out);
	else if (nfiles)
		rp_write_brief(rep, &out, files, nfiles);
	else
		rp_write_md(rep, &out);
	if (out.oom) {
		rp_fail("stdout", "out of memory");
		goto out;
	}
	if (nfiles && !rep->nranks)
		fprintf(stderr, "tprof: warning: no summary or trace to "
			"report on: %s not written (the Hang section is on "
			"stdout)\n", files[0]);
	else if (nfiles && write_outputs(rep, o))
		goto out;
	if (o->summaries && write_summaries(rep, o->summaries))
		goto out;
	if (fwrite(out.p, 1, out.len, stdout) != out.len ||
	    fflush(stdout)) {
		rp_fail("stdout", "%s", strerror(errno));
		goto out;
	}
	ret = 0;
out:
	tp_buf_free(&out);
	return ret;
}

int tp_cmd_report(int argc, char **argv)
{
	struct rp_report rep = { 0 };
	struct tp_buf hang = { 0 };
	struct opts o = { 0 };
	int ret = 1, r;
	size_t i;

	r = parse_args(argc, argv, &o);
	if (r) {
		free(o.files);
		return r < 0 ? 2 : 0;
	}
	if (rp_hang_section(o.files, &o.nfiles, &hang) < 0)
		goto out;
	if (o.nfiles && read_all_inputs(&rep, &o))
		goto out;
	rp_label_ranks(&rep);
	warn_world_sizes(&rep);
	rep.top = o.top;
	if (rp_stats(&rep) || rp_findings_run(&rep)) {
		rp_fail(o.files[0], "out of memory");
		goto out;
	}
	if (emit(&rep, &o, &hang))
		goto out;
	ret = 0;
out:
	tp_buf_free(&hang);
	rp_findings_free(&rep);
	rp_stats_free(&rep);
	for (i = 0; i < rep.nranks; i++)
		rp_rank_free(rep.ranks[i]);
	free(rep.ranks);
	free(o.files);
	return ret;
}
