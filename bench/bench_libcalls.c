/* The cost of hooked library calls, as the program sees it: a cuBLAS
 * GEMM, an NVTX push/pop pair, and tprof.h's own tprof_range_push/pop
 * (looked up with dlsym, as a program that runs without tprof does; the
 * floor of what tprof.range in Python can cost).
 *
 * Without a GPU, cublasSgemm_v2 with a NULL handle returns
 * CUBLAS_STATUS_NOT_INITIALIZED at once, so what is timed is cuBLAS's
 * early return plus what libtprof adds around it. NVTX without a tool is
 * its own no-op; with libtprof preloaded it is our injection. bench.sh
 * runs this with and without the preload and prints the differences.
 *
 * usage: bench_libcalls cublas|nvtx|tprof CHUNK CHUNKS PAUSE_MS
 *
 * Prints one "ns X" line per chunk (ns per GEMM, or per push/pop pair),
 * and one "cpu X" line (the same in the thread's CPU time), and "calls N"
 * (records the trace should hold).
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <cublas_v2.h>
#include <nvtx3/nvToolsExt.h>

#include "bench_time.h"

static int gemm(void)
{
	static const float one = 1.0f, zero = 0.0f;

	return cublasSgemm(NULL, CUBLAS_OP_N, CUBLAS_OP_T, 4096, 1024, 512,
			   &one, NULL, 4096, NULL, 1024, &zero, NULL, 4096);
}

/* A range name as a training loop gives it. */
static void push_pop(void)
{
	nvtxRangePushA("forward");
	nvtxRangePop();
}

static void (*tp_push)(const char *);
static void (*tp_pop)(void);

static void tprof_push_pop(void)
{
	tp_push("forward");
	tp_pop();
}

int main(int argc, char **argv)
{
	unsigned long n, chunks, i, c;
	unsigned long long t0, c0;
	void (*pair)(void) = push_pop;
	long pause;
	int cublas, ret = 0;

	if (argc != 5) {
		fprintf(stderr, "usage: bench_libcalls cublas|nvtx|tprof CHUNK "
			"CHUNKS PAUSE_MS\n");
		return 2;
	}
	cublas = !strcmp(argv[1], "cublas");
	if (!strcmp(argv[1], "tprof")) {
		*(void **)&tp_push = dlsym(RTLD_DEFAULT, "tprof_range_push");
		*(void **)&tp_pop = dlsym(RTLD_DEFAULT, "tprof_range_pop");
		if (!tp_push || !tp_pop) {
			fprintf(stderr, "bench_libcalls: libtprof.so is not "
				"preloaded\n");
			return 2;
		}
		pair = tprof_push_pop;
	}
	n = strtoul(argv[2], NULL, 10);
	chunks = strtoul(argv[3], NULL, 10);
	pause = atol(argv[4]);
	for (c = 0; c < chunks; c++) {
		t0 = now_ns();
		c0 = cpu_ns();
		if (cublas)
			for (i = 0; i < n; i++)
				ret |= gemm();
		else
			for (i = 0; i < n; i++)
				pair();
		printf("cpu %.2f\n", (double)(cpu_ns() - c0) / (double)n);
		printf("ns %.2f\n", (double)(now_ns() - t0) / (double)n);
		pause_ms(pause);
	}
	printf("calls %lu\nret %d\n", n * chunks * (cublas ? 1 : 2), ret);
	return 0;
}
