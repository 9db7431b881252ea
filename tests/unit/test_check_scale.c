/* tprof check at scale: 100k distinct X names, tracks and flow keys, each
 * far past the 1024 slots the checker's hash tables start with (they once
 * never grew, and a full table was probed forever). The trace is built
 * here; an alarm turns a hang into a FAIL line. */
#define _GNU_SOURCE
#include "tp_test.h"

#include "cli/check/check.h"

#include <signal.h>
#include <stdlib.h>
#include <unistd.h>

#define N 100000
#ifdef TP_TEST_SANITIZED
/* A sanitized checker on a loaded machine is ten times slower: the hang
 * detector waits longer, and says so (a SKIP line in main). */
#define LIMIT_S 300
#else
#define LIMIT_S 30
#endif
#define STR_(x) #x
#define STR(x) STR_(x)

static char path[64];

static void on_alarm(int sig)
{
	static const char msg[] =
		"FAIL check 100k keys: no answer in " STR(LIMIT_S) " s\n";

	(void)sig;
	if (write(1, msg, sizeof(msg) - 1) < 0)
		_exit(1);
	unlink(path);
	_exit(1);
}

/* Event i: X "name<i>" on track (1, i), a flow <i> from it to (2, i). */
static int write_trace(FILE *f, int n)
{
	int i;

	fputs("{\"schemaVersion\": 1, \"traceName\": \"tprof-rank0\",\n"
	      "\"displayTimeUnit\": \"ms\",\n"
	      "\"baseTimeNanoseconds\": 1700000000000000000,\n"
	      "\"distributedInfo\": {\"rank\": 0, \"world_size\": 1},\n"
	      "\"traceEvents\": [\n", f);
	for (i = 0; i < n; i++)
		fprintf(f, "%s{\"ph\":\"X\",\"cat\":\"c\",\"name\":\"name%d\","
			"\"pid\":1,\"tid\":%d,\"ts\":%d.000,\"dur\":1.000},\n"
			"{\"ph\":\"s\",\"id\":%d,\"cat\":\"ac2g\",\"name\":"
			"\"ac2g\",\"pid\":1,\"tid\":%d,\"ts\":%d.500},\n"
			"{\"ph\":\"f\",\"id\":%d,\"cat\":\"ac2g\",\"name\":"
			"\"ac2g\",\"pid\":2,\"tid\":%d,\"ts\":%d.000,"
			"\"bp\":\"e\"}", i ? ",\n" : "", i, i, i, i, i, i, i,
			i, i + 1);
	fputs("\n],\n\"deviceProperties\": [],\n\"tprof\": {\"version\": "
	      "\"0.1\", \"host\": \"h\", \"pid\": 1}\n}\n", f);
	return ferror(f) ? -1 : 0;
}

static void test_many_keys(void)
{
	char *out = NULL, want[128];
	size_t len;
	FILE *f, *o;
	int fd, r;

	snprintf(path, sizeof(path), "/tmp/tprof-check-scale.XXXXXX");
	fd = mkstemp(path);
	f = fd < 0 ? NULL : fdopen(fd, "w");
	if (!f || write_trace(f, N) || fclose(f)) {
		TP_CHECK("check 100k keys: trace written", 0, "%s", path);
		return;
	}
	signal(SIGALRM, on_alarm);
	alarm(LIMIT_S);
	o = open_memstream(&out, &len);
	r = tp_check_file(path, 0, o);
	fclose(o);
	alarm(0);
	snprintf(want, sizeof(want), "%s: ok (%d events)\n", path, 3 * N);
	TP_CHECK("check 100k names, tracks and flows", r == 0 &&
		 !strcmp(out, want), "rc %d, output:\n%.2000s", r, out);
	free(out);
	unlink(path);
}

/* The same flows without their ends: every one of the 100k is still
 * counted, past the table's first size. */
static void test_many_unmatched(void)
{
	char *out = NULL;
	size_t len;
	FILE *f, *o;
	int fd, i, r;

	snprintf(path, sizeof(path), "/tmp/tprof-check-scale.XXXXXX");
	fd = mkstemp(path);
	f = fd < 0 ? NULL : fdopen(fd, "w");
	if (!f) {
		TP_CHECK("check 100k unmatched flows: trace written", 0, "%s",
			 path);
		return;
	}
	fputs("{\"schemaVersion\": 1, \"traceName\": \"tprof-rank0\",\n"
	      "\"displayTimeUnit\": \"ms\",\n"
	      "\"baseTimeNanoseconds\": 1700000000000000000,\n"
	      "\"distributedInfo\": {\"rank\": 0, \"world_size\": 1},\n"
	      "\"traceEvents\": [\n", f);
	for (i = 0; i < N; i++)
		fprintf(f, "%s{\"ph\":\"s\",\"id\":%d,\"cat\":\"ac2g\","
			"\"name\":\"ac2g\",\"pid\":1,\"tid\":1,\"ts\":%d.000}",
			i ? ",\n" : "", i, i);
	fputs("\n],\n\"deviceProperties\": [],\n\"tprof\": {}\n}\n", f);
	fclose(f);
	alarm(LIMIT_S);
	o = open_memstream(&out, &len);
	r = tp_check_file(path, 0, o);
	fclose(o);
	alarm(0);
	TP_CHECK("check 100k unmatched flows", r == N &&
		 strstr(out, "flow id=99999 cat=\"ac2g\"") == NULL &&
		 strstr(out, "99980 more problems not shown (100000 in total)"),
		 "rc %d, output:\n%.3000s", r, out);
	free(out);
	unlink(path);
}

int main(void)
{
#ifdef TP_TEST_SANITIZED
	printf("SKIP check 100k keys: an answer within 30 s: a sanitized "
	       "build, given " STR(LIMIT_S) " s\n");
#endif
	test_many_keys();
	test_many_unmatched();
	return TP_TEST_DONE();
}
