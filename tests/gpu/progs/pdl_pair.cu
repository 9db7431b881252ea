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
#include <cuda.h>
#define PROG "pdl_pair"
#include "ck.h"
#include "simctl.h"

#define PRIMARY_NS 100000ull
#define SECONDARY_NS 20000ull

// Spins for ns, then stores the kernel's first (t0) and last readings.
static __device__ void run_for(unsigned long long *t, unsigned long long t0,
			       unsigned long long ns)
{
	gpu_spin(ns);
	if (threadIdx.x == 0) {
		t[0] = t0;
		t[1] = gpu_clock_ns();
	}
}

__global__ void pdl_primary(unsigned long long *t)
{
	unsigned long long t0 = gpu_clock_ns();

#if __CUDA_ARCH__ >= 900
	cudaTriggerProgrammaticLaunchCompletion();
#endif
	run_for(t, t0, PRIMARY_NS);
}

__global__ void pdl_secondary(unsigned long long *t)
{
	unsigned long long t0 = gpu_clock_ns();

#if __CUDA_ARCH__ >= 900
	cudaGridDependencySynchronize();
#endif
	run_for(t + 2, t0, SECONDARY_NS);
}

// Device 0's compute capability (major), from the driver the runtime
// loaded: the simulated runtime has no cudaDeviceGetAttribute.
static int major_cc(void)
{
	CUresult (*attr)(int *, CUdevice_attribute, CUdevice);
	void *h = dlopen("libcuda.so.1", RTLD_NOW | RTLD_NOLOAD);
	int v = 0;

	*(void **)&attr = h ? dlsym(h, "cuDeviceGetAttribute") : NULL;
	if (!attr ||
	    attr(&v, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, 0))
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

	if (cudaGetDeviceCount(&ndev) != cudaSuccess || ndev < 1) {
		printf("pdl_pair: no CUDA device\n");
		return 77;
	}
	CK(cudaMalloc((void **)&d, 32 * n));
	cc = major_cc();
	if (cc < 9) {
		printf("pdl_pair: compute capability %d.x: programmatic "
		       "dependent launch needs sm_90 or later\n", cc);
		return 77;
	}
	h = (unsigned long long *)calloc(4 * n, sizeof(*h));
	CK(cudaMemset(d, 0, 32 * n));
	CK(cudaStreamCreate(&s));
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
		CK(cudaLaunchKernelEx(&cfg, pdl_secondary, d + 4 * i));
	}
	CK(cudaStreamSynchronize(s));
	CK(cudaMemcpy(h, d, 32 * n, cudaMemcpyDeviceToHost));
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
