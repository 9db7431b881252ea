/* Unit tests for the gzip reader and `tprof check` (the JSON parser's are
 * in test_json_parser.c). */
#define _GNU_SOURCE
#include "tp_test.h"

#include "cli/check/check.h"
#include "cli/read/gzread.h"
#include "cli/read/json.h"

#include <math.h>
#include <stdlib.h>
#include <unistd.h>
#include <zlib.h>

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
