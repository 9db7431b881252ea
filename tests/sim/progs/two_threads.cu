// Two threads, each first on a stream of its own, then both on one
// shared stream (as PyTorch's forward and autograd threads share one):
// 2400 GPU ops in all, kernels of several durations (1-40 us, and some
// of 2 us that end before the next launch), copies and memsets.
// usage: two_threads [OPS_PER_THREAD_PER_PHASE]
#include <pthread.h>
#include <cstdio>
#include <cstdlib>
#include "simctl.h"

__global__ void short_k(float *a) { a[0] += 1; }
__global__ void mid_k(float *a) { a[0] *= 2; }
__global__ void long_k(float *a) { a[0] -= 1; }

static int n = 600;
static cudaStream_t shared;
static float *dev;

static void ops(cudaStream_t s, int seed)
{
	static const uint64_t durs[] = { 2000, 7000, 13000, 40000, 1000 };
	char host[4096];

	for (int i = 0; i < n; i++) {
		switch (i % 6) {
		case 0: case 1:
			sim_next(durs[(i + seed) % 5]);
			short_k<<<1, 32, 0, s>>>(dev);
			break;
		case 2:
			sim_next(durs[(i / 6 + seed) % 5]);
			mid_k<<<dim3(4, 2), 64, 0, s>>>(dev);
			break;
		case 3:
			sim_next(25000 + (uint64_t)(i % 7) * 1000);
			long_k<<<64, 256, 0, s>>>(dev);
			break;
		case 4:
			cudaMemcpyAsync(dev, host, sizeof(host),
					cudaMemcpyHostToDevice, s);
			break;
		default:
			cudaMemsetAsync(dev, 0, 1 << 16, s);
			break;
		}
	}
}

static void *worker(void *arg)
{
	int id = (int)(long)arg;
	cudaStream_t own;

	cudaStreamCreate(&own);
	ops(own, id);
	cudaStreamSynchronize(own);
	ops(shared, id + 2);
	cudaStreamSynchronize(shared);
	return NULL;
}

int main(int argc, char **argv)
{
	pthread_t t[2];

	if (argc > 1)
		n = atoi(argv[1]);
	cudaMalloc(&dev, 1 << 20);
	cudaStreamCreate(&shared);
	for (long i = 0; i < 2; i++)
		pthread_create(&t[i], NULL, worker, (void *)i);
	for (int i = 0; i < 2; i++)
		pthread_join(t[i], NULL);
	cudaDeviceSynchronize();
	printf("two_threads: %d ops\n", 4 * n);
	return 0;
}
