/* record/: the recording core: records, per-thread rings, threads,
 * drops, the clock, the rings file; on files/ .. util/. */
#include <stdio.h>
#include <string.h>

#include "clock.h"

int tp_clock_use_tsc;

/* The TSC is only as good as the kernel's trust in it: it picks "tsc" as
 * clocksource only when it is invariant and synchronised across CPUs. */
static int kernel_uses_tsc(void)
{
	char buf[32] = "";
	FILE *f;

	f = fopen("/sys/devices/system/clocksource/clocksource0/"
		  "current_clocksource", "re");
	if (!f)
		return 0;
	if (!fgets(buf, sizeof(buf), f))
		buf[0] = '\0';
	fclose(f);
	return strncmp(buf, "tsc", 3) == 0 && (buf[3] == '\n' || !buf[3]);
}

void tp_clock_init(void)
{
#if defined(__x86_64__)
	tp_clock_use_tsc = kernel_uses_tsc();
#endif
}

/* Bracket a clock_gettime between two tick reads and keep the tightest of
 * a few tries, so a preemption in the middle does not skew the point. */
struct tp_clock_point tp_clock_sample(void)
{
	struct tp_clock_point best = { 0, 0, 0 };
	uint64_t best_gap = UINT64_MAX;
	int i;

	for (i = 0; i < 5; i++) {
		uint64_t t0 = tp_ticks();
		uint64_t raw = tp_clock_ns(CLOCK_MONOTONIC_RAW);
		uint64_t real = tp_clock_ns(CLOCK_REALTIME);
		uint64_t t1 = tp_ticks();
		uint64_t gap = t1 - t0;

		if (gap >= best_gap)
			continue;
		best_gap = gap;
		best.ticks = t0 + gap / 2;
		best.raw_ns = raw;
		best.unix_ns = real;
	}
	return best;
}

void tp_clock_map_from(struct tp_clock_map *m, struct tp_clock_point a,
		       struct tp_clock_point b)
{
	uint64_t dt = b.ticks - a.ticks;
	uint64_t dn = b.raw_ns - a.raw_ns;

	m->base_ticks = a.ticks;
	m->base_ns = a.raw_ns;
	m->unix_offset = (int64_t)(a.unix_ns - a.raw_ns);
	if (!tp_clock_use_tsc || b.ticks <= a.ticks || b.raw_ns <= a.raw_ns) {
		m->mult = 1ull << TP_CLOCK_SHIFT;
		return;
	}
	m->mult = (uint64_t)((((unsigned __int128)dn << TP_CLOCK_SHIFT) +
			      dt / 2) / dt);
}
