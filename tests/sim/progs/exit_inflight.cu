// Work still running when main returns: no synchronization, so the
// program's exit (and CUDA's teardown in its atexit handlers) comes while
// the GPU is busy for about 170 ms more (on a real GPU too: each kernel
// spins for its time).
// usage: exit_inflight [OPS [NS_EACH]]
#include <cstdio>
#include <cstdlib>
#include "simctl.h"

__global__ void busy(float *a, unsigned long long ns)
{
	gpu_spin(ns);
	a[0] += 1;
}

int main(int argc, char **argv)
{
	int n = argc > 1 ? atoi(argv[1]) : 85;
	unsigned long long dur = argc > 2 ? strtoull(argv[2], NULL, 10) :
					    2000000;
	float *d;

	cudaMalloc(&d, 4096);
	for (int i = 0; i < n; i++) {
		sim_next(dur);
		busy<<<1, 32>>>(d, dur);
	}
	printf("exit_inflight: %d launched\n", n);
	return 0;
}
