/* tprof recover: a recovered trace's summary, computed from it into
 * summaries/ as the library names its own. */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "encode/json.h"
#include "files/atomic_file.h"
#include "cli/read/trace_summary.h"
#include "recover_summary.h"

static int ends_with(const char *s, const char *suf)
{
	size_t n = strlen(s), k = strlen(suf);

	return n >= k && !strcmp(s + n - k, suf);
}

/* summaries/<base>.summary.json, computed from the recovered trace. */
void tp_recover_summary(const char *dir, const char *final_name,
			const char *final)
{
	char err[256], name[1024];
	struct tp_buf b = { 0 };
	size_t n = strlen(final_name);
	int dfd;

	/* The trace's stem, as the library names its summaries; a Perfetto
	 * trace is read through gzread's Perfetto reader. */
	n -= ends_with(final_name, ".pftrace.gz") ? strlen(".pftrace.gz") :
		strlen(".trace.json.gz");
	if (tp_trace_summary(final, &b, err, sizeof(err)) < 0 || b.oom) {
		fprintf(stderr, "tprof: warning: %s: no summary: %s\n", final,
			err);
		goto out;
	}
	snprintf(name, sizeof(name), "%.*s.summary.json", (int)n, final_name);
	dfd = tp_open_subdir(dir, "summaries");
	if (dfd < 0 || tp_write_file_atomic_at(dfd, name, b.p, b.len) < 0)
		fprintf(stderr, "tprof: warning: %s/summaries/%s: %s\n", dir,
			name, strerror(errno));
	if (dfd >= 0)
		close(dfd);
out:
	tp_buf_free(&b);
}

