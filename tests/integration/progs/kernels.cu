// Real nvcc-compiled launches: <<<>>> (which calls __cudaLaunchKernel, or
// the _ptsz variant with --default-stream per-thread), cudaLaunchKernelEx
// and copies. Without a GPU every call fails, and must still be recorded.
#include <cstdio>

__global__ void add(float *a, int n)
{
	int i = blockIdx.x * blockDim.x + threadIdx.x;
	if (i < n)
		a[i] += 1.0f;
}

namespace ops {
template <typename T> __global__ void scale(T *a, T f, int n)
{
	int i = blockIdx.x * blockDim.x + threadIdx.x;
	if (i < n)
		a[i] *= f;
}
}

int main(int argc, char **argv)
{
	int n = argc > 1 ? atoi(argv[1]) : 3;
	float *d = nullptr, h[256] = {};
	cudaStream_t s = 0;

	cudaMalloc(&d, sizeof(h));
	cudaMemcpy(d, h, sizeof(h), cudaMemcpyHostToDevice);
	for (int i = 0; i < n; i++) {
		add<<<2, 128>>>(d, 256);
		ops::scale<float><<<dim3(4, 2), 64, 1024, s>>>(d, 2.0f, 256);
	}
	cudaLaunchConfig_t cfg = {};
	cfg.gridDim = dim3(8);
	cfg.blockDim = dim3(32);
	cudaLaunchKernelEx(&cfg, add, d, 256);
	cudaMemcpyAsync(h, d, sizeof(h), cudaMemcpyDeviceToHost, s);
	cudaStreamSynchronize(s);
	cudaFree(d);
	printf("kernels done: %s\n", cudaGetErrorName(cudaGetLastError()));
	return 0;
}
