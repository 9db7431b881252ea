/* tprof convert IN -o OUT: a JSON(.gz) trace to Perfetto protobuf
 * (OUT ending .pftrace or .pftrace.gz) or to JSON (.json, .json.gz),
 * event by event: the reader holds one event's DOM at a time and the
 * encoder's output is flushed every megabyte, so memory stays bounded
 * however large the trace. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "convert.h"
#include "convert_event.h"
#include "convert_flows.h"
#include "cli/read/gzread.h"
#include "cli/read/json.h"
#include "cli/cleanup/sigclean.h"
#include "cli/usage/usage.h"
#include "files/atomic_file.h"
#include "config/config_num.h"
#include "gzip/gzip.h"
#include "encode/tev.h"

#define FLUSH_BYTES (1u << 20)
#define TRAILER_MAX (64u << 20)

struct conv {
	const char *in_path;
	const char *out_path;
	struct tp_out_file file;
	struct tp_gz *gz;
	struct tp_enc *enc;
	struct tp_json *j;
	struct tp_gzr *in;
	struct tp_conv_flows *flows;	/* Perfetto: fan-out flows */
	struct tp_json_arena arena;
	struct tp_targs args;
	struct tp_buf trailer;
	struct tp_enc_meta meta;
	char trace_name[256];
	uint64_t events, skipped;
	int began;
	int pf;		/* the output is Perfetto */
	int sig_slot;	/* the temporary output's (sigclean.h) */
	int gzip_level;
};

static int ends_with(const char *s, const char *suf)
{
	size_t n = strlen(s), m = strlen(suf);

	return n >= m && !strcmp(s + n - m, suf);
}

static ssize_t read_in(void *ctx, void *buf, size_t len)
{
	return tp_gzr_read(ctx, buf, len);
}

static int flush(struct conv *c, int all)
{
	struct tp_buf *b = &c->enc->out;
	int rc;

	if (b->oom) {
		fprintf(stderr, "tprof: convert: out of memory\n");
		return -1;
	}
	if (!all && b->len < FLUSH_BYTES)
		return 0;
	if (c->gz)
		rc = tp_gz_write(c->gz, b->p, b->len);
	else
		rc = tp_write_all(c->file.fd, b->p, b->len);
	b->len = 0;
	if (rc < 0) {
		fprintf(stderr, "tprof: convert: cannot write %s: %s\n",
			c->out_path, strerror(c->gz ? c->gz->err : errno));
		return -1;
	}
	return 0;
}

static int begin(struct conv *c)
{
	if (c->began)
		return 0;
	c->began = 1;
	c->meta.trace_name = c->trace_name[0] ? c->trace_name : "tprof";
	return tp_enc_begin(c->enc, &c->meta);
}

static int events(struct conv *c)
{
	struct tp_json_node *n;
	struct tp_tev ev, start;
	int tok, rc;

	if (begin(c))
		return -1;
	while ((tok = tp_json_next(c->j)) != TP_JSON_ARRAY_END) {
		if (tok == TP_JSON_ERROR || tok == TP_JSON_EOF)
			return -1;
		tp_json_arena_reset(&c->arena);
		if (tp_json_build(c->j, tok, &c->arena, &n))
			return -1;
		rc = tp_conv_event(n, &ev, &c->args);
		if (rc <= 0) {
			c->skipped++;
			continue;
		}
		if (tp_conv_flows_see(c->flows, &ev, &start) &&
		    tp_enc_event(c->enc, &start))
			return -1;
		if (tp_enc_event(c->enc, &ev) || flush(c, 0))
			return -1;
		c->events++;
	}
	return 0;
}

/* A top-level member other than traceEvents: kept as JSON text for the
 * encoder's trailer (the run's metadata). */
static int other(struct conv *c, const char *key, size_t keylen)
{
	struct tp_json_node *n;
	const char *text;
	size_t len;
	int tok;

	tp_json_capture_start(c->j, TRAILER_MAX);
	tok = tp_json_next(c->j);
	if (tok == TP_JSON_ERROR)
		return -1;
	if (!strcmp(key, "baseTimeNanoseconds") || !strcmp(key, "traceName")) {
		tp_json_arena_reset(&c->arena);
		if (tp_json_build(c->j, tok, &c->arena, &n))
			return -1;
		tp_json_capture_end(c->j, &len);
		if (n->type == TP_JSON_NUMBER)
			tp_json_int64(n, &c->meta.base_unix_ns);
		else if (n->type == TP_JSON_STRING)
			snprintf(c->trace_name, sizeof(c->trace_name), "%s",
				 n->str);
		/* A merged trace says so in Perfetto too (its trailer), so
		 * that a later merge of the directory leaves it out. */
		if (c->pf && n->type == TP_JSON_STRING &&
		    !strcmp(n->str, "merged")) {
			if (c->trailer.len)
				tp_buf_lit(&c->trailer, ",\n");
			tp_buf_lit(&c->trailer, "\"traceName\": \"merged\"");
		}
		return 0;
	}
	if (tp_json_skip(c->j, tok))
		return -1;
	text = tp_json_capture_end(c->j, &len);
	if (!text || !strcmp(key, "schemaVersion") ||
	    !strcmp(key, "displayTimeUnit"))
		return 0;
	if (c->trailer.len)
		tp_buf_lit(&c->trailer, ",\n");
	tp_json_strn(&c->trailer, key, keylen);
	tp_buf_lit(&c->trailer, ": ");
	while (len && (*text == ' ' || *text == '\n'))
		text++, len--;
	tp_buf_put(&c->trailer, text, len);
	return 0;
}

/* Kineto writes baseTimeNanoseconds after traceEvents, but the output
 * needs it first: a Perfetto trace's clock snapshot (REALTIME = base +
 * ts) goes before its first event, and the JSON encoder writes it in its
 * head. Read ahead for it, through a second reader of the file that
 * skips the events. Without it the base was lost (0): a converted
 * trace's times stayed relative and ranks did not line up. */
static void read_ahead_base(struct conv *c)
{
	struct tp_json_arena arena = { 0 };
	struct tp_json_node *n;
	struct tp_gzr *in;
	struct tp_json *j = NULL;
	char err[256];
	size_t len;
	int tok;

	in = tp_gzr_open(c->in_path, err, sizeof(err));
	if (!in)
		return;
	j = tp_json_open(read_in, in);
	if (!j || tp_json_next(j) != TP_JSON_OBJECT)
		goto out;
	while (tp_json_next(j) == TP_JSON_KEY) {
		const char *k = tp_json_text(j, &len);
		int base = len == 19 && !memcmp(k, "baseTimeNanoseconds", 19);

		tok = tp_json_next(j);
		if (tok == TP_JSON_ERROR || tok == TP_JSON_EOF)
			goto out;
		if (!base) {
			if (tp_json_skip(j, tok))
				goto out;
			continue;
		}
		if (!tp_json_build(j, tok, &arena, &n) &&
		    n->type == TP_JSON_NUMBER)
			tp_json_int64(n, &c->meta.base_unix_ns);
		goto out;
	}
out:
	if (j)
		tp_json_close(j);
	tp_gzr_close(in);
	tp_json_arena_free(&arena);
}

/* A member name, copied: the parser's text is gone once it reads on. */
static char *key_copy(struct conv *c, size_t *len)
{
	const char *k = tp_json_text(c->j, len);
	char *d = malloc(*len + 1);

	if (d) {
		memcpy(d, k, *len);
		d[*len] = 0;
	}
	return d;
}

static int walk(struct conv *c)
{
	char *key;
	size_t len;
	int tok, rc;

	if (tp_json_next(c->j) != TP_JSON_OBJECT)
		return -1;
	while ((tok = tp_json_next(c->j)) == TP_JSON_KEY) {
		key = key_copy(c, &len);
		if (!key)
			return -1;
		if (!strcmp(key, "traceEvents")) {
			if (!c->meta.base_unix_ns && !c->began)
				read_ahead_base(c);
			rc = tp_json_next(c->j) != TP_JSON_ARRAY || events(c);
		} else {
			rc = other(c, key, len);
		}
		free(key);
		if (rc)
			return -1;
	}
	if (tok != TP_JSON_OBJECT_END || begin(c))
		return -1;
	if (c->trailer.len &&
	    tp_enc_trailer(c->enc, c->trailer.p, c->trailer.len))
		return -1;
	if (tp_enc_end(c->enc) || flush(c, 1))
		return -1;
	return 0;
}

static int open_out(struct conv *c)
{
	if (tp_out_create(&c->file, c->out_path) < 0) {
		fprintf(stderr, "tprof: convert: cannot create %s: %s\n",
			c->out_path, tp_out_strerror(errno));
		return -1;
	}
	c->sig_slot = tp_sigclean_add(c->file.tmp);
	if (!ends_with(c->out_path, ".gz"))
		return 0;
	c->gz = calloc(1, sizeof(*c->gz));
	if (!c->gz || tp_gz_open(c->gz, c->file.fd, c->gzip_level, NULL) < 0) {
		fprintf(stderr, "tprof: convert: cannot start gzip for %s\n",
			c->out_path);
		return -1;
	}
	return 0;
}

static int finish(struct conv *c, int ok)
{
	if (ok && c->gz && tp_gz_finish(c->gz) < 0) {
		fprintf(stderr, "tprof: convert: cannot write %s: %s\n",
			c->out_path, strerror(c->gz->err));
		ok = 0;
	}
	if (ok && tp_out_commit(&c->file) < 0) {
		fprintf(stderr, "tprof: convert: cannot write %s: %s\n",
			c->out_path, strerror(errno));
		ok = 0;
	}
	if (!ok && c->file.fd >= 0) {
		if (c->gz && c->gz->open)
			tp_gz_abandon(c->gz);
		tp_out_abandon(&c->file);
	}
	tp_sigclean_drop(c->sig_slot);
	c->sig_slot = -1;
	return ok ? 0 : 1;
}

static const char help_text[] =
	"usage: tprof convert IN -o OUT [--gzip-level N]\n"
	"\n"
	"Convert one trace, streamed: IN is a JSON trace (tprof's or\n"
	"torch.profiler's, .json or .json.gz) or a Perfetto protobuf trace\n"
	"(.pftrace, .pftrace.gz), told by its content; OUT's suffix gives\n"
	"the format: .pftrace or .pftrace.gz (Perfetto protobuf), .json or\n"
	".json.gz.\n"
	"\n"
	"  -o OUT          the converted trace (written whole or not at all)\n"
	"  --gzip-level N  1 (the default, the fastest) to 9; 6 writes a\n"
	"                  quarter to a third less\n"
	"  -h, --help      show this help\n"
	"\n"
	"Exit status: 0 converted, 1 error (OUT is not created), 2 usage\n"
	"error.\n";

/* The conversion itself: 0, or 1 with one line on stderr. */
int tp_convert_file(const char *in, const char *out_path, int gzip_level,
		    int quiet)
{
	struct conv c;
	const struct tp_json_err *je;
	const char *gzerr;
	char err[256];
	int rc = 1, ok = 0;

	memset(&c, 0, sizeof(c));
	c.file.fd = -1;
	c.sig_slot = -1;
	c.gzip_level = gzip_level;
	c.in_path = in;
	c.out_path = out_path;
	if (ends_with(c.out_path, ".pftrace") ||
	    ends_with(c.out_path, ".pftrace.gz")) {
		c.enc = tp_enc_perfetto_new();
		c.pf = 1;
		/* JSON has no order: a child may come before its parent of
		 * the same start (end order, whole-us Kineto times). */
		c.meta.hold_complete = 1;
		c.flows = tp_conv_flows_new();
		if (!c.flows) {
			fprintf(stderr, "tprof: convert: out of memory\n");
			goto out;
		}
	} else {
		c.enc = tp_enc_json_new();
	}
	c.in = tp_gzr_open(in, err, sizeof(err));
	if (!c.in) {
		fprintf(stderr, "tprof: convert: %s: %s\n", in, err);
		goto out;
	}
	c.j = tp_json_open(read_in, c.in);
	if (!c.enc || !c.j) {
		fprintf(stderr, "tprof: convert: out of memory\n");
		goto out;
	}
	if (open_out(&c)) {
		finish(&c, 0);	/* the temporary file, if made, removed */
		goto out;
	}
	ok = walk(&c) == 0;
	if (!ok) {
		je = tp_json_error(c.j);
		gzerr = tp_gzr_error(c.in);
		if (je && je->io && gzerr)
			fprintf(stderr, "tprof: convert: %s: %s\n", in, gzerr);
		else if (je && je->msg[0])
			fprintf(stderr, "tprof: convert: %s:%lu:%lu: %s\n",
				in, je->line, je->col, je->msg);
		else
			fprintf(stderr, "tprof: convert: %s: not a JSON trace "
				"(an object with a traceEvents array)\n", in);
	}
	rc = finish(&c, ok);
	if (!rc && !quiet)
		fprintf(stderr, "tprof: converted %s to %s (%llu events, "
			"%llu skipped)\n", in, c.out_path,
			(unsigned long long)c.events,
			(unsigned long long)(c.skipped + c.enc->dropped));
out:
	if (c.j)
		tp_json_close(c.j);
	if (c.in)
		tp_gzr_close(c.in);
	tp_json_arena_free(&c.arena);
	tp_buf_free(&c.trailer);
	tp_enc_free(c.enc);
	tp_conv_flows_free(c.flows);
	free(c.gz);
	return rc;
}

static int is_format(const char *path)
{
	return ends_with(path, ".pftrace") || ends_with(path, ".pftrace.gz") ||
	       ends_with(path, ".json") || ends_with(path, ".json.gz");
}

int tp_gzip_level_opt(const char *cmd, int argc, char **argv, int *i,
		      int *level)
{
	static const char opt[] = "--gzip-level";
	const char *a = argv[*i], *v;
	long n;

	if (strncmp(a, opt, sizeof(opt) - 1))
		return 0;
	if (a[sizeof(opt) - 1] == '=')
		v = a + sizeof(opt);
	else if (!a[sizeof(opt) - 1] && *i + 1 < argc)
		v = argv[++*i];
	else if (!a[sizeof(opt) - 1])
		v = "";
	else
		return 0;
	if (tp_parse_uint(v, 1, 9, &n) < 0) {
		tp_usage_error(cmd, "--gzip-level '%s' is not valid: expected "
			       "1 to 9", v);
		return -1;
	}
	*level = (int)n;
	return 1;
}

/* The one line of a usage error about IN or OUT, or NULL when both are
 * right. */
static const char *in_out_error(const char *in, const char *out)
{
	if (!in)
		return "no input: give IN, a trace";
	if (!out)
		return "no output: give -o OUT";
	if (!is_format(out))
		return "OUT must end in .pftrace, .pftrace.gz, .json or "
		       ".json.gz";
	return NULL;
}

int tp_cmd_convert(int argc, char **argv)
{
	const char *in = NULL, *out = NULL, *why;
	int i, level = 1, rc;

	rc = tp_help_if_asked(argc, argv, help_text);
	if (rc >= 0)
		return rc;
	for (i = 1; i < argc; i++) {
		rc = tp_gzip_level_opt("convert", argc, argv, &i, &level);
		if (rc < 0)
			return TP_EXIT_USAGE;
		if (rc)
			continue;
		if (!strcmp(argv[i], "-o") && i + 1 < argc && !out)
			out = argv[++i];
		else if (!strcmp(argv[i], "-o"))
			return tp_usage_error("convert", "%s", out ?
					      "-o is given twice" :
					      "-o needs a file name");
		else if (argv[i][0] == '-' && argv[i][1])
			return tp_usage_error("convert", "unknown option '%s'",
					      argv[i]);
		else if (in)
			return tp_usage_error("convert", "one input at a time: "
					      "'%s' is a second (tprof merge "
					      "takes many)", argv[i]);
		else
			in = argv[i];
	}
	why = in_out_error(in, out);
	if (why)
		return tp_usage_error("convert", "%s", why);
	return tp_convert_file(in, out, level, 0);
}
