/* A library whose constructor calls a hooked CUDA function every
 * millisecond for two seconds: while it runs, the thread that dlopen-ed
 * it holds the dynamic loader's lock (test_robust's "loader lock" check:
 * after SIGTERM that thread waits in the hook with the lock held, and a
 * writer that needs the loader could never complete the trace). */
#include <time.h>

#include <cuda_runtime_api.h>

__attribute__((constructor)) static void park_ctor(void)
{
	struct timespec ms = { 0, 1000000 };
	int i;

	for (i = 0; i < 2000; i++) {
		cudaStreamSynchronize(0);
		nanosleep(&ms, NULL);
	}
}
