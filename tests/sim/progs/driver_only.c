/* The driver API alone, as JAX and Triton use it: libcuda.so.1 opened
 * with dlopen, entry points found with dlsym on its handle (nothing a
 * preloaded library interposes), a module loaded from an image, kernels
 * launched with cuLaunchKernel. With "reload", the module is then
 * unloaded (its kernel names go) and another loaded and launched, as a
 * JIT unloads and loads modules.
 * usage: driver_only [LAUNCHES [reload]] */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>

#include "drv_types.h"

int main(int argc, char **argv)
{
	int n = argc > 1 ? atoi(argv[1]) : 20, i;
	void *h = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
	void *mod, *fa, *fb, *ctx;

	if (!h) {
		fprintf(stderr, "no libcuda.so.1\n");
		return 1;
	}
	init_t init = (init_t)dlsym(h, "cuInit");
	retain_t retain = (retain_t)dlsym(h, "cuDevicePrimaryCtxRetain");
	setctx_t setctx = (setctx_t)dlsym(h, "cuCtxSetCurrent");
	load_t load = (load_t)dlsym(h, "cuModuleLoadData");
	func_t func = (func_t)dlsym(h, "cuModuleGetFunction");
	launch_t launch = (launch_t)dlsym(h, "cuLaunchKernel");
	sync_t sync = (sync_t)dlsym(h, "cuCtxSynchronize");
	dur_t dur = (dur_t)dlsym(h, "simNextKernelDuration");
	unload_t unload = (unload_t)dlsym(h, "cuModuleUnload");

	init(0);
	retain(&ctx, 0);
	setctx(ctx);
	load(&mod, "kernels: triton_red_fused_0 triton_poi_fused_add_1");
	func(&fa, mod, "triton_red_fused_0");
	func(&fb, mod, "triton_poi_fused_add_1");
	for (i = 0; i < n; i++) {
		if (dur)
			dur(4000 + (unsigned long long)i * 100);
		launch(i % 2 ? fb : fa, 8, 1, 1, 128, 1, 1, 0, NULL, NULL,
		       NULL);
	}
	sync();
	if (argc > 2) {
		unload(mod);
		load(&mod, "kernels: triton_per_fused_native_layer_norm_2");
		func(&fa, mod, "triton_per_fused_native_layer_norm_2");
		for (i = 0; i < n; i++)
			launch(fa, 4, 1, 1, 256, 1, 1, 0, NULL, NULL, NULL);
		sync();
	}
	printf("driver_only: %d launches\n", n);
	return 0;
}
