/* tprof report: which files to read, and reading them.
 *
 * A directory gives one input per stem (the file name without
 * ".summary.json", ".trace.json.gz" or ".trace.json", or ".json.gz" or
 * ".json" when the file holds a trace): the summary when
 * there is one, since it is exact and costs nothing to read, else the
 * trace. A trace named on the command line is replaced by its sibling
 * summary the same way. Anything else is read for what it holds.
 */
#define _GNU_SOURCE
#include "report.h"
#include "cli/recover/recover.h"
#include "report_input.h"

#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "cli/read/gzread.h"
#include "cli/read/trace_sniff.h"
#include "cli/read/trace_summary.h"

#define SNIFF_BYTES 4096

/* Lower is preferred for one stem; from SNIFFED on, a file is taken
 * only when its content is a trace (trace_sniff.c): HTA's rank-N.json.gz,
 * renamed files. */
static const char *const suffixes[] = {
	".summary.json", ".trace.json.gz", ".trace.json", ".pftrace.gz",
	".pftrace", ".json.gz", ".json",
};
#define SNIFFED 5
/* Where the library writes a directory's summaries (summary/
 * proc_summary.c); summaries beside the traces are found too. */
#define RP_SUMMARY_DIR "summaries"
#define N_SUFFIXES (sizeof(suffixes) / sizeof(suffixes[0]))

int rp_fail(const char *file, const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "tprof: error: %s: ", file);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	return -1;
}

static int ends_with(const char *s, const char *suffix)
{
	size_t n = strlen(s), k = strlen(suffix);

	return n > k && !strcmp(s + n - k, suffix);
}

/* Which of suffixes[] name ends with, or -1. */
static int suffix_of(const char *name)
{
	unsigned i;

	for (i = 0; i < N_SUFFIXES; i++)
		if (ends_with(name, suffixes[i]))
			return (int)i;
	return -1;
}

static int is_file(const char *path)
{
	struct stat st;

	return !stat(path, &st) && S_ISREG(st.st_mode);
}

static int add_path(struct rp_inputs *in, char *path)
{
	char **v;
	size_t cap;

	if (!path)
		return -1;
	if (in->n == in->cap) {
		cap = in->cap ? in->cap * 2 : 16;
		v = realloc(in->paths, cap * sizeof(*v));
		if (!v) {
			free(path);
			return -1;
		}
		in->paths = v;
		in->cap = cap;
	}
	in->paths[in->n++] = path;
	return 0;
}

static char *join(const char *dir, const char *name)
{
	size_t n = strlen(dir);
	char *p = malloc(n + strlen(name) + 2);

	if (p)
		sprintf(p, "%s%s%s", dir, n && dir[n - 1] == '/' ? "" : "/",
			name);
	return p;
}

struct cand {
	char *name;	/* relative to the directory: "x.trace.json.gz",
			 * "summaries/x.summary.json" */
	size_t off;	/* where the file's own name starts */
	size_t stem;	/* length of the stem, from off */
	int kind;	/* index in suffixes[]: lower is preferred */
};

static int cand_cmp(const void *a, const void *b)
{
	const struct cand *x = a, *y = b;
	size_t n = x->stem < y->stem ? x->stem : y->stem;
	int c = memcmp(x->name + x->off, y->name + y->off, n);

	if (c)
		return c;
	if (x->stem != y->stem)
		return x->stem < y->stem ? -1 : 1;
	if (x->kind != y->kind)
		return x->kind - y->kind;
	return y->off < x->off ? -1 : y->off > x->off;	/* summaries/ first */
}

static int same_stem(const struct cand *x, const struct cand *y)
{
	return x->stem == y->stem &&
	       !memcmp(x->name + x->off, y->name + y->off, x->stem);
}

struct cands {
	struct cand *v;
	size_t n, cap;
};

static int cand_add(struct cands *c, const char *sub, const char *name,
		    int kind)
{
	struct cand *nv;
	size_t off = sub ? strlen(sub) + 1 : 0;

	if (c->n == c->cap) {
		c->cap = c->cap ? c->cap * 2 : 16;
		nv = realloc(c->v, c->cap * sizeof(*nv));
		if (!nv)
			return -1;
		c->v = nv;
	}
	c->v[c->n].name = malloc(off + strlen(name) + 1);
	if (!c->v[c->n].name)
		return -1;
	sprintf(c->v[c->n].name, "%s%s%s", sub ? sub : "", sub ? "/" : "",
		name);
	c->v[c->n].off = off;
	c->v[c->n].kind = kind;
	c->v[c->n].stem = strlen(name) - strlen(suffixes[kind]);
	c->n++;
	return 0;
}

/* The candidates of dir/sub (dir when sub is NULL): regular files with a
 * known suffix; in sub (the library's summaries/), summaries only. A
 * missing sub is no error. */
static int scan_dir(const char *dir, const char *sub, struct cands *c)
{
	char *at = sub ? join(dir, sub) : strdup(dir), *path;
	struct dirent *d = NULL;
	DIR *dp = at ? opendir(at) : NULL;
	int k, ret = 0;

	if (!dp) {
		if (at && (!sub || errno != ENOENT))
			ret = rp_fail(at, "cannot open: %s", strerror(errno));
		free(at);
		return at ? ret : rp_fail(dir, "out of memory");
	}
	while ((d = readdir(dp))) {
		k = suffix_of(d->d_name);
		if (k < 0 || (sub && k != 0))
			continue;
		path = join(at, d->d_name);
		if (!path)
			break;
		if (!is_file(path) || (k >= SNIFFED && !tp_sniff_trace(path))) {
			free(path);
			continue;
		}
		free(path);
		if (cand_add(c, sub, d->d_name, k))
			break;
	}
	closedir(dp);
	free(at);
	return d ? rp_fail(dir, "out of memory") : 0;
}

/* The directory's candidates, and its summaries/ subdirectory's. */
static int list_dir(const char *dir, struct cand **out, size_t *n)
{
	struct cands c = { 0 };
	int ret = scan_dir(dir, NULL, &c);

	if (!ret)
		ret = scan_dir(dir, RP_SUMMARY_DIR, &c);
	*out = c.v;
	*n = c.n;
	return ret;
}

static int add_dir(struct rp_inputs *in, const char *dir)
{
	struct cand *v = NULL;
	size_t n = 0, i, added = 0;
	int ret = -1;

	if (list_dir(dir, &v, &n))
		goto out;
	if (n)
		qsort(v, n, sizeof(*v), cand_cmp);
	for (i = 0; i < n; i++) {
		if (i && same_stem(&v[i], &v[i - 1]))
			continue;
		/* --traces: a summary gives way to a trace of its stem */
		while (in->traces && v[i].kind == 0 && i + 1 < n &&
		       same_stem(&v[i], &v[i + 1]))
			i++;
		if (add_path(in, join(dir, v[i].name))) {
			rp_fail(dir, "out of memory");
			goto out;
		}
		added++;
	}
	if (!added) {
		rp_fail(dir, "no summaries or traces here (*.summary.json, "
			"*.trace.json.gz, *.trace.json, *.pftrace[.gz], "
			"other *.json[.gz] "
			"holding a trace)");
		goto out;
	}
	ret = 0;
out:
	for (i = 0; i < n; i++)
		free(v[i].name);
	free(v);
	return ret;
}

/* A trace's summary when it exists, in summaries/ beside it (where the
 * library writes them) or beside it; else the file itself. */
static char *pick_file(const char *path)
{
	int k = suffix_of(path);
	const char *slash = strrchr(path, '/');
	size_t dir = slash ? (size_t)(slash - path) + 1 : 0, stem;
	char *s;

	if (k <= 0)
		return strdup(path);
	stem = strlen(path) - strlen(suffixes[k]) - dir;
	if (asprintf(&s, "%.*s" RP_SUMMARY_DIR "/%.*s%s", (int)dir, path,
		     (int)stem, path + dir, suffixes[0]) < 0)
		return NULL;
	if (is_file(s))
		return s;
	sprintf(s, "%.*s%s", (int)(dir + stem), path, suffixes[0]);
	if (is_file(s))
		return s;
	free(s);
	return strdup(path);
}

/* A file named twice (a directory and a file in it) is read once. */
static void drop_repeats(struct rp_inputs *in)
{
	struct stat *st = calloc(in->n ? in->n : 1, sizeof(*st));
	size_t i, k, n = 0;

	if (!st)
		return;		/* read twice then: not worth failing for */
	for (i = 0; i < in->n; i++) {
		if (stat(in->paths[i], &st[n]))
			memset(&st[n], 0, sizeof(st[n]));
		for (k = 0; k < n; k++)
			if (st[k].st_ino && st[k].st_dev == st[n].st_dev &&
			    st[k].st_ino == st[n].st_ino)
				break;
		if (k < n)
			free(in->paths[i]);
		else
			in->paths[n++] = in->paths[i];
	}
	in->n = n;
	free(st);
}

int rp_find_inputs(char **args, size_t nargs, struct rp_inputs *in)
{
	struct stat st;
	size_t i;

	for (i = 0; i < nargs; i++) {
		if (stat(args[i], &st))
			return rp_fail(args[i], "cannot open: %s",
				       strerror(errno));
		if (S_ISDIR(st.st_mode)) {
			/* What killed processes left becomes traces first. */
			tp_recover_dir(args[i], NULL);
			if (add_dir(in, args[i]))
				return -1;
		} else if (add_path(in, in->traces ? strdup(args[i]) :
				    pick_file(args[i]))) {
			return rp_fail(args[i], "out of memory");
		}
	}
	drop_repeats(in);
	return 0;
}

void rp_inputs_free(struct rp_inputs *in)
{
	size_t i;

	for (i = 0; i < in->n; i++)
		free(in->paths[i]);
	free(in->paths);
	memset(in, 0, sizeof(*in));
}

/* The whole (maybe gzipped) file; -1 with the reason in err. */
static int read_all(const char *path, struct tp_buf *b, char *err,
		    size_t errlen)
{
	struct tp_gzr *gz = tp_gzr_open(path, err, errlen);
	ssize_t n;

	if (!gz)
		return -1;
	do {
		if (tp_buf_reserve(b, 1 << 16)) {
			tp_gzr_close(gz);
			snprintf(err, errlen, "out of memory");
			return -1;
		}
		n = tp_gzr_read(gz, b->p + b->len, b->cap - b->len);
		if (n > 0)
			b->len += (size_t)n;
	} while (n > 0);
	if (n < 0)
		snprintf(err, errlen, "%s", tp_gzr_error(gz) ?
			 tp_gzr_error(gz) : "read error");
	tp_gzr_close(gz);
	return n < 0 ? -1 : 0;
}

/* Whether the file starts {"schema": "tprof.summary" (as every summary
 * does), so that a renamed summary is not read as a trace. */
static int looks_like_summary(const char *path)
{
	char buf[SNIFF_BYTES], err[256];
	struct tp_gzr *gz = tp_gzr_open(path, err, sizeof(err));
	struct tp_json *j;
	const char *s;
	ssize_t n;
	int yes = 0;

	if (!gz)
		return 0;
	n = tp_gzr_read(gz, buf, sizeof(buf));
	tp_gzr_close(gz);
	j = n > 0 ? tp_json_open_mem(buf, (size_t)n) : NULL;
	if (!j)
		return 0;
	if (tp_json_next(j) == TP_JSON_OBJECT &&
	    tp_json_next(j) == TP_JSON_KEY &&
	    !strcmp(tp_json_text(j, NULL), "schema") &&
	    tp_json_next(j) == TP_JSON_STRING) {
		s = tp_json_text(j, NULL);
		yes = !strcmp(s, "tprof.summary");
	}
	tp_json_close(j);
	return yes;
}

/* R of the last "-rank<R>" in the file name ("-" or "." after it), for
 * an input that does not say its rank (RP_NONE when none). */
static int64_t rank_of_name(const char *path)
{
	const char *base = strrchr(path, '/'), *p, *q;
	int64_t rank = RP_NONE, v;

	for (p = base ? base + 1 : path; (p = strstr(p, "-rank")); p++) {
		for (q = p + 5, v = 0; *q >= '0' && *q <= '9' && v < 1 << 30;
		     q++)
			v = v * 10 + (*q - '0');
		if (q > p + 5 && (*q == '.' || *q == '-' || !*q))
			rank = v;
	}
	return rank;
}

struct rp_rank *rp_read_input(const char *path, char *err, size_t errlen)
{
	struct rp_rank *r = calloc(1, sizeof(*r));
	struct tp_buf *b;
	int ret;

	err[0] = 0;
	if (!r || !(r->path = strdup(path))) {
		free(r);
		snprintf(err, errlen, "out of memory");
		return NULL;
	}
	/* kept: --summaries writes a trace's out */
	b = &r->json;
	if (ends_with(path, suffixes[0]) || looks_like_summary(path)) {
		r->kind = "summary";
		ret = read_all(path, b, err, errlen);
	} else {
		r->kind = "trace";
		ret = tp_trace_summary(path, b, err, errlen);
	}
	if (!ret && b->oom) {
		snprintf(err, errlen, "out of memory");
		ret = -1;
	}
	if (!ret && rp_summary_parse(r, b->p ? b->p : "", b->len, err,
				     errlen))
		ret = -1;
	if (ret) {
		rp_rank_free(r);
		return NULL;
	}
	if (r->rank == RP_NONE)
		r->rank = rank_of_name(path);
	if (!strcmp(r->kind, "summary"))
		tp_buf_free(b);
	return r;
}

/* DIR/<stem>.summary.json for a trace read. */
char *rp_summary_path(const char *dir, const char *trace)
{
	static const char *const ext[] = {
		".trace.json.gz", ".trace.json", ".pftrace.gz", ".pftrace",
		".json.gz", ".json", ".gz",
	};
	const char *base = strrchr(trace, '/');
	size_t n, i, k;
	char *p;

	base = base ? base + 1 : trace;
	n = strlen(base);
	for (i = 0; i < sizeof(ext) / sizeof(ext[0]); i++) {
		k = strlen(ext[i]);
		if (n > k && !strcmp(base + n - k, ext[i])) {
			n -= k;
			break;
		}
	}
	p = malloc(strlen(dir) + n + sizeof(".summary.json") + 1);
	if (p)
		sprintf(p, "%s%s%.*s.summary.json", dir,
			*dir && dir[strlen(dir) - 1] != '/' ? "/" : "",
			(int)n, base);
	return p;
}
