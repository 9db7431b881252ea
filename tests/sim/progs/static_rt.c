/* A library that carries its own static CUDA runtime, as cuBLAS, cuDNN
 * and NCCL do: it reaches the driver itself (libcuda.so.1 opened with
 * dlopen, as a static cudart does), loads its module at first use and
 * unloads it from an exit handler of its own, registered after its first
 * launches: after the program's and tprof's, so it runs first, while
 * CUPTI is still on.
 * Its last kernels' records are not yet delivered when the module (and
 * with it the kernels' names) goes.
 * static_rt_gemm(n): n launches of its kernels, returns n. */
#include <dlfcn.h>
#include <stdlib.h>

#include "drv_types.h"

static void *mod, *fa, *fb;
static launch_t launch;
static sync_t sync_ctx;
static unload_t unload;
static dur_t dur;
static int registered;

/* The static runtime's own exit handler: its module goes, with work
 * just finished whose records CUPTI still holds. */
static void static_rt_exit(void)
{
	sync_ctx();
	unload(mod);
}

static int init_once(void)
{
	void *h = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL), *ctx;
	init_t init;
	retain_t retain;
	setctx_t setctx;
	load_t load;
	func_t func;

	if (!h)
		return -1;
	init = (init_t)dlsym(h, "cuInit");
	retain = (retain_t)dlsym(h, "cuDevicePrimaryCtxRetain");
	setctx = (setctx_t)dlsym(h, "cuCtxSetCurrent");
	load = (load_t)dlsym(h, "cuModuleLoadData");
	func = (func_t)dlsym(h, "cuModuleGetFunction");
	launch = (launch_t)dlsym(h, "cuLaunchKernel");
	sync_ctx = (sync_t)dlsym(h, "cuCtxSynchronize");
	unload = (unload_t)dlsym(h, "cuModuleUnload");
	dur = (dur_t)dlsym(h, "simNextKernelDuration");
	init(0);
	retain(&ctx, 0);
	setctx(ctx);
	load(&mod, "kernels: sm90_xmma_gemm_f16f16_f32 splitKreduce_kernel");
	func(&fa, mod, "sm90_xmma_gemm_f16f16_f32");
	func(&fb, mod, "splitKreduce_kernel");
	return 0;
}

int static_rt_gemm(int n)
{
	int i;

	if (!mod && init_once() < 0)
		return -1;
	for (i = 0; i < n; i++) {
		if (dur)
			dur(20000);
		launch(i % 2 ? fb : fa, 16, 1, 1, 256, 1, 1, 0, NULL, NULL,
		       NULL);
	}
	/* After its first launches (lazily, as a runtime registers what
	 * it loads on first use): its handler runs before those of the
	 * program and of tools that were registered earlier. */
	if (!registered++)
		atexit(static_rt_exit);
	return n;
}
