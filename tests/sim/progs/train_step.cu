// One rank of a training job, for the report's findings: each step a
// data loader range in which the host works and the GPU idles, a
// forward and a backward range of GEMM-like kernels, an all-reduce-named
// kernel on a second stream that overlaps the end of the backward pass,
// an optimizer range that waits for the GPU (cudaDeviceSynchronize) and
// reads the loss back (cudaMemcpy), then the step's end (tprof_step).
// Ranks are separate runs (RANK=N), as a launcher starts them.
// usage: train_step [STEPS] [normal|slowgpu|loader|launch]
//   slowgpu  every GEMM takes twice as long: a slower GPU
//   loader   the data loader takes 15 ms instead of 1 ms: host-bound
//   launch   the forward pass is 600 kernels of 4 us instead of 6 of
//            1 ms, each after 10 us of host work (an eager framework's
//            dispatch): launch-bound
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <dlfcn.h>
#include "simctl.h"

__global__ void gemm_fwd(float *a) { a[0] += 1; }
__global__ void gemm_bwd(float *a) { a[0] *= 2; }
__global__ void add_small(float *a) { a[2] += 1; }
__global__ void ncclDevKernel_AllReduce_Sum_f32_RING_LL(float *a)
{
	a[1] += 1;
}

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

// The host busy (not asleep: a data loader decodes), as a loader is.
static void host_work(long us)
{
	struct timespec a, b;

	clock_gettime(CLOCK_MONOTONIC, &a);
	do
		clock_gettime(CLOCK_MONOTONIC, &b);
	while ((b.tv_sec - a.tv_sec) * 1000000L +
	       (b.tv_nsec - a.tv_nsec) / 1000 < us);
}

int main(int argc, char **argv)
{
	int steps = argc > 1 ? atoi(argv[1]) : 8;
	const char *mode = argc > 2 ? argv[2] : "normal";
	int slow = !strcmp(mode, "slowgpu"), loader = !strcmp(mode, "loader");
	int launch = !strcmp(mode, "launch");
	uint64_t gemm = slow ? 2000000 : 1000000;
	cudaStream_t comm;
	float *d, loss;

	api();
	cudaMalloc(&d, 1 << 20);
	cudaStreamCreate(&comm);
	for (int s = 0; s < steps; s++) {
		push("DataLoader.__next__");
		host_work(loader ? 15000 : 1000);
		pop();
		push("forward");
		for (int i = 0; i < (launch ? 600 : 6); i++) {
			sim_next(launch ? 4000 : gemm);
			if (launch) {
				host_work(10);
				add_small<<<1, 32>>>(d);
			} else
				gemm_fwd<<<8, 64>>>(d);
		}
		pop();
		push("backward");
		for (int i = 0; i < 6; i++) {
			sim_next(gemm);
			gemm_bwd<<<8, 64>>>(d);
			if (i == 3) {
				sim_next(500000);
				ncclDevKernel_AllReduce_Sum_f32_RING_LL
					<<<1, 32, 0, comm>>>(d);
			}
		}
		pop();
		push("optimizer");
		cudaDeviceSynchronize();
		cudaMemcpy(&loss, d, sizeof(loss), cudaMemcpyDeviceToHost);
		pop();
		if (step_fn)
			step_fn();
	}
	cudaDeviceSynchronize();
	printf("done %d %s\n", steps, mode);
	return 0;
}
