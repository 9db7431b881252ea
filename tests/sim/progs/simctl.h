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

#ifdef __CUDACC__
/* What stands for sim_next on a real GPU (make gpu-check runs these
 * programs on one): a kernel that calls this runs for at least ns, by
 * the GPU's global timer. The simulation runs no device code. */
static __device__ __forceinline__ uint64_t gpu_clock_ns(void)
{
	uint64_t t;

	asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
	return t;
}

static __device__ __forceinline__ void gpu_spin(uint64_t ns)
{
	uint64_t t0 = gpu_clock_ns();

	while (gpu_clock_ns() - t0 < ns)
		;
}
#endif
