/* config/: TPROF_* configuration, parsed and checked; on util/ only. */
/* TPROF_* variables that decide when events are kept: the step schedule
 * (as torch.profiler.schedule), where steps come from, and the gates
 * (time, cudaProfilerApi, signal). */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "config_capture.h"

#define MAX_STEPS 1000000000L
#define MAX_SECONDS 1e7

struct count_var {
	const char *name;
	long min;
	size_t off;
};

static const struct count_var counts[] = {
	{ "TPROF_SKIP_FIRST", 0, offsetof(struct tp_capture_config, skip_first) },
	{ "TPROF_WAIT", 0, offsetof(struct tp_capture_config, wait) },
	{ "TPROF_WARMUP", 0, offsetof(struct tp_capture_config, warmup) },
	{ "TPROF_ACTIVE", 1, offsetof(struct tp_capture_config, active) },
	{ "TPROF_REPEAT", 0, offsetof(struct tp_capture_config, repeat) },
};

static int parse_count(const char *s, long min, unsigned *out)
{
	long v;

	if (tp_parse_uint(s, min, MAX_STEPS, &v) < 0)
		return -1;
	*out = (unsigned)v;
	return 0;
}

static int parse_schedule(struct tp_capture_config *c, tp_getenv_fn get,
			  char *err, size_t errlen)
{
	const char *v, *orphan = NULL;
	unsigned i;

	for (i = 0; i < sizeof(counts) / sizeof(counts[0]); i++) {
		v = get(counts[i].name);
		if (!v)
			continue;
		if (parse_count(v, counts[i].min,
				(unsigned *)((char *)c + counts[i].off)) < 0) {
			snprintf(err, errlen, "%s='%s' is not valid: expected "
				 "a whole number of steps from %ld",
				 counts[i].name, v, counts[i].min);
			return -1;
		}
		if (counts[i].off == offsetof(struct tp_capture_config, active))
			c->schedule = 1;
		else if (!orphan)
			orphan = counts[i].name;
	}
	if (orphan && !c->schedule) {
		snprintf(err, errlen, "%s is set but TPROF_ACTIVE is not: set "
			 "TPROF_ACTIVE to the number of steps to keep per "
			 "cycle (or unset %s to trace the whole run)", orphan,
			 orphan);
		return -1;
	}
	return 0;
}

/* Seconds as nsys takes them ("5", "2.5"), or with a unit ("500ms"). */
int tp_parse_seconds(const char *s, uint64_t *out)
{
	char *end;
	double v;

	if (!*s || *s == '-' || *s == '+' || *s == ' ')
		return -1;
	errno = 0;
	v = strtod(s, &end);
	/* !(v >= 0): nan, which no comparison lets through otherwise */
	if (errno || end == s || !(v >= 0) || v > MAX_SECONDS)
		return -1;
	if (!*end) {
		*out = (uint64_t)(v * 1e9 + 0.5);
		return 0;
	}
	return tp_parse_duration_ns(s, out);
}

static int parse_time(struct tp_capture_config *c, tp_getenv_fn get,
		      char *err, size_t errlen)
{
	const char *v = get("TPROF_DELAY");

	if (v && tp_parse_seconds(v, &c->delay_ns) < 0) {
		snprintf(err, errlen, "TPROF_DELAY='%s' is not valid: expected "
			 "seconds (such as 10 or 2.5, or 500ms)", v);
		return -1;
	}
	v = get("TPROF_DURATION");
	if (v && (tp_parse_seconds(v, &c->duration_ns) < 0 || !c->duration_ns)) {
		snprintf(err, errlen, "TPROF_DURATION='%s' is not valid: "
			 "expected seconds greater than 0 (such as 30 or 2.5, "
			 "or 500ms)", v);
		return -1;
	}
	return 0;
}

static const struct {
	const char *name;
	int sig;
} signals[] = { { "USR1", SIGUSR1 }, { "USR2", SIGUSR2 } };

const char *tp_signal_name(int sig)
{
	unsigned i;

	for (i = 0; i < sizeof(signals) / sizeof(signals[0]); i++)
		if (signals[i].sig == sig)
			return signals[i].name;
	return "?";
}

int tp_parse_signal(const char *s, int *out)
{
	unsigned i;

	if (!strncmp(s, "SIG", 3))
		s += 3;
	for (i = 0; i < sizeof(signals) / sizeof(signals[0]); i++) {
		if (!strcmp(s, signals[i].name)) {
			*out = signals[i].sig;
			return 0;
		}
	}
	return -1;
}

static int parse_gates(struct tp_capture_config *c, tp_getenv_fn get,
		       char *err, size_t errlen)
{
	const char *v = get("TPROF_CAPTURE");

	if (v && strcmp(v, "cudaProfilerApi")) {
		snprintf(err, errlen, "TPROF_CAPTURE='%s' is not valid: "
			 "expected cudaProfilerApi (record only between "
			 "cudaProfilerStart and cudaProfilerStop)", v);
		return -1;
	}
	c->profiler_api = v != NULL;
	v = get("TPROF_SIGNAL");
	if (v && tp_parse_signal(v, &c->signal) < 0) {
		snprintf(err, errlen, "TPROF_SIGNAL='%s' is not valid: "
			 "expected USR1 or USR2 (the signal that toggles "
			 "recording)", v);
		return -1;
	}
	v = get("TPROF_NSYS");
	if (v && strcmp(v, "0") && strcmp(v, "1")) {
		snprintf(err, errlen, "TPROF_NSYS='%s' is not valid: expected "
			 "1 (mark kept steps for nsys) or 0", v);
		return -1;
	}
	c->nsys = v && !strcmp(v, "1");
	return 0;
}

int tp_config_parse_capture(struct tp_capture_config *c, tp_getenv_fn get,
			    char *err, size_t errlen)
{
	const char *v;

	if (parse_schedule(c, get, err, errlen) < 0 ||
	    parse_time(c, get, err, errlen) < 0 ||
	    parse_gates(c, get, err, errlen) < 0)
		return -1;
	v = get("TPROF_STEP_NVTX");
	if (!v)
		return 0;
	if (!*v || strlen(v) >= sizeof(c->step_nvtx)) {
		snprintf(err, errlen, "TPROF_STEP_NVTX='%.200s' is not valid: "
			 "expected the name of an NVTX range or mark, 1 to 255 "
			 "characters", v);
		return -1;
	}
	strcpy(c->step_nvtx, v);
	return 0;
}
