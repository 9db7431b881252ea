// A program whose own profiler (libkclient.so, Kineto-like) records
// GPU activity for a while: 100 kernels before, 100 during, 100 after.
// Prints the client's report: the kernel records it got, by name, and
// whether its buffers' canaries held.
// usage: kineto_like mid|first|sub
//   mid    the client starts after 100 kernels, stops after 100 more
//   first  the client was on from its constructor (KINETO_LIKE_FIRST=1)
//   sub    as mid, and the client also calls cuptiSubscribe
#include <cstdio>
#include <cstring>
#include "simctl.h"

extern "C" {
void kclient_start(int subscribe);
void kclient_stop(void);
void kclient_report(void);
}

__global__ void before(float *a) { a[0] += 1; }
__global__ void during(float *a) { a[0] += 2; }
__global__ void after(float *a) { a[0] += 3; }

int main(int argc, char **argv)
{
	const char *mode = argc > 1 ? argv[1] : "mid";
	int first = !strcmp(mode, "first");
	float *d;

	cudaMalloc(&d, 4096);
	for (int i = 0; i < 100; i++) {
		sim_next(3000);
		before<<<1, 32>>>(d);
	}
	cudaDeviceSynchronize();
	if (!first)
		kclient_start(!strcmp(mode, "sub"));
	for (int i = 0; i < 100; i++) {
		sim_next(3000);
		during<<<1, 32>>>(d);
	}
	cudaDeviceSynchronize();
	kclient_stop();
	for (int i = 0; i < 100; i++) {
		sim_next(3000);
		after<<<1, 32>>>(d);
	}
	cudaDeviceSynchronize();
	kclient_report();
	return 0;
}
