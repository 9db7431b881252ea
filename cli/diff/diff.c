/* tprof diff: the command. Reads both runs first, then writes: a run
 * that fails stops the diff before anything is printed, as tprof report
 * does. Its options are report's (-o FILE, --top N, --json). */
#include "diff.h"
#include "diff_data.h"
#include "cli/report/report_input.h"
#include "cli/report/report_opts.h"
#include "cli/usage/usage.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct opts {
	const char *out;	/* -o FILE */
	int out_fmt;		/* from its extension */
	size_t top;		/* --top N */
	int json;
	int traces;		/* --traces */
	const char *run[2];
	size_t nruns;
};

static const char help[] =
	"usage: tprof diff [--json] [-o FILE] [--top N] [--traces] A B\n"
	"\n"
	"What changed from run A to run B, per step: the step time and\n"
	"its breakdown (compute, communication, exposed communication,\n"
	"idle, as tprof report computes them), GPU work per name with\n"
	"new and vanished names and changed calls per step, ranked by\n"
	"impact on the step, then CPU-side calls and ranges, as\n"
	"Markdown on stdout. A and B are each a trace, a summary, or a\n"
	"directory of per-rank traces or summaries (tprof's or\n"
	"torch.profiler's), read as tprof report reads them; runs of\n"
	"different rank counts compare by the median and max over ranks.\n"
	"\n"
	"  --json       print the diff as JSON instead (every row;\n"
	"               docs/reference/diff-json.md)\n"
	"  -o FILE      write the diff to FILE, as its extension says:\n"
	"               .md, .html or .json; stdout then gets the step\n"
	"               time and the file's path\n"
	"  --top N      the tables list the top N names (default 30);\n"
	"               --json lists every one\n"
	"  --traces     read each rank's trace even when it has a\n"
	"               summary, as tprof report --traces does\n"
	"  --help       show this help\n"
	"\n"
	"Exit status: 0 done, 1 an input or output failed, 2 usage "
	"error.\n";

static int bad(const char *what, const char *arg)
{
	tp_usage_error("diff", "%s '%s'", what, arg);
	return -1;
}

/* Returns 0, or -1 after a usage error's line. */
static int parse_args(int argc, char **argv, struct opts *o)
{
	const char *v;
	int i, opts = 1;

	o->top = RP_TOP_NAMES;
	for (i = 1; i < argc; i++) {
		const char *a = argv[i];

		if (!opts || a[0] != '-' || !a[1]) {
			if (o->nruns == 2)
				return bad("a third run", a);
			o->run[o->nruns++] = a;
		} else if (!strcmp(a, "--")) {
			opts = 0;
		} else if (!strcmp(a, "--json")) {
			o->json = 1;
		} else if (!strcmp(a, "--traces")) {
			o->traces = 1;
		} else if ((v = rp_value_of(argc, argv, &i, "--output", "-o"))) {
			if (rp_opt_output("diff", v, &o->out, &o->out_fmt))
				return -1;
		} else if ((v = rp_value_of(argc, argv, &i, "--top", NULL))) {
			if (rp_opt_top("diff", v, &o->top))
				return -1;
		} else {
			return bad(!strcmp(a, "-o") || !strcmp(a, "--output") ||
				   !strcmp(a, "--top") ?
				   "missing argument to" : "unknown option", a);
		}
	}
	if (o->nruns < 2) {
		tp_usage_error("diff", "give two runs, A and B (each a trace, "
			       "a summary or a directory)");
		return -1;
	}
	return 0;
}

static void render(const struct df_diff *d, int fmt, struct tp_buf *b)
{
	if (fmt == RP_OUT_JSON)
		df_write_json(d, b);
	else if (fmt == RP_OUT_HTML)
		df_write_html(d, b);
	else
		df_write_md(d, b);
}

/* -o FILE: written next to FILE and renamed over it, so a reader never
 * sees half of one; out (unless NULL: --json) gets the step time and
 * the file's path. */
static int write_out(const struct df_diff *d, const struct opts *o,
		     struct tp_buf *out)
{
	struct tp_buf f = { 0 };
	int ret = 0;

	render(d, o->out_fmt, &f);
	if (f.oom)
		ret = rp_fail(o->out, "out of memory");
	else
		ret = rp_write_file(o->out, &f);
	tp_buf_free(&f);
	if (ret)
		return ret;
	if (out) {
		df_headline(out, d);
		rp_bprintf(out, "\nDiff: %s\n", o->out);
	}
	return 0;
}

static int emit(const struct df_diff *d, const struct opts *o)
{
	struct tp_buf out = { 0 };
	int ret = -1;

	if (o->json)
		df_write_json(d, &out);
	else if (!o->out)
		df_write_md(d, &out);
	if (o->out && write_out(d, o, o->json ? NULL : &out))
		goto out;
	if (out.oom) {
		rp_fail("stdout", "out of memory");
		goto out;
	}
	if (fwrite(out.p, 1, out.len, stdout) != out.len || fflush(stdout)) {
		rp_fail("stdout", "%s", strerror(errno));
		goto out;
	}
	ret = 0;
out:
	tp_buf_free(&out);
	return ret;
}

int tp_cmd_diff(int argc, char **argv)
{
	struct df_diff d = { 0 };
	struct opts o = { 0 };
	int ret = 1, r, k;

	r = tp_help_if_asked(argc, argv, help);
	if (r >= 0)
		return r;
	if (parse_args(argc, argv, &o))
		return TP_EXIT_USAGE;
	for (k = 0; k < 2; k++)
		if (df_side_read(&d.s[k], o.run[k], o.traces))
			goto out;
	d.top = o.top;
	if (df_rows_build(&d)) {
		rp_fail(o.run[0], "out of memory");
		goto out;
	}
	if (emit(&d, &o))
		goto out;
	ret = 0;
out:
	df_rows_free(&d);
	for (k = 0; k < 2; k++)
		df_side_free(&d.s[k]);
	return ret;
}
