/* config/: TPROF_* configuration, parsed and checked; on util/ only. */
/* The TPROF_* variables tprof knows, so that a typo (TPROF_ACTVE=3) is
 * said once instead of silently ignored. */
#include <stdio.h>
#include <string.h>

#include "config.h"

static const char *const known[] = {
	"TPROF_ACTIVE", "TPROF_BACKTRACE", "TPROF_BACKTRACE_DEPTH",
	"TPROF_BUFFER_MB", "TPROF_CAPTURE", "TPROF_CUPTI_BUFFER_MB",
	"TPROF_CUPTI_LIB", "TPROF_DELAY", "TPROF_DISABLE", "TPROF_DUMP_SIGNAL",
	"TPROF_DURATION", "TPROF_FLIGHT", "TPROF_FLIGHT_DUMP_AT_EXIT",
	"TPROF_FLIGHT_MB", "TPROF_FORMAT", "TPROF_GPU_METRICS_HZ",
	"TPROF_GZIP_LEVEL", "TPROF_HANG", "TPROF_LOG", "TPROF_NAME", "TPROF_NSYS",
	"TPROF_OSRT_MIN_US", "TPROF_OUTPUT_DIR", "TPROF_PYTHON_EXT", "TPROF_RANK",
	"TPROF_REPEAT", "TPROF_RING_FILE", "TPROF_RUN_ID", "TPROF_SAMPLE_HZ",
	"TPROF_SAMPLER", "TPROF_SIGNAL", "TPROF_SKIP_FIRST", "TPROF_SPILL_MB",
	"TPROF_STEP_NVTX", "TPROF_SUMMARY", "TPROF_TRACE",
	"TPROF_WAIT", "TPROF_WARMUP",
	/* tprof-run's, the demo's and the tests' own */
	"TPROF_LIB", "TPROF_DEMO_DIR", "TPROF_STRESS", "TPROF_TEST_BUILD",
	NULL,
};

/* Edit distance, for "did you mean". */
static unsigned distance(const char *a, size_t la, const char *b)
{
	unsigned row[64], prev, cur, i, j;
	size_t lb = strlen(b);

	if (la >= 63 || lb >= 63)
		return 99;
	for (j = 0; j <= lb; j++)
		row[j] = j;
	for (i = 1; i <= la; i++) {
		prev = row[0];
		row[0] = i;
		for (j = 1; j <= lb; j++) {
			cur = row[j];
			row[j] = a[i - 1] == b[j - 1] ? prev :
				 1 + (prev < row[j - 1] ?
				      (prev < row[j] ? prev : row[j]) :
				      (row[j - 1] < row[j] ? row[j - 1] : row[j]));
			prev = cur;
		}
	}
	return row[lb];
}

static int is_known(const char *name, size_t len)
{
	unsigned i;

	for (i = 0; known[i]; i++)
		if (strlen(known[i]) == len && !strncmp(known[i], name, len))
			return 1;
	return 0;
}

int tp_config_unknown(char *const *envp, char *msg, size_t len)
{
	const char *best = NULL;
	unsigned i, d, best_d = 4;
	size_t n;

	for (; envp && *envp; envp++) {
		if (strncmp(*envp, "TPROF_", 6))
			continue;
		n = strcspn(*envp, "=");
		if (is_known(*envp, n))
			continue;
		for (i = 0; known[i]; i++) {
			d = distance(*envp, n, known[i]);
			if (d < best_d) {
				best_d = d;
				best = known[i];
			}
		}
		if (best)
			snprintf(msg, len, "%.*s is not a tprof variable and is "
				 "ignored: did you mean %s?", (int)n, *envp,
				 best);
		else
			snprintf(msg, len, "%.*s is not a tprof variable and is "
				 "ignored (docs/reference/environment.md lists "
				 "them)", (int)n, *envp);
		return 1;
	}
	return 0;
}
