// The detach race at the end of the last recording window: the main
// thread makes a CUDA call alone at 2.0 s (after a quiet pause), a worker
// wakes at 2.2 s and waits 1 s in cudaStreamSynchronize for a 1 s kernel,
// the main thread calls again from 3.7 s. With SIM_FLUSH_FORCED_NS=600ms
// a detach that starts at the 2.0 s call is still flushing when the
// worker comes in: cuptiFinalize must wait for a later exit callback.
#include <pthread.h>
#include <time.h>
#include <cstdio>
#include "simctl.h"

__global__ void tick(float *a) { a[0] += 1; }

static float *dev;

static void sleep_ms(long ms)
{
	struct timespec t = { ms / 1000, (ms % 1000) * 1000000 };

	nanosleep(&t, NULL);
}

static void *worker(void *arg)
{
	cudaStream_t s;

	(void)arg;
	sleep_ms(2200);
	cudaStreamCreate(&s);
	sim_next(1000000000);
	tick<<<1, 32, 0, s>>>(dev);
	cudaStreamSynchronize(s);
	return NULL;
}

int main(void)
{
	pthread_t t;

	cudaMalloc(&dev, 4096);
	pthread_create(&t, NULL, worker, NULL);
	sleep_ms(2000);
	cudaMemset(dev, 0, 64);
	sleep_ms(1700);
	for (int i = 0; i < 4; i++) {
		cudaMemset(dev, 0, 64);
		sleep_ms(150);
	}
	pthread_join(t, NULL);
	cudaDeviceSynchronize();
	printf("detach_race: done\n");
	return 0;
}
