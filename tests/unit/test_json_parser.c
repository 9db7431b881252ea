/* Unit tests for the strict JSON parser under every reader (cli/read/
 * json.c, json_tree.c): fed whole and a few bytes at a time, errors with
 * their line and column, depth, values, the pull interface. */
#define _GNU_SOURCE
#include "tp_test.h"

#include "cli/read/json.h"

#include <math.h>
#include <stdlib.h>
#include <unistd.h>

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

int main(void)
{
	test_good_json();
	test_bad_json();
	test_json_position();
	test_json_position_runs();
	test_json_depth();
	test_json_values();
	test_json_pull();
	return TP_TEST_DONE();
}
