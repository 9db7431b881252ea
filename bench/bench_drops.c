/* Drops against the offered rate: one thread makes hooked calls paced by
 * the clock at a fixed rate into the default ring, with the writer woken
 * by the ring's fill mark. bench.sh runs it under the
 * preload at several rates and reads the trace's own account ("tprof:
 * wrote F (N events, D dropped, ...)") for what was dropped.
 *
 * usage: bench_drops RATE N
 *
 * RATE calls per second (0: unpaced, as fast as the thread goes), N calls
 * of cudaStreamSynchronize(0), which cudart fails at once without a GPU.
 * A thread that falls behind by more than a millisecond (preempted) does
 * not catch up in a burst: the schedule restarts from the clock, so the
 * offered rate is never above RATE for long, and the achieved rate says
 * what was really offered.
 *
 * Prints "offered R", "achieved R" (calls per second), "wall_ns W",
 * "writer_cpu_ns C" (CPU time of every other thread of the process during
 * the loop: the writer's) and "writer_wait_ns D" (the writer's time
 * runnable but not running, from its schedstat; -1 when not found).
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <cuda_runtime_api.h>

#include "bench_time.h"

static unsigned long long cpu_ns(clockid_t id)
{
	struct timespec ts;

	clock_gettime(id, &ts);
	return (unsigned long long)ts.tv_sec * 1000000000ull +
	       (unsigned long long)ts.tv_nsec;
}

/* The run-queue wait of the thread named tprof-writer, or -1. */
static long long writer_wait_ns(void)
{
	char path[300], name[64];
	long long run, wait = -1;
	struct dirent *d;
	DIR *dir = opendir("/proc/self/task");
	FILE *f;

	if (!dir)
		return -1;
	while ((d = readdir(dir)) && wait < 0) {
		if (d->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "/proc/self/task/%s/comm",
			 d->d_name);
		f = fopen(path, "r");
		if (!f)
			continue;
		if (!fgets(name, sizeof(name), f))
			name[0] = 0;
		fclose(f);
		if (strncmp(name, "tprof-writer", 12))
			continue;
		snprintf(path, sizeof(path), "/proc/self/task/%s/schedstat",
			 d->d_name);
		f = fopen(path, "r");
		if (!f)
			continue;
		if (fscanf(f, "%lld %lld", &run, &wait) != 2)
			wait = -1;
		fclose(f);
	}
	closedir(dir);
	return wait;
}

int main(int argc, char **argv)
{
	struct timespec settle = { 0, 200000000L };
	unsigned long long t0, t1, next, step, p0, p1, s0, s1;
	long long w0, w1;
	unsigned long n, i;
	double rate;

	if (argc != 3) {
		fprintf(stderr, "usage: bench_drops RATE N\n");
		return 2;
	}
	rate = strtod(argv[1], NULL);
	n = strtoul(argv[2], NULL, 10);
	step = rate > 0 ? (unsigned long long)(1e9 / rate) : 0;
	/* The first call starts tprof and its writer, which measures the
	 * clock's tick rate in its first 100 ms: the loop comes after. */
	cudaStreamSynchronize(0);
	nanosleep(&settle, NULL);
	w0 = writer_wait_ns();
	p0 = cpu_ns(CLOCK_PROCESS_CPUTIME_ID);
	s0 = cpu_ns(CLOCK_THREAD_CPUTIME_ID);
	t0 = now_ns();
	next = t0;
	for (i = 0; i < n; i++) {
		if (step) {
			unsigned long long t;

			while ((t = now_ns()) < next)
				;
			/* Behind by more than a millisecond (preempted):
			 * start again from now rather than catch up at
			 * full speed; shorter hiccups are made up. */
			next = (t > next + 1000000 ? t : next) + step;
		}
		cudaStreamSynchronize(0);
	}
	t1 = now_ns();
	s1 = cpu_ns(CLOCK_THREAD_CPUTIME_ID);
	p1 = cpu_ns(CLOCK_PROCESS_CPUTIME_ID);
	w1 = writer_wait_ns();
	printf("offered %.0f\n", rate);
	printf("achieved %.0f\n", (double)n * 1e9 / (double)(t1 - t0));
	printf("wall_ns %llu\n", t1 - t0);
	printf("writer_cpu_ns %llu\n", (p1 - p0) - (s1 - s0));
	printf("writer_wait_ns %lld\n", w0 < 0 || w1 < 0 ? -1 : w1 - w0);
	printf("calls %lu\n", n + 1);
	return 0;
}
