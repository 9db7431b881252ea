// Programmatic dependent launch: on one stream, A (10 ms) with <<<>>>,
// then B (2 ms) and C (15 ms) with cudaLaunchKernelEx and
// cudaLaunchAttributeProgrammaticStreamSerialization, each allowed to
// start once the kernel before it triggers (the simulation: half-way
// through it), then D (250 us) with <<<>>>, which waits for all: B runs
// inside A, C past A's end and over B's (long enough that a loaded
// machine's launches still come before the triggers). ROUNDS times,
// with a sync between rounds.
// usage: pdl [ROUNDS]
#include <cstdio>
#include <cstdlib>
#include "simctl.h"

__global__ void primary_k(float *a) { a[0] += 1; }
__global__ void inner_k(float *a) { a[1] += 1; }
__global__ void tail_k(float *a) { a[2] += 1; }
__global__ void after_k(float *a) { a[3] += 1; }

static void pdl_launch(void (*k)(float *), float *dev, cudaStream_t s,
		       uint64_t ns)
{
	cudaLaunchAttribute attr;
	cudaLaunchConfig_t cfg = {};

	attr.id = cudaLaunchAttributeProgrammaticStreamSerialization;
	attr.val.programmaticStreamSerializationAllowed = 1;
	cfg.gridDim = dim3(16);
	cfg.blockDim = dim3(128);
	cfg.stream = s;
	cfg.attrs = &attr;
	cfg.numAttrs = 1;
	sim_next(ns);
	cudaLaunchKernelEx(&cfg, k, dev);
}

int main(int argc, char **argv)
{
	int rounds = argc > 1 ? atoi(argv[1]) : 20;
	cudaStream_t s;
	float *dev;

	cudaMalloc(&dev, 1 << 20);
	cudaStreamCreate(&s);
	for (int i = 0; i < rounds; i++) {
		sim_next(10000000);
		primary_k<<<16, 128, 0, s>>>(dev);
		pdl_launch(inner_k, dev, s, 2000000);
		pdl_launch(tail_k, dev, s, 15000000);
		sim_next(250000);
		after_k<<<16, 128, 0, s>>>(dev);
		cudaStreamSynchronize(s);
	}
	printf("pdl: %d rounds\n", rounds);
	return 0;
}
