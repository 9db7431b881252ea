// A training-like loop for the GPU analyses of the summary written at
// exit: per step, a "forward" range (compute kernels, and an NCCL-named
// kernel on a second stream that overlaps them), a "backward" range
// (a copy, a set, compute kernels), then an "io" range in which the CPU
// sleeps while the GPU idles. Steps and ranges through tprof's C API.
// usage: gpu_mix [STEPS]
#include <cstdio>
#include <cstdlib>
#include <dlfcn.h>
#include <unistd.h>
#include "simctl.h"

__global__ void gemm_fwd(float *a) { a[0] += 1; }
__global__ void gemm_bwd(float *a) { a[0] *= 2; }
__global__ void ncclKernel_AllReduce_RING_LL(float *a) { a[1] += 1; }

static long (*step_fn)(void);
static void (*push_fn)(const char *);
static void (*pop_fn)(void);

static void api(void)
{
	*(void **)&step_fn = dlsym(RTLD_DEFAULT, "tprof_step");
	*(void **)&push_fn = dlsym(RTLD_DEFAULT, "tprof_range_push");
	*(void **)&pop_fn = dlsym(RTLD_DEFAULT, "tprof_range_pop");
}

static void push(const char *name)
{
	if (push_fn)
		push_fn(name);
}

static void pop(void)
{
	if (pop_fn)
		pop_fn();
}

int main(int argc, char **argv)
{
	int steps = argc > 1 ? atoi(argv[1]) : 5;
	cudaStream_t comm;
	char host[8192];
	float *d;

	api();
	cudaMalloc(&d, 1 << 20);
	cudaStreamCreate(&comm);
	for (int s = 0; s < steps; s++) {
		push("forward");
		for (int i = 0; i < 4; i++) {
			sim_next(20000 + 5000 * (uint64_t)i);
			gemm_fwd<<<8, 64>>>(d);
		}
		sim_next(30000);
		ncclKernel_AllReduce_RING_LL<<<1, 32, 0, comm>>>(d);
		pop();
		push("backward");
		cudaMemcpyAsync(d, host, sizeof(host), cudaMemcpyHostToDevice);
		cudaMemsetAsync(d, 0, 1 << 16);
		for (int i = 0; i < 3; i++) {
			sim_next(15000);
			gemm_bwd<<<8, 64>>>(d);
		}
		pop();
		cudaDeviceSynchronize();
		push("io");
		usleep(2000 + 500 * (s % 3));
		pop();
		if (step_fn)
			step_fn();
	}
	cudaDeviceSynchronize();
	printf("done %d\n", steps);
	return 0;
}
