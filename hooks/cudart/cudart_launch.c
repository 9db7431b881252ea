/* hooks/cudart/: the cudart hooks, on hooks/ (resolve.c: how the real
 * functions are found) and every library folder below it. */
/* Kernel and graph launches. */
#include <cuda_runtime_api.h>

#include "stacks/symbols.h"
#include "cupti/cupti.h"
#include "hooks/hook.h"

#include "cudart_variants.h"

static inline void fill_launch(struct tp_event *e, const void *func, dim3 g,
			       dim3 b, size_t shmem, cudaStream_t s)
{
	e->a.launch.func = TP_PTR(func);
	e->a.launch.grid[0] = g.x;
	e->a.launch.grid[1] = g.y;
	e->a.launch.grid[2] = g.z;
	e->a.launch.block[0] = b.x;
	e->a.launch.block[1] = b.y;
	e->a.launch.block[2] = b.z;
	e->a.launch.shmem = shmem;
	e->stream = TP_PTR(s);
}

static inline void fill_launch_ex(struct tp_event *e,
				  const cudaLaunchConfig_t *c, const void *f)
{
	static const dim3 zero = { 0, 0, 0 };

	if (!c) {
		fill_launch(e, f, zero, zero, 0, 0);
		return;
	}
	fill_launch(e, f, c->gridDim, c->blockDim, c->dynamicSmemBytes,
		    c->stream);
}

TP_HOOK(__cudaLaunchKernel, LAUNCH,
	(cudaKernel_t k, dim3 g, dim3 b, void **a, size_t sh, cudaStream_t s),
	(k, g, b, a, sh, s),
	fill_launch(e, k, g, b, sh, s);)

TP_HOOK(__cudaLaunchKernel_ptsz, LAUNCH_PTSZ,
	(cudaKernel_t k, dim3 g, dim3 b, void **a, size_t sh, cudaStream_t s),
	(k, g, b, a, sh, s),
	fill_launch(e, k, g, b, sh, s);)

TP_HOOK(cudaLaunchKernel, LAUNCH,
	(const void *f, dim3 g, dim3 b, void **a, size_t sh, cudaStream_t s),
	(f, g, b, a, sh, s),
	fill_launch(e, f, g, b, sh, s);)

TP_HOOK(cudaLaunchKernel_ptsz, LAUNCH_PTSZ,
	(const void *f, dim3 g, dim3 b, void **a, size_t sh, cudaStream_t s),
	(f, g, b, a, sh, s),
	fill_launch(e, f, g, b, sh, s);)

TP_HOOK(cudaLaunchKernelExC, LAUNCH_EX,
	(const cudaLaunchConfig_t *c, const void *f, void **a), (c, f, a),
	fill_launch_ex(e, c, f);)

TP_HOOK(cudaLaunchKernelExC_ptsz, LAUNCH_EX_PTSZ,
	(const cudaLaunchConfig_t *c, const void *f, void **a), (c, f, a),
	fill_launch_ex(e, c, f);)

TP_HOOK(cudaLaunchCooperativeKernel, LAUNCH_COOP,
	(const void *f, dim3 g, dim3 b, void **a, size_t sh, cudaStream_t s),
	(f, g, b, a, sh, s),
	fill_launch(e, f, g, b, sh, s);)

TP_HOOK(cudaLaunchCooperativeKernel_ptsz, LAUNCH_COOP_PTSZ,
	(const void *f, dim3 g, dim3 b, void **a, size_t sh, cudaStream_t s),
	(f, g, b, a, sh, s),
	fill_launch(e, f, g, b, sh, s);)

TP_HOOK(cudaGraphLaunch, GRAPH_LAUNCH, (cudaGraphExec_t g, cudaStream_t s),
	(g, s),
	e->a.ev.handle = TP_PTR(g); e->stream = TP_PTR(s);)

TP_HOOK(cudaGraphLaunch_ptsz, GRAPH_LAUNCH_PTSZ,
	(cudaGraphExec_t g, cudaStream_t s), (g, s),
	e->a.ev.handle = TP_PTR(g); e->stream = TP_PTR(s);)

/* Not recorded: these tell kernel handles and host stubs their names. */
static cudaError_t (*real___cudaGetKernel)(cudaKernel_t *, const void *);

__attribute__((visibility("default")))
cudaError_t __cudaGetKernel(cudaKernel_t *k, const void *f)
{
	cudaError_t ret;

	if (!TP_REAL_OK(__cudaGetKernel, tp_libs_cudart))
		return cudaErrorInitializationError;
	ret = TP_REAL(__cudaGetKernel)(k, f);
	if (ret == cudaSuccess && k)
		tp_sym_note_kernel_handle(*k, f);
	return ret;
}

static void (*real___cudaRegisterFunction)(void **, const char *, char *,
					   const char *, int, uint3 *,
					   uint3 *, dim3 *, dim3 *, int *);

__attribute__((visibility("default")))
void __cudaRegisterFunction(void **m, const char *host, char *dev,
			    const char *name, int limit, uint3 *tid,
			    uint3 *bid, dim3 *bdim, dim3 *gdim, int *wsize)
{
	/* From a library's constructor: CUPTI is not started here. */
	if (!TP_REAL_OK_CTOR(__cudaRegisterFunction, tp_libs_cudart))
		return;
	tp_sym_note_function(host, dev);
	tp_cupti_module_registered();
	TP_REAL(__cudaRegisterFunction)(m, host, dev, name, limit, tid, bid,
					bdim, gdim, wsize);
}
