// GPU code in a shared library the program dlopen()s late.
#include "simctl.h"

__global__ void late_kernel(float *a) { a[0] += 1; }

extern "C" int late_run(int n)
{
	float *d;

	cudaMalloc(&d, 4096);
	for (int i = 0; i < n; i++) {
		sim_next(6000);
		late_kernel<<<2, 64>>>(d);
	}
	return cudaDeviceSynchronize() == cudaSuccess ? 0 : 1;
}
