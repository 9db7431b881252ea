// Work on the second GPU, then a device-wide sync: the sync record names
// only its context, whose device must be learned from the kernels'.
// usage: device1 [KERNELS]   (SIM_DEVICES=2)
#include <cstdio>
#include <cstdlib>
#include "simctl.h"

__global__ void on_one(float *a) { a[0] += 1; }

int main(int argc, char **argv)
{
	int n = argc > 1 ? atoi(argv[1]) : 10;
	float *d;

	cudaSetDevice(1);
	cudaMalloc(&d, 4096);
	for (int i = 0; i < n; i++) {
		sim_next(20000);
		on_one<<<1, 32>>>(d);
	}
	cudaDeviceSynchronize();
	printf("device1: %d\n", n);
	return 0;
}
