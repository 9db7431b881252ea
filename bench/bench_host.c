/* The host side's cost, run with and without the preload by bench.sh:
 *
 *   bench_host lock N     N pthread_mutex_lock/unlock pairs on an
 *                         uncontended mutex (osrt-hooked, far under any
 *                         threshold) in lock_calls(); prints "ns X", the
 *                         wall time per pair. A second thread waits
 *                         meanwhile, so that the C library takes its
 *                         multi-threaded paths (atomic instructions) with
 *                         and without tprof, whose writer is a thread:
 *                         only the hook differs.
 *   bench_host spin MS    MS ms of the thread's CPU time in a loop 12
 *                         calls deep; prints "cpu_ns N work N": the CPU
 *                         time and the work done in it (loop turns), so
 *                         the work lost to sampling shows.
 *
 * One CUDA call first: the process is traced from its first one.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <cuda_runtime_api.h>

#include "bench_time.h"

static pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;
static int quit_fd[2];

static void *idle(void *arg)
{
	char c;

	(void)arg;
	return read(quit_fd[0], &c, 1) < 0 ? NULL : NULL;
}

__attribute__((noinline)) void lock_calls(long n)
{
	long i;

	for (i = 0; i < n; i++) {
		pthread_mutex_lock(&m);
		pthread_mutex_unlock(&m);
	}
}


static volatile unsigned long long sink;

__attribute__((noinline)) static unsigned long long
deep(int d, unsigned long long end)
{
	unsigned long long work = 0, x = 0;
	int i;

	if (d)
		return deep(d - 1, end) + 1;
	while (cpu_ns() < end) {
		for (i = 0; i < 1000; i++)
			x += (unsigned long long)i * i;
		work++;
	}
	sink = x;
	return work;
}

int main(int argc, char **argv)
{
	char buf[64] = { 0 };
	unsigned long long t0, w;

	cudaMemcpy(buf, buf + 32, 16, cudaMemcpyHostToDevice);
	if (argc == 3 && !strcmp(argv[1], "lock")) {
		long n = atol(argv[2]);
		pthread_t th;

		if (pipe(quit_fd) || pthread_create(&th, NULL, idle, NULL))
			return 1;
		lock_calls(n / 10);	/* warm: the real function found */
		t0 = now_ns();
		lock_calls(n);
		printf("ns %.3f\n", (double)(now_ns() - t0) / (double)n);
		close(quit_fd[1]);
		pthread_join(th, NULL);
		return 0;
	}
	if (argc == 3 && !strcmp(argv[1], "spin")) {
		t0 = cpu_ns();
		w = deep(12, t0 + (unsigned long long)atol(argv[2]) * 1000000ull);
		printf("cpu_ns %llu work %llu\n", cpu_ns() - t0, w);
		return 0;
	}
	fprintf(stderr, "usage: bench_host lock N | spin MS\n");
	return 2;
}
