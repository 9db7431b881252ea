/* The simulation's control call, found at run time (the real driver has
 * none): the duration of the next kernel this thread launches. */
#include <dlfcn.h>
#include <stdint.h>

static inline void sim_next(uint64_t ns)
{
	static void (*f)(uint64_t);

	if (!f)
		*(void **)&f = dlsym(RTLD_DEFAULT, "simNextKernelDuration");
	if (f)
		f(ns);
}
