// CPU work between kernel launches, for the host sampling tests: each
// round launches a 300 us kernel and waits for it, then spends CPU in
// two functions, one about 70 % of the thread's CPU time, the other
// 30 %, while the GPU idles. Their turns last a pseudo-random number of
// units, so no sampling period can fall in step with them. The split is
// measured on the thread's own CPU clock and printed, so a test compares
// the samples with the truth.
// usage: host_split CPU_SECONDS
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include "simctl.h"

__global__ void step_k(float *a) { a[0] += 1; }

static double cpu_now(void)
{
	struct timespec t;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
	return t.tv_sec + t.tv_nsec / 1e9;
}

static volatile double sink;

__attribute__((noinline)) static void work70(unsigned units)
{
	double x = 0;

	for (unsigned i = 0; i < 700 * units; i++)
		x += i * 0.5;
	sink = x;
}

__attribute__((noinline)) static void work30(unsigned units)
{
	double x = 0;

	for (unsigned i = 0; i < 300 * units; i++)
		x += i * 0.5;
	sink = x;
}

static unsigned units(void)
{
	static unsigned long long s = 0x2545f4914f6cdd1dull;

	s = s * 6364136223846793005ull + 1442695040888963407ull;
	return 2 + (unsigned)(s >> 33) % 17;	/* 2 .. 18, mean 10 */
}

int main(int argc, char **argv)
{
	double want = argc > 1 ? atof(argv[1]) : 1.0, in70 = 0, in30 = 0;
	float *dev;
	int rounds = 0;

	cudaMalloc(&dev, 4096);
	while (in70 + in30 < want) {
		double a, b, c;

		sim_next(300000);
		step_k<<<1, 1>>>(dev);
		cudaStreamSynchronize(0);
		for (int i = 0; i < 20; i++) {
			unsigned u = units();

			a = cpu_now();
			work70(u);
			b = cpu_now();
			work30(u);
			c = cpu_now();
			in70 += b - a;
			in30 += c - b;
		}
		rounds++;
	}
	cudaFree(dev);
	printf("split %.4f rounds %d cpu %.3f\n", in70 / (in70 + in30), rounds,
	       in70 + in30);
	return 0;
}
