/* hooks/cudart/: the cudart hooks, on hooks/ (resolve.c: how the real
 * functions are found) and every library folder below it. */
/* Copies, memsets, allocations. */
#include <cuda_runtime_api.h>

#include "hooks/hook.h"

#include "cudart_variants.h"

static inline void fill_copy(struct tp_event *e, void *dst, const void *src,
			     size_t bytes, enum cudaMemcpyKind kind,
			     cudaStream_t s)
{
	e->a.copy.dst = TP_PTR(dst);
	e->a.copy.src = TP_PTR(src);
	e->a.copy.bytes = bytes;
	e->a.copy.kind = (uint32_t)kind;
	e->a.copy.height = 0;
	e->stream = TP_PTR(s);
}

static inline void fill_copy2d(struct tp_event *e, void *dst, const void *src,
			       size_t w, size_t h, enum cudaMemcpyKind kind,
			       cudaStream_t s)
{
	fill_copy(e, dst, src, w * h, kind, s);
	e->a.copy.height = (uint32_t)h;
}

static inline void fill_peer(struct tp_event *e, void *dst, int dd,
			     const void *src, int sd, size_t n,
			     cudaStream_t s)
{
	fill_copy(e, dst, src, n, cudaMemcpyDeviceToDevice, s);
	e->a.copy.dst_dev = dd;
	e->a.copy.src_dev = sd;
}

static inline void fill_mem(struct tp_event *e, const void *p, size_t n,
			    uint32_t flags, cudaStream_t s)
{
	e->a.mem.ptr = TP_PTR(p);
	e->a.mem.bytes = n;
	e->a.mem.flags = flags;
	e->a.mem.value = 0;
	e->stream = TP_PTR(s);
}

/* The pointer an allocation returned, when it returned one. */
#define OUT_PTR(pp) (ret == cudaSuccess && (pp) ? *(pp) : NULL)

TP_HOOK(cudaMemcpy, MEMCPY,
	(void *d, const void *s, size_t n, enum cudaMemcpyKind k),
	(d, s, n, k), fill_copy(e, d, s, n, k, 0);)
TP_HOOK(cudaMemcpy_ptds, MEMCPY_PTDS,
	(void *d, const void *s, size_t n, enum cudaMemcpyKind k),
	(d, s, n, k), fill_copy(e, d, s, n, k, 0);)
TP_HOOK(cudaMemcpyAsync, MEMCPY_ASYNC,
	(void *d, const void *s, size_t n, enum cudaMemcpyKind k,
	 cudaStream_t st),
	(d, s, n, k, st), fill_copy(e, d, s, n, k, st);)
TP_HOOK(cudaMemcpyAsync_ptsz, MEMCPY_ASYNC_PTSZ,
	(void *d, const void *s, size_t n, enum cudaMemcpyKind k,
	 cudaStream_t st),
	(d, s, n, k, st), fill_copy(e, d, s, n, k, st);)
TP_HOOK(cudaMemcpy2D, MEMCPY2D,
	(void *d, size_t dp, const void *s, size_t sp, size_t w, size_t h,
	 enum cudaMemcpyKind k),
	(d, dp, s, sp, w, h, k), fill_copy2d(e, d, s, w, h, k, 0);)
TP_HOOK(cudaMemcpy2D_ptds, MEMCPY2D_PTDS,
	(void *d, size_t dp, const void *s, size_t sp, size_t w, size_t h,
	 enum cudaMemcpyKind k),
	(d, dp, s, sp, w, h, k), fill_copy2d(e, d, s, w, h, k, 0);)
TP_HOOK(cudaMemcpy2DAsync, MEMCPY2D_ASYNC,
	(void *d, size_t dp, const void *s, size_t sp, size_t w, size_t h,
	 enum cudaMemcpyKind k, cudaStream_t st),
	(d, dp, s, sp, w, h, k, st), fill_copy2d(e, d, s, w, h, k, st);)
TP_HOOK(cudaMemcpy2DAsync_ptsz, MEMCPY2D_ASYNC_PTSZ,
	(void *d, size_t dp, const void *s, size_t sp, size_t w, size_t h,
	 enum cudaMemcpyKind k, cudaStream_t st),
	(d, dp, s, sp, w, h, k, st), fill_copy2d(e, d, s, w, h, k, st);)
TP_HOOK(cudaMemcpyPeer, MEMCPY_PEER,
	(void *d, int dd, const void *s, int sd, size_t n),
	(d, dd, s, sd, n), fill_peer(e, d, dd, s, sd, n, 0);)
TP_HOOK(cudaMemcpyPeerAsync, MEMCPY_PEER_ASYNC,
	(void *d, int dd, const void *s, int sd, size_t n, cudaStream_t st),
	(d, dd, s, sd, n, st), fill_peer(e, d, dd, s, sd, n, st);)

TP_HOOK(cudaMemset, MEMSET, (void *p, int v, size_t n), (p, v, n),
	fill_mem(e, p, n, 0, 0); e->a.mem.value = v;)
TP_HOOK(cudaMemset_ptds, MEMSET_PTDS, (void *p, int v, size_t n), (p, v, n),
	fill_mem(e, p, n, 0, 0); e->a.mem.value = v;)
TP_HOOK(cudaMemsetAsync, MEMSET_ASYNC,
	(void *p, int v, size_t n, cudaStream_t s), (p, v, n, s),
	fill_mem(e, p, n, 0, s); e->a.mem.value = v;)
TP_HOOK(cudaMemsetAsync_ptsz, MEMSET_ASYNC_PTSZ,
	(void *p, int v, size_t n, cudaStream_t s), (p, v, n, s),
	fill_mem(e, p, n, 0, s); e->a.mem.value = v;)

TP_HOOK(cudaMalloc, MALLOC, (void **p, size_t n), (p, n),
	fill_mem(e, OUT_PTR(p), n, 0, 0);)
TP_HOOK(cudaFree, FREE, (void *p), (p), fill_mem(e, p, 0, 0, 0);)
TP_HOOK(cudaMallocAsync, MALLOC_ASYNC, (void **p, size_t n, cudaStream_t s),
	(p, n, s), fill_mem(e, OUT_PTR(p), n, 0, s);)
TP_HOOK(cudaMallocAsync_ptsz, MALLOC_ASYNC_PTSZ,
	(void **p, size_t n, cudaStream_t s), (p, n, s),
	fill_mem(e, OUT_PTR(p), n, 0, s);)
TP_HOOK(cudaFreeAsync, FREE_ASYNC, (void *p, cudaStream_t s), (p, s),
	fill_mem(e, p, 0, 0, s);)
TP_HOOK(cudaFreeAsync_ptsz, FREE_ASYNC_PTSZ, (void *p, cudaStream_t s),
	(p, s), fill_mem(e, p, 0, 0, s);)
TP_HOOK(cudaMallocHost, MALLOC_HOST, (void **p, size_t n), (p, n),
	fill_mem(e, OUT_PTR(p), n, 0, 0);)
TP_HOOK(cudaHostAlloc, HOST_ALLOC, (void **p, size_t n, unsigned int f),
	(p, n, f), fill_mem(e, OUT_PTR(p), n, f, 0);)
TP_HOOK(cudaFreeHost, FREE_HOST, (void *p), (p), fill_mem(e, p, 0, 0, 0);)
TP_HOOK(cudaMallocManaged, MALLOC_MANAGED,
	(void **p, size_t n, unsigned int f), (p, n, f),
	fill_mem(e, OUT_PTR(p), n, f, 0);)
