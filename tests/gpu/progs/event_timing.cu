// Kernel durations against cudaEvent elapsed times (make gpu-check):
// kernels of 20 us to 10 ms, each alone on a stream between two
// cudaEventRecord calls, waited for before the next. Each pair of events
// comes after a 200 us kernel, so that the GPU reaches the first event
// with the timed kernel already queued behind it: the elapsed time is
// then the kernel's and the gap before it, not the CPU's launch time.
// First, one 10 us kernel between events on a new, idle stream (the
// elapsed time then includes the launch). Kernels are told apart by
// their grid: 1 the unmeasured first kernel, 2 the idle stream's, k + 3
// the k-th timed one (from 0). Prints "EVENTS {json}": per kernel its
// grid, the time it spins for and cudaEventElapsedTime in ms, and the
// CUDA runtime's and driver's versions. Exit 77: no device.
// usage: event_timing [REPEATS]
#define PROG "event_timing"
#include "ck.h"
#include "simctl.h"

__global__ void timed(unsigned long long ns)
{
	gpu_spin(ns);
}

__global__ void blocker(unsigned long long ns)
{
	gpu_spin(ns);
}

int main(int argc, char **argv)
{
	static const unsigned long long durs[] = {
		20000, 100000, 500000, 2000000, 10000000,
	};
	int reps = argc > 1 ? atoi(argv[1]) : 3, ndev = 0, k = 0, rt, drv;
	const int nd = sizeof(durs) / sizeof(durs[0]);
	cudaEvent_t e0, e1;
	cudaStream_t s, idle;
	float ms;

	if (cudaGetDeviceCount(&ndev) != cudaSuccess || ndev < 1) {
		printf("event_timing: no CUDA device\n");
		return 77;
	}
	CK(cudaStreamCreate(&s));
	CK(cudaEventCreate(&e0));
	CK(cudaEventCreate(&e1));
	// A first kernel, not measured: module load and clocks warm.
	sim_next(10000);
	timed<<<1, 32, 0, s>>>(10000);
	CK(cudaStreamSynchronize(s));
	CK(cudaStreamCreate(&idle));
	CK(cudaEventRecord(e0, idle));
	sim_next(10000);
	timed<<<2, 32, 0, idle>>>(10000);
	CK(cudaEventRecord(e1, idle));
	CK(cudaEventSynchronize(e1));
	CK(cudaEventElapsedTime(&ms, e0, e1));
	CK(cudaRuntimeGetVersion(&rt));
	CK(cudaDriverGetVersion(&drv));
	printf("EVENTS {\"runtime\": %d, \"driver\": %d, \"idle\": "
	       "{\"grid\": 2, \"ns\": 10000, \"event_ms\": %.6f}, "
	       "\"kernels\": [", rt, drv, ms);
	for (int r = 0; r < reps; r++) {
		for (int i = 0; i < nd; i++, k++) {
			sim_next(200000);
			blocker<<<1, 32, 0, s>>>(200000);
			CK(cudaEventRecord(e0, s));
			sim_next(durs[i]);
			timed<<<k + 3, 32, 0, s>>>(durs[i]);
			CK(cudaEventRecord(e1, s));
			CK(cudaEventSynchronize(e1));
			CK(cudaEventElapsedTime(&ms, e0, e1));
			printf("%s{\"grid\": %d, \"ns\": %llu, \"event_ms\": "
			       "%.6f}", k ? ", " : "", k + 3, durs[i], ms);
		}
	}
	printf("]}\n");
	CK(cudaEventDestroy(e0));
	CK(cudaEventDestroy(e1));
	return 0;
}
