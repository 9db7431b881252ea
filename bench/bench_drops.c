/* Drops against the offered load: one thread makes hooked calls, paced
 * by the clock at a fixed rate, or unpaced in chunks with a pause
 * between them, into the default ring and spill pool, with the writer
 * woken by the ring's fill mark. bench.sh runs it under the preload and
 * reads the trace's own account ("tprof: wrote F (N events, D dropped,
 * ...)") for what was dropped.
 *
 * usage: bench_drops RATE N [CHUNK GAP_MS]
 *
 * RATE calls per second (0: unpaced, as fast as the thread goes), N calls
 * of cudaStreamSynchronize(0), which cudart fails at once without a GPU.
 * With CHUNK, the calls come unpaced CHUNK at a time, GAP_MS apart (RATE
 * is then ignored). A thread that falls behind by more than a
 * millisecond (preempted) does not catch up in a burst: the schedule
 * restarts from the clock, so the offered rate is never above RATE for
 * long, and the achieved rate says what was really offered.
 *
 * After the loop it waits for the writer to have written what the loop
 * recorded (its run time stops growing), so that the writer's own
 * throughput on these records can be worked out from its busy time.
 *
 * Prints "offered R", "achieved R" (calls per second over the loop),
 * "wall_ns W" (the loop), "writer_cpu_ns C" (CPU time of every other
 * thread of the process during the loop: the writer's),
 * "writer_wait_ns D" (the writer's time runnable but not running, from
 * its schedstat; -1 when not found), "writer_busy_ns B" (the writer's
 * run time from the loop's start until it was done with it; -1 when not
 * found).
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <cuda_runtime_api.h>

#include "bench_time.h"

struct sched {
	long long run, wait;	/* ns; -1: unknown */
};

static unsigned long long clock_ns_of(clockid_t id)
{
	struct timespec ts;

	clock_gettime(id, &ts);
	return (unsigned long long)ts.tv_sec * 1000000000ull +
	       (unsigned long long)ts.tv_nsec;
}

/* The schedstat of the thread named tprof-writer. */
static struct sched writer_sched(void)
{
	struct sched s = { -1, -1 };
	char path[300], name[64];
	struct dirent *d;
	DIR *dir = opendir("/proc/self/task");
	FILE *f;

	if (!dir)
		return s;
	while ((d = readdir(dir)) && s.wait < 0) {
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
		if (fscanf(f, "%lld %lld", &s.run, &s.wait) != 2)
			s.run = s.wait = -1;
		fclose(f);
	}
	closedir(dir);
	return s;
}

/* The writer is done with what was recorded once, over 100 ms, its run
 * time grows by less than 1 ms (an idle writer's cycles cost
 * microseconds) and so does its time waiting for a core (a writer kept
 * off the cores by a busy machine has not settled); at most 60 s.
 * Returns its run time then. */
static long long writer_settled(void)
{
	struct sched a = writer_sched(), b;
	int i;

	for (i = 0; i < 600 && a.run >= 0; i++) {
		pause_ms(100);
		b = writer_sched();
		if (b.run - a.run < 1000000 && b.wait - a.wait < 1000000)
			return b.run;
		a = b;
	}
	return -1;
}

static void paced(double rate, unsigned long n)
{
	unsigned long long next = now_ns(), step = (unsigned long long)(1e9 /
								rate), t;
	unsigned long i;

	for (i = 0; i < n; i++) {
		while ((t = now_ns()) < next)
			;
		/* Behind by more than a millisecond (preempted): start
		 * again from now rather than catch up at full speed;
		 * shorter hiccups are made up. */
		next = (t > next + 1000000 ? t : next) + step;
		cudaStreamSynchronize(0);
	}
}

static void chunks(unsigned long n, unsigned long chunk, long gap_ms)
{
	unsigned long i;

	for (i = 0; i < n; i++) {
		if (i && i % chunk == 0)
			pause_ms(gap_ms);
		cudaStreamSynchronize(0);
	}
}

int main(int argc, char **argv)
{
	struct timespec settle = { 0, 200000000L };
	unsigned long long t0, t1, p0, p1, s0, s1;
	unsigned long n, chunk = 0, i;
	struct sched w0, w1;
	long long done;
	long gap_ms = 0;
	double rate;

	if (argc != 3 && argc != 5) {
		fprintf(stderr, "usage: bench_drops RATE N [CHUNK GAP_MS]\n");
		return 2;
	}
	rate = strtod(argv[1], NULL);
	n = strtoul(argv[2], NULL, 10);
	if (argc == 5) {
		chunk = strtoul(argv[3], NULL, 10);
		gap_ms = strtol(argv[4], NULL, 10);
	}
	/* The first call starts tprof and its writer, which measures the
	 * clock's tick rate in its first 100 ms: the loop comes after. */
	cudaStreamSynchronize(0);
	nanosleep(&settle, NULL);
	w0 = writer_sched();
	p0 = clock_ns_of(CLOCK_PROCESS_CPUTIME_ID);
	s0 = clock_ns_of(CLOCK_THREAD_CPUTIME_ID);
	t0 = now_ns();
	if (chunk)
		chunks(n, chunk, gap_ms);
	else if (rate > 0)
		paced(rate, n);
	else
		for (i = 0; i < n; i++)
			cudaStreamSynchronize(0);
	t1 = now_ns();
	s1 = clock_ns_of(CLOCK_THREAD_CPUTIME_ID);
	p1 = clock_ns_of(CLOCK_PROCESS_CPUTIME_ID);
	w1 = writer_sched();
	done = writer_settled();
	printf("offered %.0f\n", chunk ? 0 : rate);
	printf("achieved %.0f\n", (double)n * 1e9 / (double)(t1 - t0));
	printf("wall_ns %llu\n", t1 - t0);
	printf("writer_cpu_ns %llu\n", (p1 - p0) - (s1 - s0));
	printf("writer_wait_ns %lld\n", w0.wait < 0 || w1.wait < 0 ? -1 :
	       w1.wait - w0.wait);
	printf("writer_busy_ns %lld\n", done < 0 || w0.run < 0 ? -1 :
	       done - w0.run);
	printf("calls %lu\n", n + 1);
	return 0;
}
