// Launches on the simulated CUDA 13 machine (tests/sim/): the cost of a
// <<<>>> launch as the program sees it, with tprof's hooks and CUPTI's
// callbacks and records in the path when preloaded.
// usage: bench_sim_launch CHUNK CHUNKS
// Prints one "launch NS" line per chunk: the mean time of a launch.
#include <time.h>
#include <cstdio>
#include <cstdlib>

__global__ void k(float *a) { a[0] += 1; }

static double now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e9 + ts.tv_nsec;
}

int main(int argc, char **argv)
{
	int chunk = argc > 1 ? atoi(argv[1]) : 20000;
	int chunks = argc > 2 ? atoi(argv[2]) : 5;
	float *d;

	cudaMalloc(&d, 4096);
	for (int c = 0; c < chunks; c++) {
		double t0 = now_ns();

		for (int i = 0; i < chunk; i++)
			k<<<1, 32>>>(d);
		printf("launch %.1f\n", (now_ns() - t0) / chunk);
		cudaDeviceSynchronize();
	}
	return 0;
}
