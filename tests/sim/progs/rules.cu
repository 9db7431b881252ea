// The simulated CUPTI's rules (tests/sim/README.md), broken on purpose by
// a client of its own, one per run: the simulation must abort (or, for a
// call after cuptiFinalize without graphs, start CUPTI again and log it).
// usage: rules CASE
//   flush-in-resource     cuptiActivityFlushAll in the module-unload
//                         resource callback
//   flush-in-buffer       cuptiActivityFlushAll in a buffer completion
//   finalize-in-buffer    cuptiFinalize in a buffer completion
//   after-finalize        cuptiGetTimestamp after cuptiFinalize
//   after-finalize-graph  the same once a CUDA graph was launched
#include <cupti.h>
#include <dlfcn.h>
#include <cstdio>
#include <cstdlib>
#include <cstring>

__global__ void k(float *a) { a[0] += 1; }

static const char *mode;
static CUpti_SubscriberHandle sub;

static void CUPTIAPI request(uint8_t **b, size_t *size, size_t *max)
{
	*b = (uint8_t *)aligned_alloc(8, 1 << 16);
	*size = 1 << 16;
	*max = 0;
}

static void CUPTIAPI complete(CUcontext, uint32_t, uint8_t *b, size_t,
			      size_t)
{
	if (!strcmp(mode, "flush-in-buffer"))
		cuptiActivityFlushAll(0);
	if (!strcmp(mode, "finalize-in-buffer"))
		cuptiFinalize();
	free(b);
}

static void CUPTIAPI on_cb(void *, CUpti_CallbackDomain d, CUpti_CallbackId,
			   const void *)
{
	if (d == CUPTI_CB_DOMAIN_RESOURCE)
		cuptiActivityFlushAll(0);
}

typedef int (*load_t)(void **, const void *);
typedef int (*unload_t)(void *);

int main(int argc, char **argv)
{
	float *d;
	uint64_t t;

	mode = argc > 1 ? argv[1] : "";
	cudaMalloc(&d, 4096);
	cuptiActivityRegisterCallbacks(request, complete);
	cuptiActivityEnable(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL);
	if (!strcmp(mode, "flush-in-resource")) {
		void *h = dlopen("libcuda.so.1", RTLD_NOW), *m;

		cuptiSubscribe(&sub, on_cb, NULL);
		cuptiEnableCallback(1, sub, CUPTI_CB_DOMAIN_RESOURCE,
				    CUPTI_CBID_RESOURCE_MODULE_UNLOAD_STARTING);
		((load_t)dlsym(h, "cuModuleLoadData"))(&m, "kernels: jit_0");
		((unload_t)dlsym(h, "cuModuleUnload"))(m);
	}
	if (!strcmp(mode, "after-finalize-graph")) {
		cudaStream_t s;
		cudaGraph_t g;
		cudaGraphExec_t e;

		cudaStreamCreate(&s);
		cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal);
		k<<<1, 32, 0, s>>>(d);
		cudaStreamEndCapture(s, &g);
		cudaGraphInstantiate(&e, g, 0);
		cudaGraphLaunch(e, s);
	}
	k<<<1, 32>>>(d);
	cudaDeviceSynchronize();
	cuptiActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
	if (!strncmp(mode, "after-finalize", 14)) {
		cuptiFinalize();
		cuptiGetTimestamp(&t);
	}
	printf("rules %s: survived\n", mode);
	return 0;
}
