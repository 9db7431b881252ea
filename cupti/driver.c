/* cupti/: the CUPTI client: GPU activity, API callbacks, devices, GPU
 * tracks; on util/ .. output/. */
/* Whether an NVIDIA driver answers: CUPTI is called only then.
 *
 * Without a working driver, the CUPTI 13.2 that CUDA 13 PyTorch wheels ship
 * recurses without end inside its first call (cuptiGetVersion: its error
 * path restarts its initialisation) and the program dies of a stack
 * overflow at `import torch`. The toolkit's 13.0 returns errors instead,
 * but nothing is to be had from CUPTI without a driver either way.
 * cuDriverGetVersion initialises nothing, so asking it changes nothing for
 * the program (CUDA_VISIBLE_DEVICES set after this still applies).
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdio.h>

#include "cupti.h"

#define STUB_LIBRARY 34		/* CUDA_ERROR_STUB_LIBRARY */

int tp_cuda_driver_check(char *why, size_t wlen)
{
	int (*get_version)(int *);
	void *h = dlopen("libcuda.so.1", RTLD_LAZY | RTLD_NOLOAD);
	int v = 0, r;

	if (!h)
		h = dlopen("libcuda.so.1", RTLD_LAZY | RTLD_LOCAL);
	if (!h) {
		snprintf(why, wlen, "no NVIDIA driver (libcuda.so.1 cannot be "
			 "loaded): run on a machine with a GPU and its driver");
		return -1;
	}
	*(void **)&get_version = dlsym(h, "cuDriverGetVersion");
	if (!get_version) {
		snprintf(why, wlen, "libcuda.so.1 has no cuDriverGetVersion: "
			 "it is not an NVIDIA driver");
		return -1;
	}
	r = get_version(&v);
	if (r == STUB_LIBRARY) {
		snprintf(why, wlen, "no NVIDIA driver: the libcuda.so.1 found "
			 "is the CUDA toolkit's stub; take its stubs directory "
			 "out of LD_LIBRARY_PATH, or run on a machine with a "
			 "GPU and its driver");
		return -1;
	}
	if (r != 0) {
		snprintf(why, wlen, "the NVIDIA driver does not answer "
			 "(cuDriverGetVersion: error %d): check it with "
			 "nvidia-smi", r);
		return -1;
	}
	return 0;
}
