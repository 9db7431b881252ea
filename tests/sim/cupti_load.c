/* A loaded machine, made repeatable (part of libcupti.so).
 *
 * On a machine whose CPUs are busy (data-loader workers, other jobs), a
 * thread can lose its CPU anywhere, inside cuptiGetTimestamp too: just
 * before the call reads its clock, or just after, before it returns.
 * A client that pairs CUPTI's clock with its own by reading its clock
 * around the call then sees the call take that long, and a single pair
 * can be off by half of it. Real busy threads make that rare and
 * unrepeatable; SIM_PREEMPT_PCT=P makes P% of the calls (a fixed-seed
 * sequence per thread) lose SIM_PREEMPT_NS (10 us by default) of CPU,
 * before or after the read in turn, spent spinning so that its length is
 * exact.
 */
#define _GNU_SOURCE
#include <stdint.h>
#include <stdlib.h>

#include "sim.h"
#include "cupti_load.h"

static __thread uint64_t rng;

static unsigned pct(void)
{
	static int v = -1;

	if (v < 0) {
		const char *e = getenv("SIM_PREEMPT_PCT");

		v = e ? atoi(e) : 0;
	}
	return (unsigned)v;
}

static uint64_t lost_ns(void)
{
	const char *e = getenv("SIM_PREEMPT_NS");

	return e ? strtoull(e, NULL, 10) : 10000;
}

/* xorshift64, seeded by the thread: repeatable, independent threads. */
static uint64_t next(void)
{
	if (!rng)
		rng = 0x9e3779b97f4a7c15ull ^ (uint64_t)sim_tid();
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return rng;
}

void sim_preempt(int at)
{
	uint64_t r, until;

	if (!pct())
		return;
	r = next();
	if (r % 100 >= pct() || (int)(r >> 32 & 1) != at)
		return;
	until = sim_raw_now() + lost_ns();
	while (sim_raw_now() < until)
		;
}
