// Launch-bound loop for the overhead check: LAUNCHES empty kernels timed
// after a warm-up. Prints "RESULT {json}". Exit 77: no usable CUDA device.
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cuda_runtime.h>

__global__ void empty_kernel() {}

int main(int argc, char **argv)
{
	int n = argc > 1 ? atoi(argv[1]) : 100000, ndev = 0;
	cudaError_t e = cudaGetDeviceCount(&ndev);
	if (e != cudaSuccess || ndev == 0) {
		fprintf(stderr, "empty_launch: no usable CUDA device: %s\n",
			e != cudaSuccess ? cudaGetErrorName(e) : "0 devices");
		return 77;
	}
	for (int i = 0; i < 1000; i++)
		empty_kernel<<<1, 1>>>();
	if ((e = cudaDeviceSynchronize()) != cudaSuccess) {
		fprintf(stderr, "empty_launch: %s\n", cudaGetErrorName(e));
		return 1;
	}
	auto t0 = std::chrono::steady_clock::now();
	for (int i = 0; i < n; i++)
		empty_kernel<<<1, 1>>>();
	e = cudaDeviceSynchronize();
	double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
	if (e != cudaSuccess || (e = cudaGetLastError()) != cudaSuccess) {
		fprintf(stderr, "empty_launch: %s\n", cudaGetErrorName(e));
		return 1;
	}
	printf("RESULT {\"launches\": %d, \"seconds\": %.6f, \"per_launch_us\": %.3f}\n",
	       n, s, s * 1e6 / n);
	return 0;
}
