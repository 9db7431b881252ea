// Programmatic dependent launch (make gpu-check): PAIRS pairs on one
// stream, a primary <<<>>> launch (100 us) and a secondary launched with
// cudaLaunchKernelEx and cudaLaunchAttributeProgrammaticStreamSerialization
// (20 us). The primary lets its dependent start at once
// (cudaTriggerProgrammaticLaunchCompletion), so on sm_90 and later the
// secondary may start while the primary still runs: two ops of one
// stream that really overlap.
//
// Each kernel writes its first and last reading of the GPU's global
// timer; the program prints them, "PDL {json}", so the checker knows
// which pairs the GPU overlapped ("gpu": null where no device code ran:
// the simulation). Exit 77: no device, or one older than sm_90.
// usage: pdl_pair [PAIRS]
#include <cstdio>
#include <cstdlib>
#include <cuda_runtime.h>
#include "simctl.h"

#define PRIMARY_NS 100000ull
#define SECONDARY_NS 20000ull

__global__ void pdl_primary(unsigned long long *t)
{
	unsigned long long t0 = gpu_clock_ns();

#if __CUDA_ARCH__ >= 900
	cudaTriggerProgrammaticLaunchCompletion();
#endif
	gpu_spin(PRIMARY_NS);
	if (threadIdx.x == 0) {
		t[0] = t0;
		t[1] = gpu_clock_ns();
	}
}

__global__ void pdl_secondary(unsigned long long *t)
{
	unsigned long long t0 = gpu_clock_ns();

#if __CUDA_ARCH__ >= 900
	cudaGridDependencySynchronize();
#endif
	gpu_spin(SECONDARY_NS);
	if (threadIdx.x == 0) {
		t[2] = t0;
		t[3] = gpu_clock_ns();
	}
}

static int fail(const char *what, cudaError_t e)
{
	fprintf(stderr, "pdl_pair: %s: %s\n", what, cudaGetErrorName(e));
	return 1;
}

// The compute capability from the driver the runtime loaded (the
// runtime's own query is not needed for anything else here).
static int major_cc(void)
{
	int (*attr)(int *, int, int);
	void *h = dlopen("libcuda.so.1", RTLD_NOW | RTLD_NOLOAD);
	int v = 0;

	*(void **)&attr = h ? dlsym(h, "cuDeviceGetAttribute") : NULL;
	if (!attr || attr(&v, 75 /* COMPUTE_CAPABILITY_MAJOR */, 0))
		return -1;
	return v;
}

int main(int argc, char **argv)
{
	int n = argc > 1 ? atoi(argv[1]) : 20, ndev = 0, cc, gpu = 0;
	unsigned long long *d, *h;
	cudaLaunchAttribute attr[1];
	cudaLaunchConfig_t cfg = {};
	cudaStream_t s;
	cudaError_t e;

	if (cudaGetDeviceCount(&ndev) != cudaSuccess || ndev < 1) {
		printf("pdl_pair: no CUDA device\n");
		return 77;
	}
	if ((e = cudaMalloc((void **)&d, 32 * n)) != cudaSuccess)
		return fail("cudaMalloc", e);
	cc = major_cc();
	if (cc < 9) {
		printf("pdl_pair: compute capability %d.x: programmatic "
		       "dependent launch needs sm_90 or later\n", cc);
		return 77;
	}
	h = (unsigned long long *)calloc(4 * n, sizeof(*h));
	cudaMemset(d, 0, 32 * n);
	cudaStreamCreate(&s);
	attr[0].id = cudaLaunchAttributeProgrammaticStreamSerialization;
	attr[0].val.programmaticStreamSerializationAllowed = 1;
	cfg.gridDim = dim3(1);
	cfg.blockDim = dim3(32);
	cfg.stream = s;
	cfg.attrs = attr;
	cfg.numAttrs = 1;
	for (int i = 0; i < n; i++) {
		sim_next(PRIMARY_NS);
		pdl_primary<<<1, 32, 0, s>>>(d + 4 * i);
		sim_next(SECONDARY_NS);
		e = cudaLaunchKernelEx(&cfg, pdl_secondary, d + 4 * i);
		if (e != cudaSuccess)
			return fail("cudaLaunchKernelEx", e);
	}
	if ((e = cudaStreamSynchronize(s)) != cudaSuccess)
		return fail("cudaStreamSynchronize", e);
	cudaMemcpy(h, d, 32 * n, cudaMemcpyDeviceToHost);
	for (int i = 0; i < 4 * n; i++)
		gpu |= h[i] != 0;
	printf("PDL {\"pairs\": %d, \"primary_ns\": %llu, \"secondary_ns\": "
	       "%llu, \"gpu\": ", n, PRIMARY_NS, SECONDARY_NS);
	for (int i = 0; gpu && i < n; i++)
		printf("%s[%llu, %llu, %llu, %llu]", i ? ", " : "[",
		       h[4 * i], h[4 * i + 1], h[4 * i + 2], h[4 * i + 3]);
	printf("%s}\n", gpu ? "]" : "null");
	return 0;
}
