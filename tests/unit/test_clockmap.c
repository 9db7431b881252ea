/* CUPTI's own clock mapped to the trace's (cupti/clockmap.c): a stand-in
 * cuptiGetTimestamp whose clock runs at a rate of its own (NTP slewing
 * CLOCK_REALTIME) and whose reads are sometimes preempted; the line
 * through the samples maps every time within the pair's precision, a
 * batch whose every read was preempted is rejected and counted, and the
 * mapping stays as it was once frozen. */
#include <stdlib.h>
#include <time.h>

#include "cupti/clockmap.h"
#include "cupti/cupti.h"
#include "record/clock.h"
#include "tp_test.h"

#define OFF 1234567ll		/* CUPTI's clock minus Unix time, ns */
#define SLOPE 50e-6		/* 50 ppm */

static struct tp_clock_map map;
static uint64_t u0;		/* Unix ns where the slope starts */
static unsigned calls, preempt_every, preempt_all;

static uint64_t unix_now(void)
{
	return tp_clock_to_unix(&map, tp_ticks());
}

static int64_t cupti_of(uint64_t u)
{
	return (int64_t)u + OFF + (int64_t)((double)(int64_t)(u - u0) * SLOPE);
}

/* The Unix time a CUPTI time stands for (the inverse of cupti_of). */
static int64_t unix_of(int64_t c)
{
	return (int64_t)u0 + (int64_t)((double)(c - OFF - (int64_t)u0) /
				       (1.0 + SLOPE));
}

static void spin_ns(uint64_t ns)
{
	uint64_t until = tp_clock_ns(CLOCK_MONOTONIC_RAW) + ns;

	while (tp_clock_ns(CLOCK_MONOTONIC_RAW) < until)
		;
}

/* A preempted call loses 20 us after its read. */
static CUptiResult CUPTIAPI fake_timestamp(uint64_t *t)
{
	*t = (uint64_t)cupti_of(unix_now());
	calls++;
	if (preempt_all || (preempt_every && calls % preempt_every == 0))
		spin_ns(20000);
	return CUPTI_SUCCESS;
}

static void nap_ms(long ms)
{
	struct timespec ts = { 0, ms * 1000000 };

	nanosleep(&ts, NULL);
}

/* The worst error of the line over CUPTI times from the first sample
 * to now, ns. */
static int64_t worst_error(uint64_t from)
{
	struct tp_cclock_line l;
	int64_t worst = 0, c, hi = cupti_of(unix_now());

	tp_cclock_line(&map, &l);
	for (c = cupti_of(from); c <= hi; c += 1000000) {
		int64_t e = tp_cclock_unix(&l, (uint64_t)c) - unix_of(c);

		if (llabs(e) > worst)
			worst = llabs(e);
	}
	return worst;
}

int main(void)
{
	struct tp_clock_point a, b;
	struct tp_cclock_stats st;
	uint64_t from;
	int i;

	tp_clock_init();
	a = tp_clock_sample();
	nap_ms(10);
	b = tp_clock_sample();
	tp_clock_map_from(&map, a, b);
	tp_cupti.get_timestamp = fake_timestamp;
	u0 = from = unix_now();

	/* Every third read preempted: the narrowest of 8 is a clean one. */
	preempt_every = 3;
	for (i = 0; i < 12; i++) {
		tp_cclock_sample();
		nap_ms(20);
	}
	tp_cclock_sample();
	TP_CHECK("clockmap: a 50 ppm clock over 0.24 s, reads preempted, "
		 "mapped within 300 ns", worst_error(from) <= 300, "%lld ns",
		 (long long)worst_error(from));

	/* A batch whose every read was preempted. */
	preempt_all = 1;
	TP_CHECK_INT("clockmap: a sample whose every read was preempted is "
		     "not used", tp_cclock_sample(), -1);
	preempt_all = 0;
	tp_cclock_get_stats(&map, &st);
	TP_CHECK("clockmap: ... and counted; the line's brackets stay narrow",
		 st.samples == 14 && st.rejected == 1 &&
		 st.widest_used_ns < 5000, "%llu samples, %llu rejected, "
		 "widest %llu ns", (unsigned long long)st.samples,
		 (unsigned long long)st.rejected,
		 (unsigned long long)st.widest_used_ns);
	TP_CHECK("clockmap: the mapping unmoved by it", worst_error(from) <=
		 300, "%lld ns", (long long)worst_error(from));

	/* Frozen: no more samples, the same line. */
	tp_cclock_freeze();
	TP_CHECK_INT("clockmap: frozen, no sample is taken",
		     tp_cclock_sample(), -1);
	tp_cclock_get_stats(&map, &st);
	TP_CHECK_INT("clockmap: frozen, the count stays", (int)st.samples, 14);
	return TP_TEST_DONE();
}
