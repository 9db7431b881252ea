/* A program without GPU code of its own that loads a library with GPU
 * code after some CPU work, then launches from it.
 * usage: late_main LIBRARY [LAUNCHES [init]] */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

int main(int argc, char **argv)
{
	struct timespec pause = { 0, 50000000 };
	int n = argc > 2 ? atoi(argv[2]) : 10;
	int (*run)(int);
	void *h;

	/* "init": the driver initialized, and a context made, before any
	 * CUDA call a preloaded tool sees (as a driver probe would). */
	if (argc > 3 && !strcmp(argv[3], "init")) {
		void *cu = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL), *ctx;
		int (*init)(unsigned);
		int (*retain)(void **, int);

		*(void **)&init = dlsym(cu, "cuInit");
		*(void **)&retain = dlsym(cu, "cuDevicePrimaryCtxRetain");
		init(0);
		retain(&ctx, 0);
	}
	nanosleep(&pause, NULL);
	h = dlopen(argv[1], RTLD_NOW | RTLD_LOCAL);
	if (!h) {
		fprintf(stderr, "%s\n", dlerror());
		return 1;
	}
	*(void **)&run = dlsym(h, "late_run");
	printf("late_main: %d\n", run(n));
	return 0;
}
