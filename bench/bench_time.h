/* Timing helpers the call benchmarks share. */
#ifndef TP_BENCH_TIME_H
#define TP_BENCH_TIME_H

#include <time.h>

static inline unsigned long long now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (unsigned long long)ts.tv_sec * 1000000000ull +
	       (unsigned long long)ts.tv_nsec;
}

/* The calling thread's CPU time: the time it waited for a core left out
 * (the machine is shared). */
static inline unsigned long long cpu_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (unsigned long long)ts.tv_sec * 1000000000ull +
	       (unsigned long long)ts.tv_nsec;
}

/* Lets the writer drain what a chunk recorded. */
static inline void pause_ms(long ms)
{
	struct timespec ts = { ms / 1000, ms % 1000 * 1000000 };

	if (ms > 0)
		nanosleep(&ts, NULL);
}

#endif
