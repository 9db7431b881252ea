/* tprof merge: every rank's trace in one Chrome/Perfetto trace.
 *
 * Two passes over the inputs, both streamed: the first reads each one's
 * header (traceName, distributedInfo, baseTimeNanoseconds; to the end
 * only when the base comes after traceEvents, as Kineto writes it) to
 * order the inputs by rank and find the output's base; the second copies
 * the events, rewritten (merge_events.c), into the output (merge_out.c).
 * Memory holds one event at a time and each input's pid map.
 *
 * The top of merge: it calls merge_events.c, merge_out.c, merge_num.c
 * and merge_err.c, and none of them calls back into it.
 */
#define _GNU_SOURCE
#include "merge.h"
#include "cli/recover/recover.h"
#include "merge_int.h"
#include "cli/convert/convert.h"
#include "cli/cleanup/sigclean.h"
#include "cli/read/trace_dir.h"
#include "cli/usage/usage.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <tprof.h>

/* What OUT is, so that a directory's listing can leave it out. */
struct out_id {
	int exists;
	dev_t dev;
	ino_t ino;
};

static const char help_text[] =
	"usage: tprof merge DIR_OR_FILE... -o OUT [--gzip-level N]\n"
	"\n"
	"Merge the traces of several ranks (tprof's or\n"
	"torch.profiler's, plain or gzipped) into one Chrome/Perfetto\n"
	"trace OUT: Perfetto protobuf when OUT ends in .pftrace[.gz], else\n"
	"JSON, gzipped when OUT ends in .gz. A directory gives its traces\n"
	"(*.trace.json[.gz], *.pftrace[.gz], other *.json[.gz] holding\n"
	"one), after recovering what killed processes left in it. Inputs\n"
	"are ordered by rank; each input's processes get new pids and\n"
	"names \"rank R: ...\", and its flow and async ids are kept\n"
	"apart from the other inputs'.\n"
	"\n"
	"  -o, --output OUT  the merged trace (written whole or not at all)\n"
	"  --gzip-level N    1 (the default, the fastest) to 9; 6 writes a\n"
	"                    quarter to a third less\n"
	"  -h, --help        show this help\n"
	"\n"
	"Exit status: 0 written, 1 error (OUT is not created), 2 usage\n"
	"error.\n";

static int ends_with(const char *s, const char *suffix)
{
	size_t n = strlen(s), k = strlen(suffix);

	return n >= k && !strcmp(s + n - k, suffix);
}

static int add_input(struct mg *m, const char *path, int from_dir)
{
	struct mg_input *in;

	if (m->nin >= MG_MAX_INPUTS)
		return mg_fail(m, path, "more than %d inputs", MG_MAX_INPUTS);
	in = realloc(m->in, (m->nin + 1) * sizeof(*in));
	if (!in)
		return mg_fail(m, path, "out of memory");
	m->in = in;
	in = &m->in[m->nin];
	memset(in, 0, sizeof(*in));
	in->path = strdup(path);
	if (!in->path)
		return mg_fail(m, path, "out of memory");
	in->from_dir = from_dir;
	in->argpos = (unsigned)m->nin++;
	return 0;
}

/* The directory's traces (trace_dir.h) by name; OUT (from an earlier
 * merge into the same directory) is left out. */
static int add_dir(struct mg *m, const char *dir, const struct out_id *oid)
{
	struct tp_trace_dir td;
	struct stat st;
	size_t i, added = 0;
	int rc = 0;

	if (tp_trace_dir_list(dir, &td))
		return mg_fail(m, dir, "%s", strerror(errno));
	for (i = 0; i < td.n && !rc; i++) {
		if (oid->exists && !stat(td.paths[i], &st) &&
		    st.st_dev == oid->dev && st.st_ino == oid->ino)
			continue;
		rc = add_input(m, td.paths[i], 1);
		added++;
	}
	if (!rc && !added)
		rc = mg_fail(m, dir, "no traces (" TP_TRACE_DIR_WHAT ") in this "
			     "directory");
	tp_trace_dir_free(&td);
	return rc;
}

static int add_arg(struct mg *m, const char *arg, const struct out_id *oid)
{
	struct stat st;

	if (stat(arg, &st))
		return mg_fail(m, arg, "%s", strerror(errno));
	if (S_ISDIR(st.st_mode)) {
		/* What killed processes left becomes traces first. */
		tp_recover_dir(arg, NULL);
		return add_dir(m, arg, oid);
	}
	if (oid->exists && st.st_dev == oid->dev && st.st_ino == oid->ino)
		return mg_fail(m, arg, "is the output file too");
	return add_input(m, arg, 0);
}

static ssize_t gz_read(void *ctx, void *buf, size_t len)
{
	return tp_gzr_read(ctx, buf, len);
}

struct src {
	struct tp_gzr *gz;
	struct tp_json *j;
};

static int src_open(struct mg *m, struct mg_input *in, struct src *s)
{
	char err[256];
	int tok;

	s->j = NULL;
	s->gz = tp_gzr_open(in->path, err, sizeof(err));
	if (!s->gz)
		return mg_fail(m, in->path, "%s", err);
	s->j = tp_json_open(gz_read, s->gz);
	if (!s->j)
		return mg_fail(m, in->path, "out of memory");
	tok = tp_json_next(s->j);
	if (tok == TP_JSON_OBJECT)
		return 0;
	if (tok == TP_JSON_ERROR)
		return mg_parse_fail(m, in->path, s->j, s->gz);
	return mg_fail(m, in->path, "not a trace: the top-level value is not "
		       "an object with \"traceEvents\"");
}

static void src_close(struct src *s)
{
	tp_json_close(s->j);
	tp_gzr_close(s->gz);
	s->j = NULL;
	s->gz = NULL;
}

static int key_is(struct tp_json *j, const char *key)
{
	size_t n;
	const char *k = tp_json_text(j, &n);

	return n == strlen(key) && !memcmp(k, key, n);
}

static int skip_value(struct mg *m, struct mg_input *in, struct src *s)
{
	if (tp_json_skip(s->j, tp_json_next(s->j)))
		return mg_parse_fail(m, in->path, s->j, s->gz);
	return 0;
}

/* The value of the key just read, as a DOM in m->arena. */
static int header_value(struct mg *m, struct mg_input *in, struct src *s,
			struct tp_json_node **v)
{
	if (tp_json_parse_value(s->j, &m->arena, v))
		return mg_parse_fail(m, in->path, s->j, s->gz);
	return 0;
}

struct hdr {
	int events;		/* traceEvents was seen */
	int base;		/* baseTimeNanoseconds was seen */
	int64_t name_rank, dinfo_rank;
	int merged;		/* traceName "merged": our own output */
	/* A Perfetto trace (read as JSON, pftrace_read.h): its trailer,
	 * with traceName and distributedInfo, comes after the events, so
	 * it is read to the end. */
	int pf;
};

static int header_member(struct mg *m, struct mg_input *in, struct src *s,
			 struct hdr *h)
{
	struct tp_json_node *v;
	int64_t x;

	if (key_is(s->j, "baseTimeNanoseconds")) {
		if (header_value(m, in, s, &v))
			return -1;
		if (!tp_json_int64(v, &x) || x < 0)
			return mg_fail(m, in->path, "\"baseTimeNanoseconds\" "
				       "is not a non-negative integer");
		in->base_ns = x;
		h->base = 1;
	} else if ((!h->events || h->pf) && key_is(s->j, "traceName")) {
		if (header_value(m, in, s, &v))
			return -1;
		if (v->type == TP_JSON_STRING) {
			h->merged = !strcmp(v->str, "merged");
			mg_rank_suffix(v->str, v->len, &h->name_rank);
		}
	} else if ((!h->events || h->pf) &&
		   key_is(s->j, "distributedInfo")) {
		if (header_value(m, in, s, &v))
			return -1;
		if (tp_json_int64(tp_json_get(v, "rank"), &x) && x >= 0)
			h->dinfo_rank = x;
		if (tp_json_int64(tp_json_get(v, "world_size"), &x) && x > 0)
			in->world_size = x;
	} else {
		return skip_value(m, in, s);
	}
	tp_json_arena_reset(&m->arena);
	return 0;
}

static void set_rank(struct mg_input *in, const struct hdr *h)
{
	if (h->name_rank >= 0) {
		in->rank = h->name_rank;
		in->rank_from = MG_RANK_NAME;
	} else if (h->dinfo_rank >= 0) {
		in->rank = h->dinfo_rank;
		in->rank_from = MG_RANK_DINFO;
	} else if (!mg_rank_in_name(in->path, &in->rank)) {
		in->rank_from = MG_RANK_FILE;
	}
	in->skip = h->merged && in->from_dir;
}

/* Reads the header: up to traceEvents, or past it to the end when the
 * base comes after the events (Kineto), which costs a full read. */
static int prescan(struct mg *m, struct mg_input *in)
{
	struct hdr h = { 0, 0, -1, -1, 0, 0 };
	struct src s;
	int tok, rc = -1;

	if (src_open(m, in, &s))
		goto out;
	h.pf = tp_gzr_is_perfetto(s.gz);
	while ((tok = tp_json_next(s.j)) == TP_JSON_KEY) {
		if (key_is(s.j, "traceEvents")) {
			if (h.base && !h.pf)
				break;
			h.events = 1;
			tok = tp_json_next(s.j);
			if (tok != TP_JSON_ARRAY && tok != TP_JSON_ERROR) {
				mg_fail(m, in->path, "not a trace: "
					"\"traceEvents\" is not an array");
				goto out;
			}
			if (tp_json_skip(s.j, tok)) {
				mg_parse_fail(m, in->path, s.j, s.gz);
				goto out;
			}
		} else if (header_member(m, in, &s, &h)) {
			goto out;
		}
		if (h.events && h.base && !h.pf)
			break;
	}
	if (tok == TP_JSON_ERROR) {
		mg_parse_fail(m, in->path, s.j, s.gz);
		goto out;
	}
	if (tok != TP_JSON_KEY && !h.events) {
		mg_fail(m, in->path, "not a trace: no \"traceEvents\" array");
		goto out;
	}
	set_rank(in, &h);
	rc = 0;
out:
	src_close(&s);
	return rc;
}

static int cmp_input(const void *a, const void *b)
{
	const struct mg_input *x = a, *y = b;

	if (x->rank != y->rank)
		return x->rank < y->rank ? -1 : 1;
	return strcmp(x->path, y->path);
}

/* Unranked inputs follow the ranked ones in argument order; then the
 * output's order, pid and id ranges, and string id tags. */
static void order_inputs(struct mg *m)
{
	int64_t next = 0;
	size_t i, k, dup;

	for (i = 0; i < m->nin; i++)
		if (m->in[i].rank_from != MG_RANK_NONE &&
		    m->in[i].rank >= next)
			next = m->in[i].rank + 1;
	for (i = 0; i < m->nin; i++)
		if (m->in[i].rank_from == MG_RANK_NONE)
			m->in[i].rank = next++;
	qsort(m->in, m->nin, sizeof(*m->in), cmp_input);
	m->base_ns = m->nin ? m->in[0].base_ns : 0;
	for (i = 0; i < m->nin; i++)
		if (m->in[i].base_ns < m->base_ns)
			m->base_ns = m->in[i].base_ns;
	/* floored as tprof's writer does (docs/reference/trace-format.md), so that
	 * a merge of Kineto traces passes plain tprof check */
	m->base_ns -= m->base_ns % MG_BASE_STEP;
	for (i = 0; i < m->nin; i++) {
		struct mg_input *in = &m->in[i];

		in->idx = (unsigned)i;
		in->shift_ns = in->base_ns - m->base_ns;
		for (k = dup = 0; k < i; k++)
			dup += m->in[k].rank == in->rank;
		if (dup)
			snprintf(in->tag, sizeof(in->tag), "rank%lld.%zu",
				 (long long)in->rank, dup);
		else
			snprintf(in->tag, sizeof(in->tag), "rank%lld",
				 (long long)in->rank);
	}
}

/* Drops the merged traces a directory held. */
static int drop_skipped(struct mg *m, const char *first_arg)
{
	size_t i, n = 0;

	for (i = 0; i < m->nin; i++) {
		if (!m->in[i].skip) {
			m->in[n++] = m->in[i];
			continue;
		}
		fprintf(stderr, "tprof: skipping %s: it is a merged trace\n",
			m->in[i].path);
		free(m->in[i].path);
	}
	m->nin = n;
	return n ? 0 : mg_fail(m, first_arg, "no traces to merge");
}

/* distributedInfo names the lowest rank, first in the file, so that a
 * reader taking one rank per file (HTA's "rank":\s+(\d+)) gets a valid
 * one; tprof.merged lists them all. */
static int put_header(struct mg *m)
{
	int64_t ws = 1;
	size_t i;

	for (i = 0; i < m->nin; i++) {
		if (m->in[i].world_size > ws)
			ws = m->in[i].world_size;
		if (m->in[i].rank + 1 > ws)
			ws = m->in[i].rank + 1;
	}
	return mg_addf(m, "{\"schemaVersion\": 1,\n"
		       "\"traceName\": \"merged\",\n"
		       "\"displayTimeUnit\": \"ms\",\n"
		       "\"baseTimeNanoseconds\": %lld,\n"
		       "\"distributedInfo\": {\"rank\": %lld, "
		       "\"world_size\": %lld},\n"
		       "\"traceEvents\": [\n", (long long)m->base_ns,
		       (long long)m->in[0].rank, (long long)ws);
}

/* A numeric pid's text as a key; a string pid is one already. */
static int put_pid_key(struct mg *m, const struct mg_pid *p)
{
	if (p->lit[0] == '"')
		return mg_add(m, p->lit, p->litlen);
	return mg_add_str(m, p->lit, p->litlen);
}

/* As the input's tprof object said it (tprof check reads it). */
static int put_nvtx(struct mg *m, const struct mg_input *in)
{
	if (!in->have_nvtx)
		return 0;
	return mg_addf(m, ", \"events_dropped\": %lld, \"nvtx\": {%s%s"
		       "\"ranges\": %lld, \"dropped\": {\"pushes\": %lld, "
		       "\"pops\": %lld, \"starts\": %lld, \"ends\": %lld}}",
		       (long long)in->events_dropped,
		       in->nvtx_by_id ? "\"pairing\": \"id\", " : "",
		       in->nvtx_window ? "\"window\": true, " : "",
		       (long long)in->nv_ranges,
		       (long long)in->nv_dropped[0],
		       (long long)in->nv_dropped[1],
		       (long long)in->nv_dropped[2],
		       (long long)in->nv_dropped[3]);
}

static int put_input_info(struct mg *m, const struct mg_input *in)
{
	size_t i;

	if (mg_addf(m, "%s\n {\"file\": ", in->idx ? "," : "") ||
	    mg_add_str(m, in->path, strlen(in->path)) ||
	    mg_addf(m, ", \"rank\": %lld, \"events\": %llu, \"written\": %llu, "
		    "\"dropped\": %llu, \"replaced\": %llu, "
		    "\"baseTimeNanoseconds\": %lld, \"pids\": {",
		    (long long)in->rank, (unsigned long long)in->nevents,
		    (unsigned long long)in->nwritten,
		    (unsigned long long)in->ndropped,
		    (unsigned long long)in->nreplaced, (long long)in->base_ns))
		return -1;
	for (i = 0; i < in->npids; i++)
		if ((i && mg_add(m, ", ", 2)) || put_pid_key(m, &in->pids[i]) ||
		    mg_addf(m, ": %lld", (long long)in->pids[i].newpid))
			return -1;
	if (mg_add(m, "}", 1) || mg_put_tid_map(m, in) || put_nvtx(m, in))
		return -1;
	return mg_add(m, "}", 1);
}

static int put_trailer(struct mg *m)
{
	size_t i;

	if (mg_addf(m, "\n],\n\"deviceProperties\": [],\n\"tprof\": "
		    "{\"version\": \"%s\", \"merged\": [", TPROF_VERSION))
		return -1;
	for (i = 0; i < m->nin; i++)
		if (put_input_info(m, &m->in[i]))
			return -1;
	return mg_add(m, "]}\n}\n", 5);
}

static int64_t int_or(const struct tp_json_node *o, const char *k)
{
	int64_t v;

	return tp_json_int64(tp_json_get(o, k), &v) ? v : -1;
}

/* The input's NVTX ranges and drops, as its writer counted them. */
static int read_tprof(struct mg *m, struct mg_input *in, struct src *s)
{
	static const char *const kinds[4] = { "pushes", "pops", "starts",
					      "ends" };
	const struct tp_json_node *nv, *p, *d, *fl;
	struct tp_json_node *v;
	unsigned i;

	if (header_value(m, in, s, &v))
		return -1;
	nv = tp_json_get(v, "nvtx");
	if (nv && nv->type == TP_JSON_OBJECT) {
		in->have_nvtx = 1;
		p = tp_json_get(nv, "pairing");
		in->nvtx_by_id = p && p->type == TP_JSON_STRING &&
				 !strcmp(p->str, "id");
		in->events_dropped = int_or(v, "events_dropped");
		fl = tp_json_get(v, "flight");
		in->nvtx_window = fl && fl->type == TP_JSON_OBJECT;
		in->nv_ranges = int_or(nv, "ranges");
		d = tp_json_get(nv, "dropped");
		for (i = 0; i < 4; i++)
			in->nv_dropped[i] = int_or(d, kinds[i]);
	}
	tp_json_arena_reset(&m->arena);
	return 0;
}

/* Second pass: the input's events into the output, and the whole file
 * read to its end, so that a truncated input is an error. */
static int copy_input(struct mg *m, struct mg_input *in)
{
	struct src s;
	int tok, rc = -1;

	if (src_open(m, in, &s))
		goto out;
	while ((tok = tp_json_next(s.j)) == TP_JSON_KEY) {
		if (key_is(s.j, "traceEvents") ?
		    mg_copy_events(m, in, s.j, s.gz) :
		    key_is(s.j, "tprof") ? read_tprof(m, in, &s) :
		    skip_value(m, in, &s))
			goto out;
	}
	if (tok != TP_JSON_OBJECT_END || tp_json_next(s.j) != TP_JSON_EOF) {
		mg_parse_fail(m, in->path, s.j, s.gz);
		goto out;
	}
	rc = mg_put_process_meta(m, in);
out:
	src_close(&s);
	return rc;
}

/* As report does: one job's inputs share a world size. */
static void warn_world_sizes(const struct mg *m)
{
	const struct mg_input *a = NULL, *in;
	size_t i;

	for (i = 0; i < m->nin; i++) {
		in = &m->in[i];
		if (in->world_size <= 0)
			continue;
		if (!a) {
			a = in;
		} else if (in->world_size != a->world_size) {
			fprintf(stderr, "tprof: warning: the inputs mix world "
				"sizes (%lld in %s, %lld in %s): are they one "
				"job's?\n", (long long)a->world_size, a->path,
				(long long)in->world_size, in->path);
			return;
		}
	}
}

static int merge(struct mg *m, const char *out, const char *write_to,
		 char **args, int nargs)
{
	struct out_id oid = { 0 };
	struct stat st;
	uint64_t events = 0, written = 0, dropped = 0, replaced = 0;
	size_t i;
	int k;

	if (!stat(out, &st)) {
		oid.exists = 1;
		oid.dev = st.st_dev;
		oid.ino = st.st_ino;
	}
	for (k = 0; k < nargs; k++)
		if (add_arg(m, args[k], &oid))
			return -1;
	for (i = 0; i < m->nin; i++)
		if (prescan(m, &m->in[i]))
			return -1;
	if (drop_skipped(m, args[0]))
		return -1;
	order_inputs(m);
	warn_world_sizes(m);
	if (mg_out_open(m, write_to) || put_header(m))
		return -1;
	for (i = 0; i < m->nin; i++) {
		if (copy_input(m, &m->in[i]))
			return -1;
		events += m->in[i].nevents;
		written += m->in[i].nwritten;
		dropped += m->in[i].ndropped;
		replaced += m->in[i].nreplaced;
	}
	if (put_trailer(m) || mg_out_finish(m))
		return -1;
	/* in = copied + dropped + replaced; the metadata merge adds is
	 * counted apart, so that the line adds up */
	fprintf(stderr, "tprof: wrote %s (%zu traces, %llu events in: %llu "
		"copied, %llu dropped, %llu process_sort_index replaced; "
		"%llu process metadata events added)\n", out, m->nin,
		(unsigned long long)events, (unsigned long long)written,
		(unsigned long long)dropped, (unsigned long long)replaced,
		(unsigned long long)(m->nwritten - written));
	return 0;
}

static void free_all(struct mg *m)
{
	size_t i, k;

	for (i = 0; i < m->nin; i++) {
		free(m->in[i].path);
		for (k = 0; k < m->in[i].npids; k++)
			free(m->in[i].pids[k].lit);
		free(m->in[i].pids);
		free(m->in[i].slots);
		mg_tids_free(&m->in[i]);
	}
	free(m->in);
	free(m->scratch);
	tp_buf_free(&m->esc);
	tp_json_arena_free(&m->arena);
}

/* OUT ending .pftrace or .pftrace.gz: the merged JSON goes to a
 * temporary OUT.<pid>.json.gz beside it, then is converted (convert.c;
 * one packet sequence, fresh track uuids, so no two inputs share a track)
 * and removed, by a fatal signal too. */
static int merge_to(struct mg *m, const char *out, char **args, int n)
{
	char *tmp = NULL;
	int rc, slot;

	if (!ends_with(out, ".pftrace") && !ends_with(out, ".pftrace.gz")) {
		rc = merge(m, out, out, args, n);
		mg_out_abandon(&m->out);
		return rc;
	}
	if (asprintf(&tmp, "%s.%d.json.gz", out, (int)getpid()) < 0) {
		fprintf(stderr, "tprof: error: out of memory\n");
		return -1;
	}
	slot = tp_sigclean_add(tmp);	/* a kill while it converts */
	rc = merge(m, out, tmp, args, n);
	mg_out_abandon(&m->out);
	if (!rc && tp_convert_file(tmp, out, m->gzip_level, 1))
		rc = -1;
	unlink(tmp);
	tp_sigclean_drop(slot);
	free(tmp);
	return rc;
}

int tp_cmd_merge(int argc, char **argv)
{
	struct mg m = { .out = { .fd = -1 }, .gzip_level = 1 };
	const char *out = NULL;
	char **args;
	int i, n = 0, opts = 1, rc;

	rc = tp_help_if_asked(argc, argv, help_text);
	if (rc >= 0)
		return rc;
	args = calloc((size_t)argc + 1, sizeof(*args));
	if (!args) {
		fprintf(stderr, "tprof: error: out of memory\n");
		return 1;
	}
	for (i = 1; i < argc; i++) {
		const char *a = argv[i], *o = NULL;

		if (opts && !strcmp(a, "--")) {
			opts = 0;
			continue;
		}
		if (opts && (rc = tp_gzip_level_opt("merge", argc, argv, &i,
						    &m.gzip_level))) {
			if (rc > 0)
				continue;
			goto usage;
		}
		if (opts && (!strcmp(a, "-o") || !strcmp(a, "--output"))) {
			if (i + 1 == argc) {
				tp_usage_error("merge", "%s needs a file name", a);
				goto usage;
			}
			o = argv[++i];
		} else if (opts && !strncmp(a, "--output=", 9)) {
			o = a + 9;
		} else if (opts && !strncmp(a, "-o", 2)) {
			o = a + 2;
		} else if (opts && a[0] == '-' && a[1]) {
			tp_usage_error("merge", "unknown option '%s'", a);
			goto usage;
		} else {
			args[n++] = argv[i];
			continue;
		}
		if (out || !*o) {
			tp_usage_error("merge", "%s", out ? "-o is given twice" :
				       "-o needs a file name");
			goto usage;
		}
		out = o;
	}
	if (!out || !n) {
		tp_usage_error("merge", "%s", !out ? "no output: give -o OUT" :
			       "no input: give directories or files");
		goto usage;
	}
	rc = merge_to(&m, out, args, n);
	free_all(&m);
	free(args);
	return rc ? 1 : 0;
usage:
	free(args);
	return TP_EXIT_USAGE;
}
