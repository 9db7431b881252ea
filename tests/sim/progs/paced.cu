// Two threads launching at a steady pace, each on a stream of its own and
// on one shared stream in turn, kernels of 2-20 us and a copy now and
// then: OPS GPU ops per thread spread over several of tprof's batches
// (OPS x INTERVAL_US at least), for the timing checks
// (test_gpu_timing.py).
// usage: paced OPS [INTERVAL_US]
#include <pthread.h>
#include <time.h>
#include <cstdio>
#include <cstdlib>
#include "simctl.h"

__global__ void step_k(float *a) { a[0] += 1; }

static long ops = 1500;
static long interval_us = 300;
static cudaStream_t shared;
static float *dev;

static void *worker(void *arg)
{
	struct timespec pause = { 0, interval_us * 1000 };
	char host[4096];
	cudaStream_t own;
	long i;

	(void)arg;
	cudaStreamCreate(&own);
	for (i = 0; i < ops; i++) {
		cudaStream_t s = i % 4 == 3 ? shared : own;

		if (i % 7 == 0) {
			cudaMemcpyAsync(dev, host, sizeof(host),
					cudaMemcpyHostToDevice, s);
		} else {
			sim_next(2000 + (uint64_t)(i % 10) * 2000);
			step_k<<<8, 128, 0, s>>>(dev);
		}
		nanosleep(&pause, NULL);
	}
	cudaStreamSynchronize(own);
	return NULL;
}

int main(int argc, char **argv)
{
	pthread_t t[2];

	if (argc > 1)
		ops = atol(argv[1]);
	if (argc > 2)
		interval_us = atol(argv[2]);
	cudaMalloc(&dev, 1 << 20);
	cudaStreamCreate(&shared);
	for (long i = 0; i < 2; i++)
		pthread_create(&t[i], NULL, worker, (void *)i);
	for (int i = 0; i < 2; i++)
		pthread_join(t[i], NULL);
	cudaDeviceSynchronize();
	printf("paced: done\n");
	return 0;
}
