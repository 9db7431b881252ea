/* The cost of a hooked CUDA runtime call, as the program sees it.
 *
 * Without a GPU the real libcudart fails every call at once with
 * cudaErrorInsufficientDriver, so what is timed is cudart's early return
 * plus whatever an LD_PRELOADed libtprof adds around it. bench.sh runs
 * this without the preload, with it, and with TPROF_DISABLE=1, and prints
 * the differences.
 *
 * usage: bench_calls CHUNK FRESH WARM PAUSE_MS
 *
 * Calls are made in chunks of about CHUNK calls. The first FRESH chunks
 * are the ring's first pass: they also pay for faulting in the ring's
 * pages. The WARM chunks after them run on pages already touched, once
 * the ring has wrapped (bench.sh sizes it to 2 chunks): the steady state
 * of a long run. PAUSE_MS after each chunk lets the writer drain it, so
 * the ring never fills and no call takes the cheaper drop path.
 *
 * Prints one "fresh NS" or "warm NS" line per chunk (ns per call), with
 * "fresh_faults N" or "warm_faults N" after it (the calling thread's page
 * faults over the chunk, minor and major: the rings file's and the
 * in-memory ring's cost can differ only by the mapping), "fresh_cpu NS" or
 * "warm_cpu NS" (the calling thread's CPU time per call: without the
 * time it was preempted, by the writer or other jobs) and "fresh_others
 * MS" or "warm_others MS" (CPU time of the process's other threads, the
 * writer's, over the chunk), then
 * "calls N" (every hooked call made, to compare with the trace's event
 * count) and "ret R" (what cudart answered).
 */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <time.h>

#include <cuda_runtime_api.h>

#include "bench_time.h"

/* Stands in for a kernel's host stub: only its address is passed. */
static void bench_kernel(void)
{
}

/* The three hooked calls a training step issues most: a launch, an async
 * copy, a stream sync. The first failure is kept so that no call can be
 * dropped and the caller sees what cudart answered. */
static cudaError_t three_calls(void)
{
	dim3 grid = { 128, 1, 1 }, block = { 256, 1, 1 };
	cudaError_t a, b, c;

	a = cudaLaunchKernel((const void *)bench_kernel, grid, block, NULL, 0,
			     0);
	b = cudaMemcpyAsync(NULL, NULL, 0, cudaMemcpyDeviceToHost, 0);
	c = cudaStreamSynchronize(0);
	return a ? a : b ? b : c;
}

/* One chunk of rounds * 3 calls; ns per call. */
static double chunk(unsigned long rounds, cudaError_t *ret)
{
	unsigned long long t0, t1;
	unsigned long i;
	cudaError_t r = cudaSuccess;

	t0 = now_ns();
	for (i = 0; i < rounds; i++)
		r = three_calls();
	t1 = now_ns();
	*ret = r;
	return (double)(t1 - t0) / (double)(rounds * 3);
}

static unsigned long long clock_ns_of(clockid_t id)
{
	struct timespec ts;

	clock_gettime(id, &ts);
	return (unsigned long long)ts.tv_sec * 1000000000ull +
	       (unsigned long long)ts.tv_nsec;
}

/* Page faults taken by the calling thread so far. */
static long thread_faults(void)
{
	struct rusage ru;

	if (getrusage(RUSAGE_THREAD, &ru) < 0)
		return 0;
	return ru.ru_minflt + ru.ru_majflt;
}

int main(int argc, char **argv)
{
	unsigned long rounds, fresh, warm, i, calls = 0;
	cudaError_t ret;
	long pause;

	if (argc != 5) {
		fprintf(stderr, "usage: bench_calls CHUNK FRESH WARM "
			"PAUSE_MS\n");
		return 2;
	}
	rounds = strtoul(argv[1], NULL, 10) / 3;
	fresh = strtoul(argv[2], NULL, 10);
	warm = strtoul(argv[3], NULL, 10);
	pause = strtol(argv[4], NULL, 10);
	if (!rounds) {
		fprintf(stderr, "bench_calls: CHUNK must be at least 3\n");
		return 2;
	}
	/* cudart's one-time initialisation (finding no driver) is not
	 * what is measured. */
	ret = three_calls();
	calls += 3;
	pause_ms(pause);
	for (i = 0; i < fresh + warm; i++) {
		long f0 = thread_faults();
		unsigned long long c0 = clock_ns_of(CLOCK_THREAD_CPUTIME_ID);
		unsigned long long p0 = clock_ns_of(CLOCK_PROCESS_CPUTIME_ID);
		double ns = chunk(rounds, &ret);
		unsigned long long c = clock_ns_of(CLOCK_THREAD_CPUTIME_ID) - c0;
		unsigned long long p = clock_ns_of(CLOCK_PROCESS_CPUTIME_ID) - p0;
		long faults = thread_faults() - f0;
		const char *kind = i < fresh ? "fresh" : "warm";

		calls += rounds * 3;
		printf("%s %.3f\n%s_faults %ld\n%s_cpu %.3f\n"
		       "%s_others %.3f\n", kind, ns, kind, faults, kind,
		       (double)c / (double)(rounds * 3), kind,
		       (double)(p > c ? p - c : 0) / 1e6);
		pause_ms(pause);
	}
	printf("calls %lu\nret %d\n", calls, (int)ret);
	return 0;
}
