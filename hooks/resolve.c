/* hooks/: the hooked entry points (cudart, cuBLAS, cuDNN, NCCL, NVTX),
 * each library in its own folder, and how the real functions are found; on
 * every library folder below preload/. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stddef.h>

#include "cupti/cupti.h"
#include "util/log.h"
#include "record/thread.h"
#include "resolve.h"

const char *const tp_libs_cudart[] = {
	"libcudart.so.13", "libcudart.so.12", "libcudart.so", NULL,
};
const char *const tp_libs_cudnn[] = { "libcudnn.so.9", NULL };

static void *find(const char *name, const char *const *libs)
{
	void *p = dlsym(RTLD_NEXT, name);
	int i;

	for (i = 0; !p && libs[i]; i++) {
		void *h = dlopen(libs[i], RTLD_LAZY | RTLD_NOLOAD);

		if (!h)
			continue;
		p = dlsym(h, name);
		dlclose(h);
	}
	return p;
}

/* Each missing symbol is reported once; `name` is the hook's literal, so
 * its address identifies it. Racing threads may both print: harmless. */
static int already_reported(const char *name)
{
	static const char *seen[256];
	unsigned i;

	for (i = 0; i < 256; i++) {
		const char *s = __atomic_load_n(&seen[i], __ATOMIC_RELAXED);

		if (s == name)
			return 1;
		if (!s) {
			__atomic_store_n(&seen[i], name, __ATOMIC_RELAXED);
			return 0;
		}
	}
	return 1;
}

static struct {
	const char *const *libs;
	const char *name;
	void *fn;
} companions[] = {
	[TP_CUDART_ERROR_NAME] = { tp_libs_cudart, "cudaGetErrorName", NULL },
	[TP_CUDNN_ERROR_STRING] = { tp_libs_cudnn, "cudnnGetErrorString", NULL },
};

void *tp_resolve_companion(enum tp_companion c)
{
	return __atomic_load_n(&companions[c].fn, __ATOMIC_RELAXED);
}

/* With a function of libs found: the companions from the same libraries
 * (self is internal: dlsym records nothing). */
static void find_companions(const char *const *libs)
{
	unsigned i;

	for (i = 0; i < sizeof(companions) / sizeof(companions[0]); i++)
		if (companions[i].libs == libs &&
		    !__atomic_load_n(&companions[i].fn, __ATOMIC_RELAXED))
			__atomic_store_n(&companions[i].fn,
					 find(companions[i].name, libs),
					 __ATOMIC_RELAXED);
}

static int used;
/* The rings decoder (rings_decode.c) runs in tprof recover, where the
 * program's libraries are normally absent: an error name it cannot find
 * is left out of the event without a line. */
static int quiet;

void tp_resolve_set_quiet(void)
{
	quiet = 1;
}

int tp_resolve_used(void)
{
	return __atomic_load_n(&used, __ATOMIC_RELAXED);
}

/* start_cupti: CUPTI is started first (before the real call, so before
 * any GPU work it makes), unless the call is one the generated
 * constructors of a library with device code make (tp_resolve_ctor). */
static int resolve(void **slot, const char *name, const char *const *libs,
		   int start_cupti)
{
	struct tp_thread *self = tp_self;
	void *p;

	/* Tried once: the decoder formats millions of records. */
	if (quiet && already_reported(name))
		return 0;
	__atomic_store_n(&used, 1, __ATOMIC_RELAXED);
	/* dlsym may call back into hooked code (malloc interposers...):
	 * nothing is recorded meanwhile. */
	tp_self = tp_thread_internal();
	if (start_cupti)
		tp_cupti_start();
	p = find(name, libs);
	if (p)
		find_companions(libs);
	tp_self = self;
	if (p) {
		__atomic_store_n(slot, p, __ATOMIC_RELAXED);
		return 1;
	}
	if (!quiet && !already_reported(name))
		tp_error("cannot find the real %s (is %s loaded?); the call "
			 "returns the library's 'not initialized' error", name,
			 libs[0]);
	return 0;
}

int tp_resolve(void **slot, const char *name, const char *const *libs)
{
	return resolve(slot, name, libs, 1);
}

/* A library's constructors run under the dynamic loader's lock (dlopen
 * holds it throughout: `import torch` loading libtorch_cuda), where
 * CUPTI's start-up is not safe: NVIDIA documents InitializeInjection
 * and the program's ordinary code as the places to start it, and a
 * thread of CUPTI's that needs the loader while the start-up waits for
 * it would deadlock. The next CUDA call, or cuInit's InitializeInjection,
 * starts it, still before any GPU work. */
int tp_resolve_ctor(void **slot, const char *name, const char *const *libs)
{
	return resolve(slot, name, libs, 0);
}
