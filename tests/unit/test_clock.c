/* Clock conversion: the tick mapping is linear, monotonic, exact where it
 * can be, and agrees with CLOCK_MONOTONIC_RAW on this machine. */
#include <stdlib.h>
#include <unistd.h>

#include "record/clock.h"
#include "session/session.h"
#include "tp_test.h"

static void test_synthetic(void)
{
	struct tp_clock_point a = { 1000000, 5000000000ull, 1700000000000000000ull };
	struct tp_clock_point b = { 3001000000ull, 6000000000ull, 0 };
	struct tp_clock_map m;
	uint64_t prev = 0, t;
	int mono = 1;
	int saved = tp_clock_use_tsc;

	tp_clock_use_tsc = 1;	/* ticks here are 3 per ns */
	tp_clock_map_from(&m, a, b);
	TP_CHECK_INT("clock: anchor maps to itself", tp_clock_to_ns(&m, a.ticks),
		     5000000000ull);
	TP_CHECK_INT("clock: second point maps to itself",
		     tp_clock_to_ns(&m, b.ticks), 6000000000ull);
	TP_CHECK_INT("clock: 3 GHz ticks halfway",
		     tp_clock_to_ns(&m, a.ticks + 1500000000ull), 5500000000ull);
	TP_CHECK_INT("clock: extrapolation past the last point",
		     tp_clock_to_ns(&m, b.ticks + 3000000000ull),
		     7000000000ull);
	TP_CHECK_INT("clock: before the anchor",
		     tp_clock_to_ns(&m, a.ticks - 300), 5000000000ull - 100);
	TP_CHECK_INT("clock: Unix offset applied",
		     tp_clock_to_unix(&m, a.ticks), 1700000000000000000ull);
	for (t = a.ticks; t < a.ticks + 10000; t++) {
		uint64_t ns = tp_clock_to_ns(&m, t);

		if (ns < prev)
			mono = 0;
		prev = ns;
	}
	TP_CHECK("clock: mapping is monotonic tick by tick", mono,
		 "went backwards");
	/* An hour of 3 GHz ticks does not overflow. */
	TP_CHECK_INT("clock: an hour later",
		     tp_clock_to_ns(&m, a.ticks + 3600ull * 3000000000ull),
		     5000000000ull + 3600ull * 1000000000ull);
	tp_clock_use_tsc = 0;
	tp_clock_map_from(&m, a, b);
	TP_CHECK_INT("clock: without a TSC ticks are ns",
		     tp_clock_to_ns(&m, a.ticks + 12345), 5000000000ull + 12345);
	tp_clock_use_tsc = saved;
}

static void test_real(void)
{
	struct tp_clock_point a, b, c;
	struct tp_clock_map m;
	int64_t err;

	tp_clock_init();
	a = tp_clock_sample();
	usleep(50000);
	b = tp_clock_sample();
	tp_clock_map_from(&m, a, b);
	usleep(50000);
	c = tp_clock_sample();
	err = (int64_t)tp_clock_to_ns(&m, c.ticks) - (int64_t)c.raw_ns;
	TP_CHECK("clock: real ticks track CLOCK_MONOTONIC_RAW within 20 us "
		 "50 ms past calibration", llabs(err) < 20000,
		 "error %lld ns", (long long)err);
	err = (int64_t)tp_clock_to_unix(&m, c.ticks) - (int64_t)c.unix_ns;
	TP_CHECK("clock: mapped Unix time within 1 ms of CLOCK_REALTIME",
		 llabs(err) < 1000000, "error %lld ns", (long long)err);
}

static void test_base(void)
{
	uint64_t t = 1763700123456789012ull;
	int64_t base = tp_session_base_ns(t);

	TP_CHECK_INT("clock: base is floored to 10^14 ns", base,
		     1763700000000000000ll - 1763700000000000000ll %
		     100000000000000ll);
	TP_CHECK("clock: ts relative to base stays exact in a double",
		 (double)(t - (uint64_t)base) < 9007199254740992.0, "too big");
	TP_CHECK_INT("clock: two ranks a minute apart share the base",
		     tp_session_base_ns(t + 60000000000ull), base);
}

int main(void)
{
	test_synthetic();
	test_real();
	test_base();
	return TP_TEST_DONE();
}
