/* Unit tests for the JSON parser, the gzip reader and `tprof check`. */
#define _GNU_SOURCE
#include "tp_test.h"

#include "cli/check/check.h"
#include "cli/read/gzread.h"
#include "cli/read/json.h"

#include <math.h>
#include <stdlib.h>
#include <unistd.h>
#include <zlib.h>

/* ---- parser ---- */

struct memsrc {
	const char *s;
	size_t len, pos, step;
};

/* Hands out step bytes at a time so every refill boundary gets hit. */
static ssize_t mem_read(void *ctx, void *buf, size_t len)
{
	struct memsrc *m = ctx;
	size_t n = m->len - m->pos;

	if (n > m->step)
		n = m->step;
	if (n > len)
		n = len;
	memcpy(buf, m->s + m->pos, n);
	m->pos += n;
	return (ssize_t)n;
}

static int parse_stream(const char *s, size_t len, size_t step,
			struct tp_json_err *err)
{
	struct memsrc m = { s, len, 0, step };
	struct tp_json_arena a = { 0 };
	struct tp_json_node *n;
	struct tp_json *j = tp_json_open(mem_read, &m);
	int ret = -1;

	if (tp_json_parse_value(j, &a, &n) == 0 &&
	    tp_json_next(j) == TP_JSON_EOF)
		ret = 0;
	*err = *tp_json_error(j);
	tp_json_close(j);
	tp_json_arena_free(&a);
	return ret;
}

static const char *const good_json[] = {
	"{}", "[]", "0", "-0", "1.5e10", "1E-5", "-0.0e+0", "\"\"", "true",
	"false", " \t\r\n null \n", "{\"a\":[1,2,{\"b\":null}],\"c\":{}}",
	"\"\\u0000\"", "\"\\ud83d\\ude00\"", "\"\xc3\xa9\"",
	"\"\xf4\x8f\xbf\xbf\"", "\"\xed\x9f\xbf\"", "\"\xee\x80\x80\"",
	"\"\xef\xbf\xbf\"", "\"\xf0\x90\x80\x80\"", "1e400", "-1e-400",
	"123456789012345678901234567890",
	"\"\\\"\\\\\\/\\b\\f\\n\\r\\t\"", "[[[[[[[[[[]]]]]]]]]]",
	"{\"a\" : 1 , \"a\" : 2}", "\"\\uDBFF\\uDFFF\"",
};

struct bad {
	const char *json;
	const char *why;
	size_t len;
};

/* sizeof, not strlen: one case holds a NUL byte */
#define B(json, why) { json, why, sizeof(json) - 1 }

static const struct bad bad_json[] = {
	B("[1,]", "trailing comma"),
	B("{\"a\":1,}", "trailing comma"),
	B("[1,,2]", "unexpected character ','"),
	B("\"a\tb\"", "control character 0x09"),
	B("\"a\nb\"", "control character 0x0a"),
	B("\"\x1f\"", "control character 0x1f"),
	B("\"\\x\"", "invalid escape"),
	B("\"\\U0041\"", "invalid escape"),
	B("\"\\u12\"", "4 hex digits"),
	B("\"\\u12g4\"", "4 hex digits"),
	B("\"\\ud800\"", "unpaired high surrogate"),
	B("\"\\ud800\\u0041\"", "unpaired high surrogate"),
	B("\"\\ud800\\ud800\"", "unpaired high surrogate"),
	B("\"\\udc00\"", "unpaired low surrogate"),
	B("\"\xc0\xaf\"", "overlong"),
	B("\"\xc1\xbf\"", "overlong"),
	B("\"\xe0\x80\xaf\"", "overlong"),
	B("\"\xf0\x80\x80\xaf\"", "overlong"),
	B("\"\xed\xa0\x80\"", "surrogate"),
	B("\"\xed\xbf\xbf\"", "surrogate"),
	B("\"\xf4\x90\x80\x80\"", "above U+10FFFF"),
	B("\"\xf5\x80\x80\x80\"", "invalid UTF-8 byte 0xf5"),
	B("\"\xff\"", "invalid UTF-8 byte 0xff"),
	B("\"\x80\"", "stray continuation"),
	B("\"\xc3\"", "truncated"),
	B("\"\xe2\x82\"", "truncated"),
	B("\"\xf0\x9f\x98\"", "truncated"),
	B("\"\xc3", "truncated"),
	B("\"\xe2\x82z\"", "truncated"),
	B("01", "leading zeros"),
	B("-01", "leading zeros"),
	B("[00]", "leading zeros"),
	B("NaN", "NaN"),
	B("Infinity", "Infinity"),
	B("-Infinity", "Infinity"),
	B("1.", "after '.'"),
	B(".5", "unexpected character '.'"),
	B("-", "expected a digit"),
	B("1e", "exponent"),
	B("1e+", "exponent"),
	B("+1", "unexpected character '+'"),
	B("{} x", "after the JSON value"),
	B("[1] [2]", "after the JSON value"),
	B("1 2", "after the JSON value"),
	B("", "unexpected end of input"),
	B("   ", "unexpected end of input"),
	B("[1", "unexpected end of input"),
	B("{\"a\":1", "unexpected end of input"),
	B("{\"a\"", "expected ':'"),
	B("{\"a\" 1}", "expected ':'"),
	B("{a:1}", "string as object key"),
	B("{1:1}", "string as object key"),
	B("[1 2]", "expected ',' or ']'"),
	B("{\"a\":1 \"b\":2}", "expected ',' or '}'"),
	B("[1}", "expected ',' or ']'"),
	B("\"abc", "unterminated string"),
	B("\"abc\\", "unterminated string"),
	B("tru", "expected 'true'"),
	B("nul", "expected 'null'"),
	B("falsy", "expected 'false'"),
	B("True", "unexpected character 'T'"),
	B("\xef\xbb\xbf{}", "byte order mark"),
	B("'a'", "unexpected character"),
	B("\f[]", "unexpected byte 0x0c"),
	B("[\x00]", "unexpected byte 0x00"),
	B("{\"a\":1}}", "after the JSON value"),
};

static void test_good_json(void)
{
	struct tp_json_arena a = { 0 };
	struct tp_json_node *n;
	struct tp_json_err err;
	char name[128];
	size_t i, len;
	int r;

	for (i = 0; i < sizeof(good_json) / sizeof(good_json[0]); i++) {
		len = strlen(good_json[i]);
		r = tp_json_parse_mem(good_json[i], len, &a, &n, &err);
		snprintf(name, sizeof(name), "json good #%zu mem", i);
		TP_CHECK(name, r == 0 && n, "rejected: %s", err.msg);
		r = parse_stream(good_json[i], len, 1, &err);
		snprintf(name, sizeof(name), "json good #%zu stream", i);
		TP_CHECK(name, r == 0, "rejected: %s", err.msg);
		tp_json_arena_reset(&a);
	}
	tp_json_arena_free(&a);
}

static void test_bad_json(void)
{
	struct tp_json_arena a = { 0 };
	struct tp_json_err e1, e2, e3;
	struct tp_json_node *n;
	char name[128];
	size_t i, len;
	int r1, r2, r3;

	for (i = 0; i < sizeof(bad_json) / sizeof(bad_json[0]); i++) {
		len = bad_json[i].len;
		r1 = tp_json_parse_mem(bad_json[i].json, len, &a, &n, &e1);
		r2 = parse_stream(bad_json[i].json, len, 1, &e2);
		r3 = parse_stream(bad_json[i].json, len, 4096, &e3);
		snprintf(name, sizeof(name), "json bad #%zu (%s)", i,
			 bad_json[i].why);
		TP_CHECK(name, r1 && strstr(e1.msg, bad_json[i].why),
			 "got %d \"%s\"", r1, e1.msg);
		snprintf(name, sizeof(name), "json bad #%zu streamed alike", i);
		TP_CHECK(name, r2 && r3 && !strcmp(e1.msg, e2.msg) &&
			 !strcmp(e1.msg, e3.msg) && e1.col == e2.col &&
			 e1.line == e2.line,
			 "\"%s\" %lu:%lu vs \"%s\" %lu:%lu", e1.msg, e1.line,
			 e1.col, e2.msg, e2.line, e2.col);
		tp_json_arena_reset(&a);
	}
	tp_json_arena_free(&a);
}

static void test_json_position(void)
{
	static const char doc[] = "{\n  \"a\": [1,\n   ]\n}";
	struct tp_json_arena a = { 0 };
	struct tp_json_node *n;
	struct tp_json_err e;

	tp_json_parse_mem(doc, strlen(doc), &a, &n, &e);
	TP_CHECK_INT("json error line", e.line, 3);
	TP_CHECK_INT("json error column", e.col, 4);
	tp_json_parse_mem("[\"\xc3\xa9\", 01]", 10, &a, &n, &e);
	TP_CHECK_INT("json error column counts bytes", e.col, 9);
	tp_json_arena_free(&a);
}

/* The error's line and column after whitespace runs and inside strings
 * of every length up to 40: the parser classifies 16 bytes at a time
 * where it can, and must count as a byte-by-byte scan does, in memory,
 * streamed in 4096-byte reads, and streamed a byte at a time. */
static int position_ok(const char *doc, size_t len, size_t at,
		       const char *why, char *got, size_t gotlen)
{
	struct tp_json_arena a = { 0 };
	struct tp_json_err e[3];
	struct tp_json_node *n;
	unsigned long line = 1, col;
	size_t i, bol = 0;
	int k, ok = 1;

	for (i = 0; i < at; i++)
		if (doc[i] == '\n') {
			line++;
			bol = i + 1;
		}
	col = (unsigned long)(at - bol) + 1;
	tp_json_parse_mem(doc, len, &a, &n, &e[0]);
	tp_json_arena_free(&a);
	parse_stream(doc, len, 4096, &e[1]);
	parse_stream(doc, len, 1, &e[2]);
	for (k = 0; k < 3; k++)
		if (e[k].line != line || e[k].col != col ||
		    !strstr(e[k].msg, why)) {
			snprintf(got, gotlen, "way %d: %lu:%lu \"%s\", want "
				 "%lu:%lu", k, e[k].line, e[k].col, e[k].msg,
				 line, col);
			ok = 0;
		}
	return ok;
}

static void test_json_position_runs(void)
{
	char doc[256], got[256] = "";
	size_t len, i, k, at;
	int every, bad = 0;

	/* ["<k letters>", <k bytes of whitespace> x]<padding> */
	for (k = 0; k <= 40; k++)
		for (every = 0; every <= 4; every++) {
			len = (size_t)sprintf(doc, "[\"%.*s\",", (int)k,
				"abcdefghijklmnopqrstuvwxyzabcdefghijklmnop");
			for (i = 0; i < k; i++)
				doc[len++] = every && i % (size_t)every == 0 ?
					     '\n' : "  \t \r"[i % 5];
			at = len;
			len += (size_t)sprintf(doc + len, "x]%20s", "");
			bad += !position_ok(doc, len, at,
					    "unexpected character", got,
					    sizeof(got));
		}
	TP_CHECK("json error position after whitespace runs", !bad,
		 "%d wrong; last %s", bad, got);
	/* a control byte at offset k of a 40-byte string */
	bad = 0;
	for (k = 0; k < 40; k++) {
		len = (size_t)sprintf(doc, "[\n \"%s\"]%20s",
			"abcdefghijklmnopqrstuvwxyzabcdefghijklmn", "");
		doc[4 + k] = 0x01;
		bad += !position_ok(doc, len, 4 + k, "control character",
				    got, sizeof(got));
	}
	TP_CHECK("json error position inside strings", !bad,
		 "%d wrong; last %s", bad, got);
}

static void test_json_depth(void)
{
	size_t deep = 20000, ok = TP_JSON_MAX_DEPTH, i;
	struct tp_json_arena a = { 0 };
	struct tp_json_node *n;
	struct tp_json_err e;
	char *s = malloc(deep * 2);
	int r;

	for (i = 0; i < ok; i++) {
		s[i] = '[';
		s[2 * ok - 1 - i] = ']';
	}
	r = tp_json_parse_mem(s, 2 * ok, &a, &n, &e);
	TP_CHECK("json nesting at the limit", r == 0, "%s", e.msg);
	for (i = 0; n && n->child; n = n->child)
		i++;
	TP_CHECK_INT("json deep DOM depth", i, ok - 1);
	tp_json_arena_reset(&a);
	r = parse_stream(s, 2 * ok, 3, &e);
	TP_CHECK("json nesting at the limit streamed", r == 0, "%s", e.msg);
	for (i = 0; i < deep; i++) {
		s[i] = '[';
		s[2 * deep - 1 - i] = ']';
	}
	r = tp_json_parse_mem(s, 2 * deep, &a, &n, &e);
	TP_CHECK("json too deep rejected", r && strstr(e.msg, "nesting"),
		 "%d %s", r, e.msg);
	tp_json_arena_free(&a);
	free(s);
}

static const struct tp_json_node *parse1(struct tp_json_arena *a,
					 const char *s)
{
	struct tp_json_node *n = NULL;

	tp_json_parse_mem(s, strlen(s), a, &n, NULL);
	return n;
}

static void test_json_values(void)
{
	struct tp_json_arena a = { 0 };
	const struct tp_json_node *n, *c;
	int64_t v = 0;

	n = parse1(&a, "\"a\\u0000b\"");
	TP_CHECK("json \\u0000 kept", n && n->len == 3 && n->str[1] == 0 &&
		 n->str[2] == 'b', "bad string");
	n = parse1(&a, "\"\\ud83d\\ude00\\u00e9\\u20ac\"");
	TP_CHECK("json surrogate pair decoded", n && n->len == 9 &&
		 !memcmp(n->str, "\xf0\x9f\x98\x80\xc3\xa9\xe2\x82\xac", 9),
		 "bad string");
	n = parse1(&a, "\"\\\"\\\\\\/\\b\\f\\n\\r\\t\"");
	TP_CHECK("json simple escapes", n && n->len == 8 &&
		 !memcmp(n->str, "\"\\/\b\f\n\r\t", 8), "bad string");
	n = parse1(&a, "{\"z\":1,\"a\":[true,false,null],\"m\":\"x\"}");
	c = n ? n->child : NULL;
	TP_CHECK("json key order kept", c && !strcmp(c->key, "z") &&
		 !strcmp(c->next->key, "a") && !strcmp(c->next->next->key, "m"),
		 "wrong order");
	TP_CHECK("json get", tp_json_get(n, "a") &&
		 tp_json_get(n, "a")->len == 3 &&
		 tp_json_get(n, "a")->child->next->type == TP_JSON_FALSE &&
		 !tp_json_get(n, "q"), "lookup failed");
	n = parse1(&a, "12.345");
	TP_CHECK("json number literal kept", n && !strcmp(n->str, "12.345") &&
		 n->num == 12.345, "got %s", n ? n->str : "-");
	n = parse1(&a, "123456789012345678901234567890");
	TP_CHECK("json big number literal kept", n && n->len == 30 &&
		 n->num > 1.2345e29 && n->num < 1.2346e29, "bad");
	TP_CHECK("json big number not int64", !tp_json_int64(n, &v), "int");
	n = parse1(&a, "1e400");
	TP_CHECK("json 1e400 is inf", n && isinf(n->num), "not inf");
	n = parse1(&a, "0.1");
	TP_CHECK("json 0.1 exact", n && n->num == 0.1, "bad");
	n = parse1(&a, "123456789.123456789");
	TP_CHECK("json long fraction", n && n->num == strtod(n->str, NULL),
		 "bad");
	n = parse1(&a, "-1.500");
	TP_CHECK("json -1.500", n && n->num == -1.5, "bad");
	n = parse1(&a, "1763683200000000000");
	TP_CHECK("json int64 ns", tp_json_int64(n, &v) &&
		 v == 1763683200000000000LL, "bad");
	n = parse1(&a, "9223372036854775807");
	TP_CHECK("json int64 max", tp_json_int64(n, &v) && v == INT64_MAX,
		 "bad");
	n = parse1(&a, "-9223372036854775808");
	TP_CHECK("json int64 min", tp_json_int64(n, &v) && v == INT64_MIN,
		 "bad");
	n = parse1(&a, "9223372036854775808");
	TP_CHECK("json int64 overflow", n && !tp_json_int64(n, &v), "int");
	n = parse1(&a, "1.0");
	TP_CHECK("json 1.0 is not an integer", n && !tp_json_int64(n, &v),
		 "int");
	n = parse1(&a, "1e3");
	TP_CHECK("json 1e3 is not an integer", n && !tp_json_int64(n, &v),
		 "int");
	tp_json_arena_free(&a);
}

/* Token stream, skip and raw capture, one byte per read. */
static void test_json_pull(void)
{
	static const char doc[] = "{\"x\": {\"a\": [1, {\"b\": 2}]},\n"
				  "\"distributedInfo\": {\"rank\": 3},"
				  " \"n\": 7}";
	struct memsrc m = { doc, sizeof(doc) - 1, 0, 1 };
	struct tp_json *j = tp_json_open(mem_read, &m);
	struct tp_json_arena a = { 0 };
	struct tp_json_node *n;
	const char *cap;
	size_t len;
	int tok;

	TP_CHECK_INT("pull object", tp_json_next(j), TP_JSON_OBJECT);
	TP_CHECK_INT("pull key", tp_json_next(j), TP_JSON_KEY);
	TP_CHECK_STR("pull key text", tp_json_text(j, NULL), "x");
	TP_CHECK_INT("pull skip", tp_json_skip(j, tp_json_next(j)), 0);
	TP_CHECK_INT("pull key 2", tp_json_next(j), TP_JSON_KEY);
	TP_CHECK_INT("pull key 2 line", tp_json_line(j), 2);
	tp_json_capture_start(j, 100);
	TP_CHECK_INT("pull build", tp_json_parse_value(j, &a, &n), 0);
	cap = tp_json_capture_end(j, &len);
	TP_CHECK_STR("pull capture", cap ? cap : "(null)", " {\"rank\": 3}");
	TP_CHECK_INT("pull built rank", tp_json_get(n, "rank")->num, 3);
	TP_CHECK_INT("pull key 3", tp_json_next(j), TP_JSON_KEY);
	tok = tp_json_next(j);
	TP_CHECK("pull number", tok == TP_JSON_NUMBER &&
		 tp_json_number(j) == 7, "tok %d", tok);
	TP_CHECK_INT("pull end", tp_json_next(j), TP_JSON_OBJECT_END);
	TP_CHECK_INT("pull eof", tp_json_next(j), TP_JSON_EOF);
	tp_json_capture_start(j, 1);
	tp_json_close(j);
	tp_json_arena_free(&a);
}

/* ---- tprof check ---- */

static char tmpdir[64];

static char *path_of(const char *name)
{
	static char buf[4][256];
	static int k;

	k = (k + 1) % 4;
	snprintf(buf[k], sizeof(buf[k]), "%s/%s", tmpdir, name);
	return buf[k];
}

static const char *write_file(const char *name, const char *text, int gz)
{
	const char *path = path_of(name);
	gzFile g;
	FILE *f;

	if (gz) {
		g = gzopen(path, "wb");
		gzwrite(g, text, (unsigned)strlen(text));
		gzclose(g);
		return path;
	}
	f = fopen(path, "w");
	fputs(text, f);
	fclose(f);
	return path;
}

static size_t file_size(const char *path)
{
	FILE *f = fopen(path, "rb");
	long n;

	fseek(f, 0, SEEK_END);
	n = ftell(f);
	fclose(f);
	return (size_t)n;
}

/* Runs tp_check_file and keeps its output in out (caller frees). */
static int run_check(const char *path, unsigned flags, char **out)
{
	size_t len;
	FILE *f = open_memstream(out, &len);
	int r = tp_check_file(path, flags, f);

	fclose(f);
	return r;
}

static const char trace_head[] =
	"{\n"
	"\"schemaVersion\": 1,\n"
	"\"traceName\": \"tprof-rank3\",\n"
	"\"displayTimeUnit\": \"ms\",\n"
	"\"baseTimeNanoseconds\": 1763600000000000000,\n"
	"\"distributedInfo\": {\"rank\": 3, \"world_size\": 8},\n"
	"\"traceEvents\": [\n";
static const char trace_tail[] =
	"\n],\n"
	"\"deviceProperties\": [],\n"
	"\"tprof\": {\"version\": \"0.1\", \"host\": \"n1\", \"pid\": 4242}\n"
	"}\n";

#define EV_META "{\"ph\":\"M\",\"name\":\"process_name\",\"pid\":4242," \
	"\"tid\":0,\"args\":{\"name\":\"python3 (rank 3)\"}}"
#define EV_X(name, ts, dur) "{\"ph\":\"X\",\"cat\":\"cpu\",\"name\":\"" \
	name "\",\"pid\":4242,\"tid\":4242,\"ts\":" ts ",\"dur\":" dur \
	",\"args\":{}}"

static const char good_events[] =
	EV_META ",\n"
	EV_X("outer", "10.000", "10.000") ",\n"
	EV_X("cudaLaunchKernel", "12.345", "3.210") ",\n"
	"{\"ph\":\"s\",\"id\":1,\"cat\":\"ac2g\",\"name\":\"ac2g\","
	"\"pid\":4242,\"tid\":4242,\"ts\":12.345},\n"
	"{\"ph\":\"X\",\"cat\":\"kernel\",\"name\":\"k\",\"pid\":4242,"
	"\"tid\":7,\"ts\":20.000,\"dur\":1.000},\n"
	"{\"ph\":\"f\",\"id\":1,\"cat\":\"ac2g\",\"name\":\"ac2g\","
	"\"pid\":4242,\"tid\":7,\"ts\":20.000,\"bp\":\"e\"},\n"
	"{\"ph\":\"M\",\"name\":\"thread_name\",\"pid\":4242,\"tid\":4242,"
	"\"args\":{\"name\":\"python3\"}}";

static char *make_trace(const char *events)
{
	char *s;

	if (asprintf(&s, "%s%s%s", trace_head, events, trace_tail) < 0)
		abort();
	return s;
}

/* Replaces the first from in s by to (s is from make_trace). */
static char *edit(char *s, const char *from, const char *to)
{
	char *at = strstr(s, from), *r;

	if (!at)
		abort();
	if (asprintf(&r, "%.*s%s%s", (int)(at - s), s, to,
		     at + strlen(from)) < 0)
		abort();
	free(s);
	return r;
}

/* Expects rc and, when want is set, a line containing it. */
static void expect(const char *name, char *text, unsigned flags, int rc,
		   const char *want)
{
	const char *path = write_file("t.json", text, 0);
	char *out = NULL;
	int r = run_check(path, flags, &out);

	TP_CHECK(name, r == rc && (!want || strstr(out, want)),
		 "rc %d want %d, output:\n%s", r, rc, out);
	free(out);
	free(text);
}

static void test_check_good(void)
{
	char *text = make_trace(good_events), *out = NULL;
	const char *path;
	char want[300];
	int r;

	path = write_file("good.json", text, 0);
	r = run_check(path, 0, &out);
	snprintf(want, sizeof(want), "%s: ok (7 events)\n", path);
	TP_CHECK("check good plain", r == 0 && !strcmp(out, want), "%s", out);
	free(out);
	path = write_file("good.json.gz", text, 1);
	r = run_check(path, 0, &out);
	snprintf(want, sizeof(want), "%s: ok (7 events)\n", path);
	TP_CHECK("check good gzip", r == 0 && !strcmp(out, want), "%s", out);
	free(out);
	r = run_check(path, TP_CHECK_FOREIGN, &out);
	TP_CHECK("check good with --foreign", r == 0, "%s", out);
	free(out);
	free(text);
}

static void test_check_nesting(void)
{
	expect("check partial overlap",
	       make_trace(EV_X("A", "10.000", "10.000") ",\n"
			  EV_X("B", "15.000", "10.000")), 0, 1,
	       "t.json: error: partial overlap on track pid=4242 tid=4242: "
	       "\"A\" [10.000, 20.000] and \"B\" [15.000, 25.000]");
	expect("check overlap by one ns",
	       make_trace(EV_X("A", "10.000", "10.000") ",\n"
			  EV_X("B", "19.999", "0.002")), 0, 1,
	       "\"B\" [19.999, 20.001]");
	expect("check overlap in file order reversed",
	       make_trace(EV_X("B", "15.000", "10.000") ",\n"
			  EV_X("A", "10.000", "10.000")), 0, 1,
	       "\"A\" [10.000, 20.000] and \"B\" [15.000, 25.000]");
	expect("check equal start nests",
	       make_trace(EV_X("inner", "10.000", "5.000") ",\n"
			  EV_X("outer", "10.000", "10.000") ",\n"
			  EV_X("same", "10.000", "10.000") ",\n"
			  EV_X("end", "15.000", "5.000") ",\n"
			  EV_X("next", "20.000", "1.000") ",\n"
			  EV_X("zero", "21.000", "0.000")),
	       0, 0, "ok (6 events)");
	expect("check overlap on other tracks is fine",
	       make_trace(EV_X("A", "10.000", "10.000") ",\n"
			  "{\"ph\":\"X\",\"name\":\"B\",\"pid\":4242,\"tid\":1,"
			  "\"ts\":15.000,\"dur\":10.000}"), 0, 0, "ok");
}

static void test_check_flows(void)
{
	expect("check flow without end",
	       make_trace(EV_META ",\n{\"ph\":\"s\",\"id\":5,\"cat\":\"ac2g\","
			  "\"name\":\"ac2g\",\"pid\":1,\"tid\":1,"
			  "\"ts\":1.000}"),
	       0, 1, "flow id=5 cat=\"ac2g\" name=\"ac2g\" has no end");
	expect("check flow without start",
	       make_trace("{\"ph\":\"f\",\"id\":6,\"cat\":\"ac2g\","
			  "\"name\":\"ac2g\",\"pid\":1,\"tid\":1,"
			  "\"ts\":1.000}"),
	       0, 1, "flow id=6 cat=\"ac2g\" name=\"ac2g\" has no start");
	expect("check flow cat must match",
	       make_trace("{\"ph\":\"s\",\"id\":7,\"cat\":\"a\",\"name\":\"x\","
			  "\"pid\":1,\"tid\":1,\"ts\":1.000},\n"
			  "{\"ph\":\"f\",\"id\":7,\"cat\":\"b\",\"name\":\"x\","
			  "\"pid\":1,\"tid\":1,\"ts\":2.000}"),
	       0, 2, "flow id=7 cat=\"b\" name=\"x\" has no start");
	expect("check flow string id is hex",
	       make_trace("{\"ph\":\"s\",\"id\":\"0x1f\",\"cat\":\"a\","
			  "\"name\":\"x\",\"pid\":1,\"tid\":1,\"ts\":1.000},\n"
			  "{\"ph\":\"f\",\"id\":31,\"cat\":\"a\","
			  "\"name\":\"x\",\"pid\":1,\"tid\":1,"
			  "\"ts\":2.000}"), 0, 0, "ok");
	expect("check flow end before start",
	       make_trace("{\"ph\":\"s\",\"id\":8,\"cat\":\"a\",\"name\":\"x\","
			  "\"pid\":1,\"tid\":1,\"ts\":5.000},\n"
			  "{\"ph\":\"f\",\"id\":8,\"cat\":\"a\",\"name\":\"x\","
			  "\"pid\":1,\"tid\":1,\"ts\":2.000}"),
	       0, 1, "ends at 2.000 before it starts at 5.000");
	expect("check flow bad id",
	       make_trace("{\"ph\":\"s\",\"id\":-1,\"cat\":\"a\","
			  "\"pid\":1,\"tid\":1,\"ts\":5.000}"),
	       0, 1, "needs an \"id\"");
}

static void test_check_keys(void)
{
	char *t = make_trace(good_events);

	t = edit(t, "\"baseTimeNanoseconds\": 1763600000000000000,\n", "");
	t = edit(t, ",\n\"tprof\": {\"version\": \"0.1\", \"host\": \"n1\", "
		 "\"pid\": 4242}", "");
	expect("check missing tprof keys", strdup(t), 0, 2,
	       "t.json: error: missing top-level key \"baseTimeNanoseconds\"");
	expect("check missing tprof key", strdup(t), 0, 2,
	       "missing top-level key \"tprof\"");
	expect("check --foreign skips tprof keys", t, TP_CHECK_FOREIGN, 0,
	       "ok (7 events)");
	t = edit(make_trace(good_events), "\"schemaVersion\": 1,\n", "");
	t = edit(t, "\"displayTimeUnit\": \"ms\",\n", "");
	expect("check missing schemaVersion", strdup(t), TP_CHECK_FOREIGN, 1,
	       "missing top-level key \"schemaVersion\"");
	expect("check missing displayTimeUnit", strdup(t), 0, 2,
	       "missing top-level key \"displayTimeUnit\"");
	/* Kineto's traces of one process often have none: a warning */
	expect("check --foreign missing displayTimeUnit", t, TP_CHECK_FOREIGN,
	       1, "t.json: warning: 1 no \"displayTimeUnit\" (viewers "
	       "assume \"ms\")\n");
	expect("check missing distributedInfo",
	       edit(make_trace(good_events), "\"distributedInfo\": {\"rank\": "
		    "3, \"world_size\": 8},\n", ""), 0, 1,
	       "missing top-level key \"distributedInfo\"");
	expect("check traceEvents not an array",
	       edit(make_trace(""), "[\n\n]", "{}"), 0, 1,
	       "\"traceEvents\" is not an array");
	expect("check duplicate key",
	       edit(make_trace(""), "\"schemaVersion\": 1,",
		    "\"schemaVersion\": 1, \"schemaVersion\": 1,"), 0, 1,
	       "duplicate top-level key \"schemaVersion\"");
	expect("check base time not floored",
	       edit(make_trace(""), "1763600000000000000",
		    "1763683200000000000"), 0, 1, "multiple of 10^14");
	expect("check displayTimeUnit value",
	       edit(make_trace(""), "\"ms\"", "\"us\""), 0, 1,
	       "\"displayTimeUnit\" must be");
	expect("check top-level array rejected", strdup("[]"), 0, 1,
	       "t.json: error: top-level value is an array");
	expect("check top-level array of events rejected",
	       strdup("[" EV_META "]"), 0, 1, "top-level value is an array");
	expect("check top-level scalar rejected", strdup("3"), 0, 1,
	       "is a scalar");
}

/* The file-wide scan for HTA's first "rank": N runs on each read of the
 * file: a "rank": 5 placed before distributedInfo's 3 and cut by the end
 * of the first read (256 KiB of a plain file) is still the one found, and
 * a "rank":5 without the space is still passed over. */
static void test_rank_across_reads(void)
{
	const size_t read1 = 256 * 1024;
	const char *line = "\"schemaVersion\": 1,\n";
	char name[96], *text, *pad, *to;
	size_t at, nx;
	int k, bad, ok = 0;

	for (bad = 0; bad < 2; bad++) {
		for (k = 0; k <= 8; k++) {
			text = make_trace("");
			at = (size_t)(strstr(text, line) - text) + strlen(line);
			/* "pad": "<nx x>",\n"x": {"rank": puts it at read1 - k */
			nx = read1 - (size_t)k - at - 11 - 6;
			pad = malloc(nx + 1);
			memset(pad, 'x', nx);
			pad[nx] = 0;
			if (asprintf(&to, "%s\"pad\": \"%s\",\n\"x\": {\"rank\":%s},\n",
				     line, pad, bad ? "5" : " 5") < 0)
				abort();
			text = edit(text, line, to);
			ok += strstr(text, "\"rank\":") - text ==
			      (ptrdiff_t)(read1 - (size_t)k);
			snprintf(name, sizeof(name), "check rank%s starting %d "
				 "bytes before the end of the first read",
				 bad ? " without space" : "", k);
			expect(name, text, 0, !bad, bad ? "ok" :
			       "HTA would read rank 5");
			free(to);
			free(pad);
		}
	}
	TP_CHECK_INT("check rank across reads: placed where meant", ok, 18);
}

static void test_check_rank(void)
{
	expect("check rank without space",
	       edit(make_trace(""), "{\"rank\": 3,", "{\"rank\":3,"), 0, 1,
	       "distributedInfo: \"rank\" is not written as \"rank\": 3");
	expect("check rank with tab",
	       edit(make_trace(""), "{\"rank\": 3,", "{\"rank\":\t3,"), 0, 0,
	       "ok");
	expect("check rank on the next line",
	       edit(make_trace(""), "{\"rank\": 3,", "{\"rank\":\n3,"), 0, 1,
	       "is not written as");
	expect("check rank below world_size",
	       edit(make_trace(""), "\"world_size\": 8", "\"world_size\": 3"),
	       0, 1, "is not below world_size 3");
	expect("check rank must be an integer",
	       edit(make_trace(""), "{\"rank\": 3,", "{\"rank\": \"3\","), 0,
	       1, "distributedInfo.rank is missing");
	test_rank_across_reads();
	expect("check first rank in file wins for HTA",
	       edit(make_trace(""), "\"traceName\": \"tprof-rank3\",",
		    "\"traceName\": \"tprof-rank3\", \"x\": {\"rank\": 5},"), 0,
	       1, "HTA would read rank 5");
}

static void test_check_events(void)
{
	expect("check 2-decimal ts rejected",
	       make_trace(EV_X("A", "12.34", "1.000")), 0, 1,
	       "t.json: error: traceEvents[0] (line 8): \"ts\": 12.34 does "
	       "not have exactly three decimals");
	expect("check exponent dur rejected",
	       make_trace(EV_X("A", "12.340", "1e3")), 0, 1,
	       "\"dur\": 1e3 does not have exactly three decimals");
	expect("check integer ts rejected",
	       make_trace(EV_X("A", "12", "1.000")), 0, 1, "three decimals");
	expect("check 2-decimal ts fine with --foreign",
	       make_trace(EV_X("A", "12.34", "1")), TP_CHECK_FOREIGN, 0, "ok");
	expect("check negative dur",
	       make_trace(EV_X("A", "12.340", "-1.500")), 0, 1,
	       "negative \"dur\"");
	expect("check X without dur",
	       make_trace("{\"ph\":\"X\",\"name\":\"a\",\"pid\":1,\"tid\":1,"
			  "\"ts\":1.000}"), 0, 1, "no \"dur\"");
	expect("check i without ts",
	       make_trace("{\"ph\":\"i\",\"name\":\"a\",\"pid\":1,\"tid\":1}"),
	       0, 1, "no \"ts\"");
	expect("check ts as string",
	       make_trace(EV_X("A", "\"12.340\"", "1.000")), 0, 1,
	       "\"ts\" is not a number");
	expect("check missing ph",
	       make_trace("{\"name\":\"a\",\"pid\":1,\"tid\":1}"), 0, 1,
	       "\"ph\" is missing");
	expect("check unknown ph",
	       make_trace("{\"ph\":\"Q\",\"pid\":1,\"tid\":1}"), 0, 1,
	       "unknown phase \"Q\"");
	expect("check event not an object", make_trace("[]"), 0, 1,
	       "traceEvents[0] (line 8): event is not an object");
	expect("check name not a string",
	       make_trace("{\"ph\":\"i\",\"name\":1,\"pid\":1,\"tid\":1,"
			  "\"ts\":1.000}"), 0, 1, "\"name\" is not a string");
	expect("check pid float",
	       make_trace("{\"ph\":\"i\",\"pid\":1.5,\"tid\":1,\"ts\":1.000}"),
	       0, 1, "\"pid\" is not an integer or a string");
	expect("check tid missing",
	       make_trace("{\"ph\":\"i\",\"pid\":1,\"ts\":1.000}"), 0, 1,
	       "no \"tid\"");
	expect("check string pid ok",
	       make_trace("{\"ph\":\"i\",\"pid\":\"\",\"tid\":\"main\","
			  "\"ts\":1.000}"), 0, 0, "ok");
	expect("check unknown metadata",
	       make_trace("{\"ph\":\"M\",\"name\":\"proc_name\",\"pid\":1,"
			  "\"tid\":1,\"args\":{\"name\":\"x\"}}"), 0, 1,
	       "unknown metadata event \"proc_name\"");
	expect("check thread_name args.name",
	       make_trace("{\"ph\":\"M\",\"name\":\"thread_name\",\"pid\":1,"
			  "\"tid\":1,\"args\":{\"name\":5}}"), 0, 1,
	       "thread_name needs a string args.name");
	expect("check sort index",
	       make_trace("{\"ph\":\"M\",\"name\":\"thread_sort_index\","
			  "\"pid\":1,\"tid\":1,\"args\":{}}"), 0, 1,
	       "thread_sort_index needs an integer args.sort_index");
	expect("check invalid JSON in a trace",
	       edit(make_trace(EV_META), "\"pid\":4242", "\"pid\":04242"), 0,
	       -1, "t.json: error: invalid JSON at line 8, column");
	expect("check bad UTF-8 in a name",
	       make_trace(EV_X("\xc0\xaf", "1.000", "1.000")), 0, -1,
	       "overlong");
}

static void test_check_many_problems(void)
{
	char *ev = calloc(30, 128), *out = NULL, *line, *text;
	const char *path;
	int i, r, lines = 0;

	for (i = 0; i < 30; i++)
		strcat(ev, i ? ",\n" EV_X("a", "1.0", "1.000") :
			       EV_X("a", "1.0", "1.000"));
	text = make_trace(ev);
	path = write_file("many.json", text, 0);
	free(text);
	r = run_check(path, 0, &out);
	for (line = out; (line = strstr(line, ": error: ")); line++)
		lines++;
	TP_CHECK_INT("check 30 problems counted", r, 30);
	TP_CHECK_INT("check at most 20 shown", lines, 20);
	TP_CHECK("check rest counted", strstr(out, "many.json: 10 more "
		 "problems not shown (30 in total)"), "%s", out);
	free(out);
	free(ev);
}

static void test_check_gzip(void)
{
	char *text = make_trace(good_events), *out = NULL, *cat;
	const char *path, *p2;
	size_t n, n2;
	FILE *f;
	char *buf;
	int r;

	/* truncated */
	path = write_file("trunc.json.gz", text, 1);
	n = file_size(path);
	r = truncate(path, (off_t)n / 2);
	r = run_check(path, 0, &out);
	TP_CHECK("check truncated gzip", r == -1 && strstr(out,
		 "trunc.json.gz: error: truncated gzip data"), "%d %s", r, out);
	free(out);
	/* the trailer (CRC, length) cut off */
	path = write_file("trunc2.json.gz", text, 1);
	r = truncate(path, (off_t)file_size(path) - 4);
	r = run_check(path, 0, &out);
	TP_CHECK("check gzip without trailer", r == -1 &&
		 strstr(out, "truncated gzip data"), "%d %s", r, out);
	free(out);
	/* corrupt */
	path = write_file("bad.json.gz", text, 1);
	n = file_size(path);
	buf = malloc(n);
	f = fopen(path, "r+b");
	n = fread(buf, 1, n, f);
	memset(buf + 20, 0xff, 8);
	rewind(f);
	fwrite(buf, 1, n, f);
	fclose(f);
	r = run_check(path, 0, &out);
	TP_CHECK("check corrupt gzip", r == -1 &&
		 strstr(out, "corrupt gzip data"), "%d %s", r, out);
	free(out);
	free(buf);
	/* two members, zero padding, then garbage */
	cat = malloc(strlen(text) + 1);
	n = strlen(text) / 2;
	memcpy(cat, text, n);
	cat[n] = 0;
	path = write_file("m1.gz", cat, 1);
	p2 = write_file("m2.gz", text + n, 1);
	n = file_size(path);
	n2 = file_size(p2);
	buf = malloc(n + n2 + 16);
	f = fopen(path, "rb");
	n = fread(buf, 1, n, f);
	fclose(f);
	f = fopen(p2, "rb");
	n2 = fread(buf + n, 1, n2, f);
	fclose(f);
	memset(buf + n + n2, 0, 16);
	f = fopen(path_of("multi.json.gz"), "wb");
	fwrite(buf, 1, n + n2 + 16, f);
	fclose(f);
	r = run_check(path_of("multi.json.gz"), 0, &out);
	TP_CHECK("check concatenated gzip members", r == 0 &&
		 strstr(out, "ok (7 events)"), "%d %s", r, out);
	free(out);
	memcpy(buf + n + n2 + 8, "junk", 4);
	f = fopen(path_of("junk.json.gz"), "wb");
	fwrite(buf, 1, n + n2 + 16, f);
	fclose(f);
	r = run_check(path_of("junk.json.gz"), 0, &out);
	TP_CHECK("check garbage after gzip", r == -1 &&
		 strstr(out, "trailing garbage after gzip data"), "%d %s", r,
		 out);
	free(out);
	free(buf);
	free(cat);
	free(text);
	r = run_check(path_of("missing.json"), 0, &out);
	TP_CHECK("check missing file", r == -1 &&
		 strstr(out, "missing.json: error: cannot open"), "%s", out);
	free(out);
	path = write_file("empty.json", "", 0);
	r = run_check(path, 0, &out);
	TP_CHECK("check empty file", r == -1 &&
		 strstr(out, "unexpected end of input"), "%s", out);
	free(out);
}

/* One gzip member of n bytes at zlib's level 0 (stored blocks: its size
 * is n plus a fixed overhead) into out; returns its size. */
static size_t gz_member(const unsigned char *in, size_t n, unsigned char *out,
			size_t cap)
{
	z_stream zs = { 0 };
	size_t got;

	deflateInit2(&zs, 0, Z_DEFLATED, 16 + MAX_WBITS, 8,
		     Z_DEFAULT_STRATEGY);
	zs.next_in = (unsigned char *)in;
	zs.avail_in = (uInt)n;
	zs.next_out = out;
	zs.avail_out = (uInt)cap;
	deflate(&zs, Z_FINISH);
	got = cap - zs.avail_out;
	deflateEnd(&zs);
	return got;
}

/* Reads path through tp_gzr; the bytes read, or -1 with the error. */
static long gz_read_all(const char *path, unsigned char *buf, size_t cap,
			char *err, size_t errlen)
{
	struct tp_gzr *gz = tp_gzr_open(path, err, errlen);
	long total = 0;
	ssize_t n;

	if (!gz)
		return -1;
	while ((n = tp_gzr_read(gz, buf + total, cap - (size_t)total)) > 0)
		total += n;
	if (n < 0) {
		snprintf(err, errlen, "%s", tp_gzr_error(gz));
		total = -1;
	}
	tp_gzr_close(gz);
	return total;
}

/* The reader refills its input 256 KiB at a time: a member whose 8-byte
 * trailer (CRC-32, length) straddles a refill still checks, and a wrong
 * CRC or length there is still found, with zlib's words (the reader
 * checks the trailer itself when ISA-L's CRC is there). */
static void test_gzread_trailer_split(void)
{
	const size_t chunk = 256 * 1024, cap = chunk + 4096;
	unsigned char *data = malloc(cap), *z = malloc(2 * cap);
	unsigned char *back = malloc(cap);
	const char *path = path_of("split.json.gz");
	size_t i, k, n, over, m1, m2;
	int bad = 0, corrupt;
	char err[256] = "", got[300] = "";
	long r;
	FILE *f;

	for (i = 0; i < cap; i++)
		data[i] = (unsigned char)(i * 2654435761u >> 13);
	over = gz_member(data, chunk, z, 2 * cap) - chunk;
	for (corrupt = 0; corrupt < 3; corrupt++)
		for (k = 0; k <= 8; k++) {
			/* the trailer starts k bytes before the refill */
			n = chunk - k + 8 - over;
			for (i = 0; i < 4; i++) {	/* blocks vary */
				m1 = gz_member(data, n, z, 2 * cap);
				n += chunk - k + 8 - m1;
			}
			m1 = gz_member(data, n, z, 2 * cap);
			if (m1 != chunk - k + 8) {
				snprintf(got, sizeof(got), "member of %zu, "
					 "not %zu bytes", m1, chunk - k + 8);
				bad++;
				continue;
			}
			m2 = gz_member(data + 7, 1000, z + m1, 2 * cap - m1);
			if (corrupt)	/* a CRC byte, or a length byte */
				z[m1 - (corrupt == 1 ? 8 : 1)] ^= 0x40;
			f = fopen(path, "wb");
			fwrite(z, 1, m1 + m2, f);
			fclose(f);
			r = gz_read_all(path, back, cap, err, sizeof(err));
			if (corrupt ? r != -1 || !strstr(err, corrupt == 1 ?
					"incorrect data check" :
					"incorrect length check") :
				      r != (long)(n + 1000) ||
				      memcmp(back, data, n) ||
				      memcmp(back + n, data + 7, 1000)) {
				snprintf(got, sizeof(got), "corrupt %d, k %zu: "
					 "%ld \"%s\"", corrupt, k, r,
					 r < 0 ? err : "");
				bad++;
			}
		}
	TP_CHECK("gzread trailer across a refill, good and corrupt", !bad,
		 "%d wrong; last %s", bad, got);
	free(data);
	free(z);
	free(back);
}

static void test_gzread_small(void)
{
	char err[128], buf[8];
	const char *path = write_file("one", "x", 0);
	struct tp_gzr *gz = tp_gzr_open(path, err, sizeof(err));
	ssize_t n;

	n = gz ? tp_gzr_read(gz, buf, sizeof(buf)) : -2;
	TP_CHECK("gzread one-byte plain file", gz && n == 1 && buf[0] == 'x' &&
		 !tp_gzr_is_gzip(gz) && tp_gzr_read(gz, buf, 8) == 0, "n %zd",
		 n);
	tp_gzr_close(gz);
	path = write_file("one.gz", "", 1);
	gz = tp_gzr_open(path, err, sizeof(err));
	n = gz ? tp_gzr_read(gz, buf, sizeof(buf)) : -2;
	TP_CHECK("gzread empty gzip member", gz && n == 0 && tp_gzr_is_gzip(gz),
		 "n %zd", n);
	tp_gzr_close(gz);
}

/* A torch.profiler trace as Kineto writes it: absolute microsecond ts,
 * integer and 1-decimal values, "" pid/tid on the window marker. */
static const char kineto_trace[] =
	"{\n"
	"  \"schemaVersion\": 1,\n"
	"  \"deviceProperties\": [\n"
	"    {\"id\": 0, \"name\": \"NVIDIA H100 80GB HBM3\", "
	"\"totalGlobalMem\": 85031714816, \"computeMajor\": 9, "
	"\"computeMinor\": 0, \"maxThreadsPerBlock\": 1024, "
	"\"maxThreadsPerMultiprocessor\": 2048, \"regsPerBlock\": 65536, "
	"\"warpSize\": 32, \"sharedMemPerBlock\": 49152, \"numSms\": 132}\n"
	"  ],\n"
	"  \"distributedInfo\": {\"backend\": \"nccl\", \"rank\": 0, "
	"\"world_size\": 2, \"pg_count\": 1, \"pg_config\": [{\"pg_name\": "
	"\"0\", \"pg_desc\": \"default_pg\", \"backend_config\": "
	"\"cuda:nccl\", \"pg_size\": 2, \"ranks\": [0, 1]}], "
	"\"nccl_version\": \"2.20.5\"},\n"
	"  \"cuda_runtime_version\": 12040,\n"
	"  \"cuda_driver_version\": 12040,\n"
	"  \"trace_id\": \"A1B2C3\",\n"
	"  \"displayTimeUnit\": \"ms\",\n"
	"  \"baseTimeNanoseconds\": 1700000000000000000,\n"
	"  \"traceEvents\": [\n"
	"  {\"ph\": \"X\", \"cat\": \"cpu_op\", \"name\": \"aten::mm\", "
	"\"pid\": 1234, \"tid\": 1234, \"ts\": 1700000000123456.789, "
	"\"dur\": 25.5, \"args\": {\"External id\": 5, "
	"\"Record function id\": 0, \"Ev Idx\": 4}},\n"
	"  {\"ph\": \"X\", \"cat\": \"cuda_runtime\", \"name\": "
	"\"cudaLaunchKernel\", \"pid\": 1234, \"tid\": 1234, "
	"\"ts\": 1700000000123460.1, \"dur\": 5.2, \"args\": "
	"{\"External id\": 5, \"cbid\": 211, \"correlation\": 77}},\n"
	"  {\"ph\": \"X\", \"cat\": \"kernel\", \"name\": "
	"\"sm90_xmma_gemm_f32f32\", \"pid\": 0, \"tid\": 7, "
	"\"ts\": 1700000000123470, \"dur\": 40, \"args\": {\"External id\": 5, "
	"\"queued\": 0, \"device\": 0, \"context\": 1, \"stream\": 7, "
	"\"correlation\": 77, \"registers per thread\": 168, "
	"\"shared memory\": 213248, \"blocks per SM\": 1.0, "
	"\"warps per SM\": 3.0, \"grid\": [132, 1, 1], "
	"\"block\": [384, 1, 1], \"est. achieved occupancy %\": 0}},\n"
	"  {\"ph\": \"s\", \"id\": 77, \"pid\": 1234, \"tid\": 1234, "
	"\"ts\": 1700000000123460.1, \"cat\": \"ac2g\", \"name\": \"ac2g\"},\n"
	"  {\"ph\": \"f\", \"id\": 77, \"pid\": 0, \"tid\": 7, "
	"\"ts\": 1700000000123470, \"cat\": \"ac2g\", \"name\": \"ac2g\", "
	"\"bp\": \"e\"},\n"
	"  {\"name\": \"process_name\", \"ph\": \"M\", \"ts\": "
	"1700000000123000, \"pid\": 1234, \"tid\": 0, \"args\": {\"name\": "
	"\"python\"}},\n"
	"  {\"name\": \"process_labels\", \"ph\": \"M\", \"ts\": "
	"1700000000123000, \"pid\": 0, \"tid\": 0, \"args\": {\"labels\": "
	"\"GPU 0\"}},\n"
	"  {\"name\": \"process_sort_index\", \"ph\": \"M\", \"ts\": "
	"1700000000123000, \"pid\": 0, \"tid\": 0, \"args\": "
	"{\"sort_index\": 16777216}},\n"
	"  {\"name\": \"thread_name\", \"ph\": \"M\", \"ts\": "
	"1700000000123000, \"pid\": 0, \"tid\": 7, \"args\": {\"name\": "
	"\"stream 7\"}},\n"
	"  {\"name\": \"thread_sort_index\", \"ph\": \"M\", \"ts\": "
	"1700000000123000, \"pid\": 0, \"tid\": 7, \"args\": "
	"{\"sort_index\": 7}},\n"
	"  {\"name\": \"Record Window End\", \"ph\": \"i\", \"s\": \"g\", "
	"\"pid\": \"\", \"tid\": \"\", \"ts\": 1700000000124000}\n"
	"  ],\n"
	"  \"traceName\": \"/tmp/rank0.pt.trace.json\"\n"
	"}\n";

static void test_check_kineto(void)
{
	expect("check --foreign accepts a Kineto trace", strdup(kineto_trace),
	       TP_CHECK_FOREIGN, 0, "ok (11 events)");
	expect("check Kineto trace is not a tprof trace",
	       strdup(kineto_trace), 0, 14,
	       "missing top-level key \"tprof\"");
	expect("check --foreign still checks nesting",
	       edit(strdup(kineto_trace), "\"dur\": 5.2", "\"dur\": 52.2"),
	       TP_CHECK_FOREIGN, 1, "partial overlap on track pid=1234 "
	       "tid=1234: \"aten::mm\" [1700000000123456.789, "
	       "1700000000123482.289] and \"cudaLaunchKernel\"");
}

/* What every real torch.profiler GPU trace has: an ac2g flow without its
 * kernel, a kernel without its launch, two kernels overlapping on a
 * stream, and (single-process runs) no displayTimeUnit or
 * distributedInfo. --foreign counts each kind once as a warning. */
static char *kineto_quirks(void)
{
	char *t = strdup(kineto_trace);

	t = edit(t, "  \"displayTimeUnit\": \"ms\",\n", "");
	t = edit(t, "  \"distributedInfo\"", "  \"notDistributedInfo\"");
	return edit(t, "  {\"name\": \"process_name\"",
		    "  {\"ph\": \"s\", \"id\": 78, \"pid\": 1234, "
		    "\"tid\": 1234, \"ts\": 1700000000123461, \"cat\": "
		    "\"ac2g\", \"name\": \"ac2g\"},\n"
		    "  {\"ph\": \"s\", \"id\": 79, \"pid\": 1234, "
		    "\"tid\": 1234, \"ts\": 1700000000123462, \"cat\": "
		    "\"ac2g\", \"name\": \"ac2g\"},\n"
		    "  {\"ph\": \"f\", \"id\": 80, \"pid\": 0, \"tid\": 7, "
		    "\"ts\": 1700000000123600, \"cat\": \"ac2g\", "
		    "\"name\": \"ac2g\", \"bp\": \"e\"},\n"
		    "  {\"ph\": \"X\", \"cat\": \"kernel\", \"name\": \"k2\", "
		    "\"pid\": 0, \"tid\": 7, \"ts\": 1700000000123509.999, "
		    "\"dur\": 5},\n"
		    "  {\"ph\": \"X\", \"cat\": \"gpu_memcpy\", \"name\": "
		    "\"Memcpy DtoD\", \"pid\": 0, \"tid\": 7, "
		    "\"ts\": 1700000000123514, \"dur\": 2},\n"
		    "  {\"name\": \"process_name\"");
}

static void test_check_kineto_quirks(void)
{
	char *text = kineto_quirks(), *out = NULL, want[2048];
	const char *path = write_file("q.json", text, 0);
	int r;

	free(text);

	r = run_check(path, TP_CHECK_FOREIGN, &out);
	snprintf(want, sizeof(want),
		 "%1$s: warning: 1 no \"displayTimeUnit\" (viewers assume "
		 "\"ms\")\n"
		 "%1$s: warning: 1 no \"distributedInfo\" (HTA takes the rank "
		 "as 0; fine for a single process)\n"
		 "%1$s: warning: 2 \"ac2g\" flows with no end (ph \"f\"): "
		 "launches whose kernel is outside the profiling window, as "
		 "Kineto writes them\n"
		 "%1$s: warning: 1 \"ac2g\" flows with no start (ph \"s\"): "
		 "kernels whose launch is outside the profiling window\n"
		 "%1$s: warning: 1 partial overlaps between GPU slices on one "
		 "stream (CUPTI's timestamps of back-to-back work; Perfetto "
		 "shows the later slice on an extra row)\n"
		 "%1$s: ok (16 events)\n", path);
	TP_CHECK("check --foreign: Kineto's quirks are counted warnings",
		 r == 0 && !strcmp(out, want), "rc %d, output:\n%s", r, out);
	free(out);
	r = run_check(path, 0, &out);
	TP_CHECK("check without --foreign: the quirks are errors",
		 r == 26 && strstr(out, "missing top-level key "
				   "\"displayTimeUnit\"") &&
		 strstr(out, "6 more problems not shown (26 in total)"),
		 "rc %d, output:\n%s", r, out);
	free(out);
	expect("check --foreign: an unmatched flow of another cat is an error",
	       edit(kineto_quirks(), "\"id\": 78, \"pid\": 1234, \"tid\": "
		    "1234, \"ts\": 1700000000123461, \"cat\": \"ac2g\"",
		    "\"id\": 78, \"pid\": 1234, \"tid\": 1234, \"ts\": "
		    "1700000000123461, \"cat\": \"fwdbwd\""),
	       TP_CHECK_FOREIGN, 1, "flow id=78 cat=\"fwdbwd\" name=\"ac2g\" "
	       "has no end");
	expect("check --foreign: a CPU slice overlapping a kernel's track is "
	       "an error", edit(kineto_quirks(), "\"cat\": \"kernel\", \"name\": "
				"\"k2\"", "\"cat\": \"cpu_op\", \"name\": \"k2\""),
	       TP_CHECK_FOREIGN, 1, "partial overlap on track pid=0 tid=7: "
	       "\"sm90_xmma_gemm_f32f32\" [1700000000123470.000, "
	       "1700000000123510.000] and \"k2\"");
}

static void test_cmd(void)
{
	char *text = make_trace(""), *argv[6];
	const char *good = write_file("cmd.json", text, 0);

	free(text);
	argv[0] = "check";
	TP_CHECK_INT("cmd no files", tp_cmd_check(1, argv), 2);
	argv[1] = "--bogus";
	argv[2] = (char *)good;
	TP_CHECK_INT("cmd unknown option", tp_cmd_check(3, argv), 2);
	argv[1] = (char *)good;
	fflush(stdout);
	TP_CHECK_INT("cmd one good file", tp_cmd_check(2, argv), 0);
	argv[2] = "--foreign";
	argv[3] = path_of("missing.json");
	TP_CHECK_INT("cmd a missing file", tp_cmd_check(4, argv), 1);
	argv[1] = "--help";
	TP_CHECK_INT("cmd --help", tp_cmd_check(2, argv), 0);
}

int main(void)
{
	char *mem = NULL;

	snprintf(tmpdir, sizeof(tmpdir), "/tmp/tprof-test-check.XXXXXX");
	if (!mkdtemp(tmpdir)) {
		perror("mkdtemp");
		return 1;
	}
	test_good_json();
	test_bad_json();
	test_json_position();
	test_json_position_runs();
	test_json_depth();
	test_json_values();
	test_json_pull();
	test_check_good();
	test_check_nesting();
	test_check_flows();
	test_check_keys();
	test_check_rank();
	test_check_events();
	test_check_many_problems();
	test_check_gzip();
	test_gzread_small();
	test_gzread_trailer_split();
	test_check_kineto();
	test_check_kineto_quirks();
	test_cmd();
	if (asprintf(&mem, "rm -rf '%s'", tmpdir) > 0 && system(mem))
		fprintf(stderr, "could not remove %s\n", tmpdir);
	free(mem);
	return TP_TEST_DONE();
}
