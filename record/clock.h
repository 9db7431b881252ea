/* record/: the recording core: records, per-thread rings, threads,
 * drops, the clock, the rings file; on files/ .. util/. */
/* One clock for every event.
 *
 * The hot path reads raw ticks: the TSC where the kernel itself uses it as
 * its clocksource (so it is invariant and synchronised across cores), else
 * CLOCK_MONOTONIC_RAW nanoseconds. The writer thread, never the recording
 * thread, converts ticks to nanoseconds with ONE linear function per
 * process, fixed at its first use: a single monotonic function keeps every
 * nesting intact, which a piecewise re-calibration would not.
 *
 * CLOCK_MONOTONIC_RAW is the kernel's own linear function of the TSC, so
 * the mapping loses nothing there; the offset to Unix time is taken at
 * start, and the drift against CLOCK_REALTIME at the end is reported.
 */
#ifndef TP_CLOCK_H
#define TP_CLOCK_H

#include <stdint.h>
#include <time.h>

#if defined(__x86_64__)
#include <x86intrin.h>
#endif

extern int tp_clock_use_tsc;

static inline uint64_t tp_clock_ns(clockid_t id)
{
	struct timespec ts;

	clock_gettime(id, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static inline uint64_t tp_ticks(void)
{
#if defined(__x86_64__)
	if (__builtin_expect(tp_clock_use_tsc, 1))
		return __rdtsc();
#endif
	return tp_clock_ns(CLOCK_MONOTONIC_RAW);
}

/* ticks -> ns: ns = base_ns + round((ticks - base_ticks) * mult / 2^48).
 * 48 fractional bits keep an hour of 3 GHz ticks exact to well under a
 * nanosecond; the product fits in 128 bits for days of ticks. */
#define TP_CLOCK_SHIFT 48
struct tp_clock_map {
	uint64_t base_ticks;
	uint64_t base_ns;	/* CLOCK_MONOTONIC_RAW at base_ticks */
	uint64_t mult;		/* ns per tick, 16.48 fixed point */
	int64_t unix_offset;	/* CLOCK_REALTIME - CLOCK_MONOTONIC_RAW */
};

/* The same instant read on the tick clock and CLOCK_MONOTONIC_RAW. */
struct tp_clock_point {
	uint64_t ticks;
	uint64_t raw_ns;
	uint64_t unix_ns;
};

void tp_clock_init(void);
struct tp_clock_point tp_clock_sample(void);
void tp_clock_map_from(struct tp_clock_map *m, struct tp_clock_point a,
		       struct tp_clock_point b);

static inline uint64_t tp_clock_to_ns(const struct tp_clock_map *m,
				      uint64_t ticks)
{
	const unsigned __int128 half = (unsigned __int128)1 << (TP_CLOCK_SHIFT - 1);
	unsigned __int128 d;

	if (ticks < m->base_ticks) {
		d = (unsigned __int128)(m->base_ticks - ticks) * m->mult;
		return m->base_ns - (uint64_t)((d + half) >> TP_CLOCK_SHIFT);
	}
	d = (unsigned __int128)(ticks - m->base_ticks) * m->mult;
	return m->base_ns + (uint64_t)((d + half) >> TP_CLOCK_SHIFT);
}

static inline uint64_t tp_clock_to_unix(const struct tp_clock_map *m,
					uint64_t ticks)
{
	return tp_clock_to_ns(m, ticks) + (uint64_t)m->unix_offset;
}

#endif
