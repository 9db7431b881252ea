// THREADS threads launching for SECONDS: a recording window that ends
// meanwhile must not stop the program. With TAIL, the main thread then
// pauses 300 ms and makes a few CUDA calls alone; with PAUSE_US, each
// thread sleeps that long after each launch (a moderate launch rate).
// usage: churn THREADS SECONDS [TAIL [PAUSE_US]]
#include <pthread.h>
#include <time.h>
#include <cstdio>
#include <cstdlib>
#include "simctl.h"

__global__ void tick(float *a) { a[0] += 1; }

static double seconds;
static long pause_us;
static float *dev;

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static void *worker(void *arg)
{
	double end = now() + seconds;
	long n = 0;
	cudaStream_t s;

	(void)arg;
	cudaStreamCreate(&s);
	while (now() < end) {
		sim_next(3000);
		tick<<<1, 32, 0, s>>>(dev);
		if (++n % 64 == 0)
			cudaStreamSynchronize(s);
		if (pause_us) {
			struct timespec ts = { 0, pause_us * 1000 };

			nanosleep(&ts, NULL);
		}
	}
	cudaStreamSynchronize(s);
	return (void *)n;
}

int main(int argc, char **argv)
{
	int threads = argc > 1 ? atoi(argv[1]) : 4;
	pthread_t t[64];
	long total = 0;
	void *r;

	seconds = argc > 2 ? atof(argv[2]) : 1.5;
	pause_us = argc > 4 ? atol(argv[4]) : 0;
	cudaMalloc(&dev, 4096);
	for (int i = 0; i < threads; i++)
		pthread_create(&t[i], NULL, worker, NULL);
	for (int i = 0; i < threads; i++) {
		pthread_join(t[i], &r);
		total += (long)r;
	}
	if (argc > 3) {
		struct timespec pause = { 0, 300000000 };
		float *p;

		nanosleep(&pause, NULL);
		for (int i = 0; i < 3; i++) {
			cudaMalloc(&p, 64);
			cudaFree(p);
		}
	}
	printf("churn: %ld launches\n", total);
	return 0;
}
