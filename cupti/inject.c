/* cupti/: the CUPTI client: GPU activity, API callbacks, devices, GPU
 * tracks; on util/ .. output/. */
/* Starting CUPTI in programs no hook sees before their first kernel.
 *
 * A program that uses only the driver API (JAX, Triton: libcuda.so.1
 * dlopen-ed, entry points found with dlsym on its handle or through
 * cuGetProcAddress) calls nothing tprof interposes. The driver itself
 * offers the hook: at cuInit it loads the library named by
 * CUDA_INJECTION64_PATH and calls its InitializeInjection (the mechanism
 * NVIDIA's tools use). tprof names itself there at load, when nothing
 * else is named, and starts CUPTI from InitializeInjection; a program
 * that calls the runtime first has CUPTI started already (a hook, or the
 * program's own GPU code at load), and the call is then a no-op.
 *
 * A tool already named there (nsys, compute-sanitizer, another
 * profiler) is left in place.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdlib.h>

#include "config/config.h"
#include "session/session.h"
#include "cupti.h"

#define INJECTION "CUDA_INJECTION64_PATH"

void tp_cupti_inject_setup(void)
{
	Dl_info info;

	if (!tp_sess.active || !(tp_sess.cfg.sources & TP_SRC_GPU))
		return;
	if (getenv(INJECTION))
		return;
	if (!dladdr((void *)tp_cupti_inject_setup, &info) || !info.dli_fname ||
	    info.dli_fname[0] != '/')
		return;
	setenv(INJECTION, info.dli_fname, 0);
}

/* Called by the driver, inside cuInit, on the thread that called it. */
__attribute__((visibility("default"))) int InitializeInjection(void)
{
	tp_cupti_start();
	return 1;
}
