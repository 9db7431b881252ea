/* One thread keeps a kernel running on the GPU (20 ms kernels, launched
 * 20 ms apart, never waited for) through the end of the last recording
 * window: when tprof lets CUPTI go after it, the detach's forced flush
 * hands back a buffer, and cuptiFinalize follows at once. The driver API
 * alone, opened with dlopen (the same binary in both modes).
 * usage: window_busy [SECONDS] */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "drv_types.h"

static double now_s(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

int main(int argc, char **argv)
{
	double secs = argc > 1 ? atof(argv[1]) : 1.5, t0;
	struct timespec gap = { 0, 20000000 };
	void *h = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
	void *mod, *f, *ctx;
	int n = 0;

	if (!h)
		return 1;
	((init_t)dlsym(h, "cuInit"))(0);
	((retain_t)dlsym(h, "cuDevicePrimaryCtxRetain"))(&ctx, 0);
	((setctx_t)dlsym(h, "cuCtxSetCurrent"))(ctx);
	((load_t)dlsym(h, "cuModuleLoadData"))(&mod, "kernels: busy_kernel");
	((func_t)dlsym(h, "cuModuleGetFunction"))(&f, mod, "busy_kernel");
	launch_t launch = (launch_t)dlsym(h, "cuLaunchKernel");
	dur_t dur = (dur_t)dlsym(h, "simNextKernelDuration");
	for (t0 = now_s(); now_s() - t0 < secs; n++) {
		if (dur)
			dur(20000000);
		launch(f, 1, 1, 1, 32, 1, 1, 0, NULL, NULL, NULL);
		nanosleep(&gap, NULL);
	}
	((sync_t)dlsym(h, "cuCtxSynchronize"))();
	printf("window_busy: %d launches\n", n);
	return 0;
}
