// A CUDA graph of three kernels, captured once and launched LAUNCHES
// times.
// usage: graph [LAUNCHES]
#include <cstdio>
#include <cstdlib>
#include "simctl.h"

__global__ void node_a(float *a) { a[0] += 1; }
__global__ void node_b(float *a) { a[0] *= 2; }
__global__ void node_c(float *a) { a[0] -= 3; }

int main(int argc, char **argv)
{
	int n = argc > 1 ? atoi(argv[1]) : 5;
	cudaStream_t s;
	cudaGraph_t g;
	cudaGraphExec_t e;
	float *d;

	cudaMalloc(&d, 4096);
	cudaStreamCreate(&s);
	cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal);
	sim_next(5000);
	node_a<<<1, 32, 0, s>>>(d);
	sim_next(8000);
	node_b<<<2, 32, 0, s>>>(d);
	sim_next(3000);
	node_c<<<4, 32, 0, s>>>(d);
	cudaStreamEndCapture(s, &g);
	cudaGraphInstantiate(&e, g, 0);
	for (int i = 0; i < n; i++)
		cudaGraphLaunch(e, s);
	cudaStreamSynchronize(s);
	cudaGraphExecDestroy(e);
	cudaGraphDestroy(g);
	printf("graph: %d launches\n", n);
	return 0;
}
