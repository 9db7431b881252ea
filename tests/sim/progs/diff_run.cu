// One rank of a training job in two versions, for `tprof diff`: what B
// changes against A is known exactly, so the diff's numbers are checked
// against what the simulation was told, not against tprof's own output.
// usage: diff_run STEPS a|b
// Each step: a "forward" range of 4 gemm_fwd kernels (A: 5 ms each; B:
// 10 ms, twice as slow), a "backward" range of 4 gemm_bwd kernels of 5 ms
// and a 15 ms all-reduce-named kernel (A: on a second stream, launched
// early, so the compute kernels hide it; B: on the compute stream after
// the backward pass, so all of it is exposed), a "scale" kernel (A: once
// of 2.5 ms; B: twice of 1.25 ms, the same time launched twice as often),
// in B only a new 10 ms "bias_gelu" kernel; then the step's end
// (tprof_step) once the GPU finished the step before: the GPU always has
// a step queued, so a host the loaded machine stops for a while (tens of
// milliseconds) does not leave it idle, and the step lasts as long as the
// GPU's work, as in a GPU-bound training loop.
// Per step, B - A: gemm_fwd +20 ms, exposed communication +15 ms,
// bias_gelu +10 ms (new), scale 0 ns (1 -> 2 calls): changes of
// milliseconds per step, far above what a loaded host adds to the GPU's
// idle time between steps.
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <dlfcn.h>
#include "simctl.h"

__global__ void gemm_fwd(float *a) { a[0] += 1; }
__global__ void gemm_bwd(float *a) { a[0] *= 2; }
__global__ void scale(float *a) { a[3] *= 0.5f; }
__global__ void bias_gelu(float *a) { a[4] += 1; }
__global__ void ncclDevKernel_AllReduce_Sum_f32_RING_LL(float *a)
{
	a[1] += 1;
}

static long (*step_fn)(void);
static void (*push_fn)(const char *);
static void (*pop_fn)(void);

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

static void allreduce(float *d, cudaStream_t s)
{
	sim_next(15000000);
	ncclDevKernel_AllReduce_Sum_f32_RING_LL<<<1, 32, 0, s>>>(d);
}

int main(int argc, char **argv)
{
	int steps = argc > 1 ? atoi(argv[1]) : 4;
	int b = argc > 2 && !strcmp(argv[2], "b");
	cudaStream_t comm;
	cudaEvent_t done[2];
	float *d;

	*(void **)&step_fn = dlsym(RTLD_DEFAULT, "tprof_step");
	*(void **)&push_fn = dlsym(RTLD_DEFAULT, "tprof_range_push");
	*(void **)&pop_fn = dlsym(RTLD_DEFAULT, "tprof_range_pop");
	cudaMalloc(&d, 1 << 20);
	cudaStreamCreate(&comm);
	cudaEventCreate(&done[0]);
	cudaEventCreate(&done[1]);
	for (int s = 0; s < steps; s++) {
		push("forward");
		for (int i = 0; i < 4; i++) {
			sim_next(b ? 10000000 : 5000000);
			gemm_fwd<<<8, 64>>>(d);
		}
		if (b) {
			sim_next(10000000);
			bias_gelu<<<8, 64>>>(d);
		}
		pop();
		push("backward");
		for (int i = 0; i < 4; i++) {
			sim_next(5000000);
			gemm_bwd<<<8, 64>>>(d);
			if (!b && i == 0)
				allreduce(d, comm);
		}
		if (b)
			allreduce(d, 0);
		for (int i = 0; i < (b ? 2 : 1); i++) {
			sim_next(b ? 1250000 : 2500000);
			scale<<<1, 32>>>(d);
		}
		pop();
		cudaEventRecord(done[s % 2], 0);
		if (s)
			cudaEventSynchronize(done[(s - 1) % 2]);
		if (step_fn)
			step_fn();
	}
	cudaDeviceSynchronize();
	cudaFree(d);
	printf("done %d %s\n", steps, b ? "b" : "a");
	return 0;
}
