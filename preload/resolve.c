/* preload/: the hooks and the library's life in the process (constructor,
 * signals, fork, exec); the top layer. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stddef.h>

#include "cupti/cupti.h"
#include "trace/log.h"
#include "trace/thread.h"
#include "resolve.h"

const char *const tp_libs_cudart[] = {
	"libcudart.so.13", "libcudart.so.12", "libcudart.so", NULL,
};

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

int tp_resolve(void **slot, const char *name, const char *const *libs)
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
	tp_cupti_start();
	p = find(name, libs);
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
