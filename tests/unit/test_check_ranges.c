/* tprof check against a trace's NVTX ranges and its drop counts
 * (cli/check/check_ranges.c): a trace paired by id whose counts add up
 * is ok; ranges paired by order while events were dropped (as tprof
 * wrote them before range ids: 200,000 flat ranges showed nesting depth
 * 3 and a range as long as the run, and check said ok), ranges written
 * that the trailer does not count, more pops dropped than pushes, range
 * drops beyond the events dropped, and async ranges not whole are each
 * flagged; steps and a flight window are left out of the count. */
#define _GNU_SOURCE
#include "tp_test.h"

#include "cli/check/check.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static char dir[64];

static const char head[] =
	"{\n\"schemaVersion\": 1,\n\"traceName\": \"tprof-rank0\",\n"
	"\"displayTimeUnit\": \"ms\",\n"
	"\"baseTimeNanoseconds\": 1763600000000000000,\n"
	"\"distributedInfo\": {\"rank\": 0, \"world_size\": 1},\n"
	"\"traceEvents\": [\n";

#define UA(name, ts, dur) "{\"ph\":\"X\",\"cat\":\"user_annotation\"," \
	"\"name\":\"" name "\",\"pid\":7,\"tid\":7,\"ts\":" ts ",\"dur\":" \
	dur ",\"args\":{}}"
#define STEP "{\"ph\":\"X\",\"cat\":\"user_annotation\",\"name\":" \
	"\"ProfilerStep#0\",\"pid\":7,\"tid\":1000000000,\"ts\":1.000," \
	"\"dur\":50.000,\"args\":{}}"
#define AS(ph, id, ts) "{\"ph\":\"" ph "\",\"cat\":\"user_annotation\"," \
	"\"name\":\"s\",\"id\":" id ",\"pid\":7,\"tid\":8,\"ts\":" ts "}"

static const char two_ranges[] = UA("a", "10.000", "1.000") ",\n"
				 UA("b", "12.000", "1.000");

/* events, then the tprof object's members after "version" */
static int check(const char *events, const char *tprof, char **out)
{
	char path[128], *text;
	size_t len;
	FILE *f;
	int r;

	snprintf(path, sizeof(path), "%s/t.json", dir);
	if (asprintf(&text, "%s%s\n],\n\"deviceProperties\": [],\n"
		     "\"tprof\": {\"version\": \"0.1\"%s}\n}\n", head, events,
		     tprof) < 0)
		abort();
	f = fopen(path, "w");
	fputs(text, f);
	fclose(f);
	free(text);
	f = open_memstream(out, &len);
	r = tp_check_file(path, 0, f);
	fclose(f);
	return r;
}

static void expect(const char *name, const char *events, const char *tprof,
		   int rc, const char *want)
{
	char *out = NULL;
	int r = check(events, tprof, &out);

	TP_CHECK(name, r == rc && strstr(out, want), "rc %d want %d:\n%s", r,
		 rc, out);
	free(out);
}

#define NV(ranges, d) ", \"events_dropped\": " d ", \"nvtx\": {" \
	"\"pairing\": \"id\", \"ranges\": " ranges ", \"dropped\": " \
	"{\"pushes\": 3, \"pops\": 3, \"starts\": 1, \"ends\": 1}}"

int main(void)
{
	snprintf(dir, sizeof(dir), "/tmp/tprof-test-ckr.XXXXXX");
	if (!mkdtemp(dir))
		return 1;
	expect("check ranges: paired by id, counts adding up: ok",
	       two_ranges, NV("2", "8"), 0, "ok (2 events)");
	expect("check ranges: a step is not an NVTX range",
	       STEP ",\n" UA("a", "10.000", "1.000") ",\n"
	       UA("b", "12.000", "1.000"), NV("2", "8"), 0, "ok");
	expect("check ranges: paired by order while events were dropped",
	       two_ranges, ", \"events_dropped\": 5, \"nvtx\": "
	       "{\"ranges\": 2, \"unmatched_pops\": 0}", 1,
	       "2 NVTX ranges were paired by order while 5 events were "
	       "dropped: some may never have happened");
	expect("check ranges: paired by order without drops: ok",
	       two_ranges, ", \"events_dropped\": 0, \"nvtx\": "
	       "{\"ranges\": 2}", 0, "ok");
	expect("check ranges: a range the trailer does not count",
	       two_ranges, NV("1", "8"), 1,
	       "the trace holds 2 NVTX ranges but its trailer counts 1");
	expect("check ranges: a flight window holds fewer than counted",
	       two_ranges, ", \"flight\": {\"seconds\": 5}" NV("9", "8"), 0,
	       "ok");
	expect("check ranges: more pops dropped than pushes",
	       two_ranges, ", \"events_dropped\": 9, \"nvtx\": {\"pairing\": "
	       "\"id\", \"ranges\": 2, \"dropped\": {\"pushes\": 1, "
	       "\"pops\": 2, \"starts\": 0, \"ends\": 0}}", 1,
	       "more NVTX range ends dropped than begins");
	expect("check ranges: range drops beyond the events dropped",
	       two_ranges, NV("2", "7"), 1,
	       "more NVTX ranges dropped than events dropped (7)");
	expect("check ranges: async pairs whole: ok",
	       AS("b", "5", "1.000") ",\n" AS("e", "5", "2.000") ",\n"
	       AS("e", "6", "4.000") ",\n" AS("b", "6", "3.000"),
	       NV("0", "8"), 0, "ok");
	expect("check ranges: an async end without its begin",
	       AS("b", "5", "1.000") ",\n" AS("e", "5", "2.000") ",\n"
	       AS("e", "6", "4.000"), NV("0", "8"), 1,
	       "async ranges not whole: 0 begins without their end, 1 ends "
	       "without their begin");
	expect("check ranges: an async begin without its end",
	       AS("b", "5", "1.000"), NV("0", "8"), 1,
	       "1 begins without their end");
	expect("check ranges: an async range ending before it begins",
	       AS("b", "5", "3.000") ",\n" AS("e", "5", "2.000"),
	       NV("0", "8"), 1, "1 async ranges end before they begin");
	/* tprof merge carries each input's account in tprof.merged. */
	expect("check ranges: merged inputs paired by id, adding up: ok",
	       two_ranges, ", \"merged\": [{\"file\": \"a\"" NV("1", "8")
	       "}, {\"file\": \"b\"" NV("1", "8") "}]", 0, "ok");
	expect("check ranges: a merged input paired by order with drops",
	       two_ranges, ", \"merged\": [{\"file\": \"a\"" NV("1", "8")
	       "}, {\"file\": \"b\", \"events_dropped\": 4, \"nvtx\": "
	       "{\"ranges\": 1}}]", 1, "were paired by order while 4 events "
	       "were dropped");
	expect("check ranges: merged inputs counting fewer ranges",
	       two_ranges, ", \"merged\": [{\"file\": \"a\"" NV("1", "8")
	       "}, {\"file\": \"b\"" NV("0", "8") "}]", 1,
	       "the trace holds 2 NVTX ranges but its trailer counts 1");
	if (system("rm -rf /tmp/tprof-test-ckr.*") < 0)
		return 1;
	return TP_TEST_DONE();
}
