// A small CUDA program to try tprof on: copies, a few kernels, a sync.
// Without a GPU every CUDA call fails; tprof records them all the same.
#include <cstdio>
#include <vector>

__global__ void vector_add(const float *a, const float *b, float *c, int n)
{
	int i = blockIdx.x * blockDim.x + threadIdx.x;
	if (i < n)
		c[i] = a[i] + b[i];
}

__global__ void scale(float *c, float f, int n)
{
	int i = blockIdx.x * blockDim.x + threadIdx.x;
	if (i < n)
		c[i] *= f;
}

int main()
{
	const int n = 1 << 20;
	const size_t bytes = n * sizeof(float);
	std::vector<float> ha(n, 1.0f), hb(n, 2.0f), hc(n);
	float *a = nullptr, *b = nullptr, *c = nullptr;
	cudaStream_t s = nullptr;

	cudaStreamCreate(&s);
	cudaMalloc(&a, bytes);
	cudaMalloc(&b, bytes);
	cudaMalloc(&c, bytes);
	cudaMemcpyAsync(a, ha.data(), bytes, cudaMemcpyHostToDevice, s);
	cudaMemcpyAsync(b, hb.data(), bytes, cudaMemcpyHostToDevice, s);
	for (int step = 0; step < 10; step++) {
		vector_add<<<(n + 255) / 256, 256, 0, s>>>(a, b, c, n);
		scale<<<(n + 255) / 256, 256, 0, s>>>(c, 0.5f, n);
	}
	cudaMemcpyAsync(hc.data(), c, bytes, cudaMemcpyDeviceToHost, s);
	cudaError_t err = cudaStreamSynchronize(s);
	cudaFree(a);
	cudaFree(b);
	cudaFree(c);
	if (err != cudaSuccess) {
		printf("vector_add: %s (no GPU?) - the trace still shows every call\n",
		       cudaGetErrorName(err));
		return 0;
	}
	printf("vector_add: c[0] = %.1f (expect 1.5)\n", hc[0]);
	return 0;
}
