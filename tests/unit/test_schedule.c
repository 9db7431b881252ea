/* The schedule rule (torch.profiler.schedule's) and the capture
 * variables' parsing. */
#include <signal.h>
#include <stdlib.h>

#include "capture/capture.h"
#include "config/config.h"
#include "tp_test.h"

#define fake tp_test_env
#define get tp_test_getenv

static int parse(struct tp_capture_config *c, const char *a, const char *b,
		 const char *d)
{
	char err[512];

	fake[0] = a;
	fake[1] = b;
	fake[2] = d;
	fake[3] = NULL;
	memset(c, 0, sizeof(*c));
	return tp_config_parse_capture(c, get, err, sizeof(err));
}

/* The phases of steps 0..n-1 as a string: '.' off, 'w' warmup, 'A' active,
 * then '|' where the schedule has ended. */
static void phases(const struct tp_capture_config *c, int n, char *out)
{
	static const char ch[] = { '.', 'w', 'A' };
	int i, last;

	for (i = 0; i < n; i++) {
		out[i] = ch[tp_schedule_phase(c, i, &last)];
		if (last)
			out[i] = '|';
	}
	out[n] = '\0';
}

int main(void)
{
	struct tp_capture_config c;
	char s[64];

	parse(&c, NULL, NULL, NULL);
	phases(&c, 6, s);
	TP_CHECK_STR("schedule: none keeps every step", s, "AAAAAA");

	parse(&c, "TPROF_WAIT=1", "TPROF_WARMUP=1", "TPROF_ACTIVE=2");
	phases(&c, 12, s);
	TP_CHECK_STR("schedule: wait 1 warmup 1 active 2, repeat 0", s,
		     ".wAA.wAA.wAA");

	parse(&c, "TPROF_WAIT=1", "TPROF_ACTIVE=1", "TPROF_REPEAT=2");
	phases(&c, 7, s);
	TP_CHECK_STR("schedule: repeat 2 ends after two cycles", s, ".A.A|||");

	fake[3] = NULL;
	parse(&c, "TPROF_SKIP_FIRST=3", "TPROF_ACTIVE=2", "TPROF_REPEAT=1");
	phases(&c, 7, s);
	TP_CHECK_STR("schedule: skip_first, then one cycle", s, "...AA||");
	TP_CHECK_INT("schedule: TPROF_ACTIVE makes a schedule", c.schedule, 1);

	TP_CHECK_INT("config: TPROF_WAIT without TPROF_ACTIVE refused",
		     parse(&c, "TPROF_WAIT=1", NULL, NULL), -1);
	TP_CHECK_INT("config: TPROF_ACTIVE=0 refused",
		     parse(&c, "TPROF_ACTIVE=0", NULL, NULL), -1);
	TP_CHECK_INT("config: seconds", parse(&c, "TPROF_DELAY=2.5",
					      "TPROF_DURATION=500ms", NULL), 0);
	TP_CHECK_INT("config: TPROF_DELAY=2.5 in ns", (long long)c.delay_ns,
		     2500000000ll);
	TP_CHECK_INT("config: TPROF_DURATION=500ms in ns",
		     (long long)c.duration_ns, 500000000ll);
	TP_CHECK_INT("config: TPROF_DURATION=0 refused",
		     parse(&c, "TPROF_DURATION=0", NULL, NULL), -1);
	parse(&c, "TPROF_SIGNAL=SIGUSR1", "TPROF_CAPTURE=cudaProfilerApi",
	      "TPROF_NSYS=1");
	TP_CHECK_INT("config: SIGUSR1", c.signal, SIGUSR1);
	TP_CHECK_INT("config: cudaProfilerApi", c.profiler_api, 1);
	TP_CHECK_INT("config: TPROF_NSYS=1", c.nsys, 1);
	parse(&c, "TPROF_SIGNAL=USR2", "TPROF_STEP_NVTX=train step", NULL);
	TP_CHECK_INT("config: USR2", c.signal, SIGUSR2);
	TP_CHECK_STR("config: TPROF_STEP_NVTX kept as given", c.step_nvtx,
		     "train step");
	TP_CHECK_INT("config: TPROF_SIGNAL=INT refused",
		     parse(&c, "TPROF_SIGNAL=INT", NULL, NULL), -1);
	return TP_TEST_DONE();
}
