// Known GPU work for the tprof GPU validation suite (tests/gpu/run.sh).
// Every launch, copy and memset below happens a fixed number of times; the
// program prints those numbers on one line, "EXPECT {json}", which the
// checker (tests/gpu/tracecheck.py) compares with the trace; --expect
// prints only that line. Exit 77: no usable CUDA device (the check is then
// skipped).
#include <cstring>
#define PROG "known_work"
#include "ck.h"

// Grid-stride index over any 2D grid and block.
__device__ int gtid()
{
	return (blockIdx.y * gridDim.x + blockIdx.x) * (blockDim.x * blockDim.y) +
	       threadIdx.y * blockDim.x + threadIdx.x;
}
__device__ int gthreads()
{
	return gridDim.x * gridDim.y * blockDim.x * blockDim.y;
}

__global__ void fill_kernel(float *a, float v, int n)
{
	for (int i = gtid(); i < n; i += gthreads())
		a[i] = v;
}

__global__ void axpy_kernel(float *y, const float *x, float a, int n)
{
	for (int i = gtid(); i < n; i += gthreads())
		y[i] += a * x[i];
}

namespace ops {
template <typename T> __global__ void scale(T *a, T f, int n)
{
	for (int i = gtid(); i < n; i += gthreads())
		a[i] *= f;
}
} // namespace ops

__global__ void ex_kernel(float *a, int n)
{
	for (int i = gtid(); i < n; i += gthreads())
		a[i] += 1.0f;
}

__global__ void graph_add(float *a, const float *b, int n)
{
	for (int i = gtid(); i < n; i += gthreads())
		a[i] += 1.0f + b[i];
}

__global__ void graph_double(float *a, int n)
{
	for (int i = gtid(); i < n; i += gthreads())
		a[i] *= 2.0f;
}

enum { N = 1 << 16, N_FILL = 2, N_AXPY = 3, N_SCALE = 4, N_GRAPH = 2 };
static const size_t B = N * sizeof(float);

// What the trace must hold: kernels by a substring of their demangled
// name, with launch shape and whether a graph launched them; copies by
// kind and memsets as [count, bytes].
static void print_expect()
{
	printf("EXPECT {\"kernels\": ["
	       "{\"match\": \"fill_kernel(\", \"count\": %d, \"grid\": [64,1,1], \"block\": [256,1,1], \"graph\": false}, "
	       "{\"match\": \"axpy_kernel(\", \"count\": %d, \"grid\": [32,1,1], \"block\": [128,1,1], \"graph\": false}, "
	       "{\"match\": \"ops::scale<float>(\", \"count\": %d, \"grid\": [16,2,1], \"block\": [64,2,1], \"graph\": false}, "
	       "{\"match\": \"ex_kernel(\", \"count\": 1, \"grid\": [8,1,1], \"block\": [32,1,1], \"graph\": false}, "
	       "{\"match\": \"graph_add(\", \"count\": %d, \"grid\": [4,1,1], \"block\": [256,1,1], \"graph\": true}, "
	       "{\"match\": \"graph_double(\", \"count\": %d, \"grid\": [2,1,1], \"block\": [512,1,1], \"graph\": true}], "
	       "\"memcpy\": {\"HtoD\": [2, %zu], \"DtoH\": [1, %zu], \"DtoD\": [1, %zu]}, "
	       "\"memset\": [%d, %zu], \"graph_launches\": %d, \"ops_per_graph\": 3}\n",
	       N_FILL, N_AXPY, N_SCALE, N_GRAPH, N_GRAPH, 2 * B, B, B,
	       1 + N_GRAPH, (1 + N_GRAPH) * B, N_GRAPH);
}

int main(int argc, char **argv)
{
	if (argc > 1 && !strcmp(argv[1], "--expect")) {	// no GPU needed
		print_expect();
		return 0;
	}
	int ndev = 0;
	cudaError_t e = cudaGetDeviceCount(&ndev);
	if (e != cudaSuccess || ndev == 0) {
		fprintf(stderr, "known_work: no usable CUDA device: %s\n",
			e != cudaSuccess ? cudaGetErrorName(e) : "0 devices");
		return 77;
	}
	CK(cudaSetDevice(0));

	float *h = (float *)malloc(B), *hp, *dx, *dy, *dz;
	cudaStream_t s, g;
	CK(cudaMallocHost(&hp, B));
	CK(cudaMalloc(&dx, B));
	CK(cudaMalloc(&dy, B));
	CK(cudaMalloc(&dz, B));
	CK(cudaStreamCreate(&s));
	CK(cudaStreamCreateWithFlags(&g, cudaStreamNonBlocking));
	for (int i = 0; i < N; i++) {
		h[i] = 1.0f;
		hp[i] = 2.0f;
	}

	CK(cudaMemcpy(dx, h, B, cudaMemcpyHostToDevice));	// HtoD 1: dx = 1
	for (int i = 0; i < N_FILL; i++)			// dy = 3
		fill_kernel<<<64, 256>>>(dy, 3.0f, N);
	for (int i = 0; i < N_AXPY; i++)			// dy = 9
		axpy_kernel<<<32, 128>>>(dy, dx, 2.0f, N);
	for (int i = 0; i < N_SCALE; i++)			// dy = 0.5625
		ops::scale<float><<<dim3(16, 2), dim3(64, 2), 0, s>>>(dy, 0.5f, N);
	CK(cudaGetLastError());

	cudaLaunchConfig_t cfg = {};				// dy = 1.5625
	cfg.gridDim = dim3(8);
	cfg.blockDim = dim3(32);
	CK(cudaLaunchKernelEx(&cfg, ex_kernel, dy, (int)N));

	CK(cudaMemcpy(dz, dy, B, cudaMemcpyDeviceToDevice));	// DtoD: dz = 1.5625
	CK(cudaMemset(dx, 0, B));				// memset 1: dx = 0
	CK(cudaMemcpyAsync(dx, hp, B, cudaMemcpyHostToDevice, s)); // HtoD 2: dx = 2
	CK(cudaStreamSynchronize(s));

	// Graph: dz = (dz + 1 + 2) * 2, then memset dx = 0; launched twice, so
	// the second pass adds 1 + 0: dz = ((1.5625 + 3) * 2 + 1) * 2 = 20.25.
	cudaGraph_t graph;
	cudaGraphExec_t exec;
	CK(cudaStreamBeginCapture(g, cudaStreamCaptureModeGlobal));
	graph_add<<<4, 256, 0, g>>>(dz, dx, N);
	CK(cudaMemsetAsync(dx, 0, B, g));
	graph_double<<<2, 512, 0, g>>>(dz, N);
	CK(cudaStreamEndCapture(g, &graph));
	CK(cudaGraphInstantiate(&exec, graph, 0));
	for (int i = 0; i < N_GRAPH; i++)
		CK(cudaGraphLaunch(exec, g));
	CK(cudaStreamSynchronize(g));

	CK(cudaMemcpy(h, dz, B, cudaMemcpyDeviceToHost));	// DtoH
	CK(cudaDeviceSynchronize());
	for (int i = 0; i < N; i++)
		if (h[i] != 20.25f) {
			fprintf(stderr, "known_work: wrong result h[%d] = %g, "
				"want 20.25\n", i, h[i]);
			return 1;
		}

	CK(cudaGraphExecDestroy(exec));
	CK(cudaGraphDestroy(graph));
	CK(cudaStreamDestroy(s));
	CK(cudaStreamDestroy(g));
	CK(cudaFree(dx));
	CK(cudaFree(dy));
	CK(cudaFree(dz));
	CK(cudaFreeHost(hp));
	free(h);

	print_expect();
	printf("known_work: ok\n");
	return 0;
}
