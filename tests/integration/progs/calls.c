/* Calls every hooked CUDA runtime entry point a known number of times on
 * a known number of threads: tests count the events per thread.
 *
 *   calls THREADS ITERS [all|launch] [EXIT_CODE]
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cuda_profiler_api.h>
#include <cuda_runtime_api.h>

#include "hooks/cudart/cudart_variants.h"

static int iters;
static int launch_only;

/* Stands in for a kernel's host stub: its name comes from the ELF symbol
 * table (it is static, so absent from .dynsym). */
static void fake_kernel_stub(void)
{
}

static void one_of_each(void)
{
	const void *k = (const void *)fake_kernel_stub;
	dim3 g = { 4, 2, 1 }, b = { 128, 1, 1 };
	cudaLaunchConfig_t cfg;
	char h[64];
	void *p = NULL;
	cudaStream_t s = (cudaStream_t)0x10;

	memset(&cfg, 0, sizeof(cfg));
	cfg.gridDim = g;
	cfg.blockDim = b;
	cfg.dynamicSmemBytes = 256;
	__cudaLaunchKernel(NULL, g, b, NULL, 0, 0);
	__cudaLaunchKernel_ptsz(NULL, g, b, NULL, 0, 0);
	cudaLaunchKernel(k, g, b, NULL, 512, s);
	cudaLaunchKernel_ptsz(k, g, b, NULL, 0, 0);
	cudaLaunchKernelExC(&cfg, k, NULL);
	cudaLaunchKernelExC_ptsz(&cfg, k, NULL);
	cudaLaunchCooperativeKernel(k, g, b, NULL, 0, 0);
	cudaLaunchCooperativeKernel_ptsz(k, g, b, NULL, 0, 0);
	cudaGraphLaunch(NULL, 0);
	cudaGraphLaunch_ptsz(NULL, 0);
	cudaMemcpy(h, h + 32, 16, cudaMemcpyHostToDevice);
	cudaMemcpy_ptds(h, h + 32, 16, cudaMemcpyHostToDevice);
	cudaMemcpyAsync(h, h + 32, 16, cudaMemcpyDeviceToHost, s);
	cudaMemcpyAsync_ptsz(h, h + 32, 16, cudaMemcpyDeviceToHost, s);
	cudaMemcpy2D(h, 8, h + 32, 8, 4, 2, cudaMemcpyDeviceToDevice);
	cudaMemcpy2D_ptds(h, 8, h + 32, 8, 4, 2, cudaMemcpyDeviceToDevice);
	cudaMemcpy2DAsync(h, 8, h + 32, 8, 4, 2, cudaMemcpyDefault, s);
	cudaMemcpy2DAsync_ptsz(h, 8, h + 32, 8, 4, 2, cudaMemcpyDefault, s);
	cudaMemcpyPeer(h, 1, h + 32, 0, 16);
	cudaMemcpyPeerAsync(h, 1, h + 32, 0, 16, s);
	cudaMemset(h, 7, 16);
	cudaMemset_ptds(h, 7, 16);
	cudaMemsetAsync(h, 7, 16, s);
	cudaMemsetAsync_ptsz(h, 7, 16, s);
	cudaMalloc(&p, 1 << 20);
	cudaFree(p);
	cudaMallocAsync(&p, 4096, s);
	cudaMallocAsync_ptsz(&p, 4096, s);
	cudaFreeAsync(p, s);
	cudaFreeAsync_ptsz(p, s);
	cudaMallocHost(&p, 8192);
	cudaHostAlloc(&p, 8192, cudaHostAllocPortable);
	cudaFreeHost(p);
	cudaMallocManaged(&p, 65536, cudaMemAttachGlobal);
	cudaStreamSynchronize(s);
	cudaStreamSynchronize_ptsz(s);
	cudaDeviceSynchronize();
	cudaEventSynchronize(NULL);
	cudaStreamWaitEvent(s, NULL, 0);
	cudaStreamWaitEvent_ptsz(s, NULL, 0);
	cudaEventRecord(NULL, s);
	cudaEventRecord_ptsz(NULL, s);
	cudaProfilerStart();
	cudaProfilerStop();
}

static void *worker(void *arg)
{
	const void *k = (const void *)fake_kernel_stub;
	dim3 g = { 1, 1, 1 }, b = { 32, 1, 1 };
	int i;

	(void)arg;
	for (i = 0; i < iters; i++) {
		if (launch_only)
			cudaLaunchKernel(k, g, b, NULL, 0, 0);
		else
			one_of_each();
	}
	return NULL;
}

int main(int argc, char **argv)
{
	int threads = argc > 1 ? atoi(argv[1]) : 1;
	pthread_t t[256];
	int i;

	iters = argc > 2 ? atoi(argv[2]) : 1;
	launch_only = argc > 3 && !strcmp(argv[3], "launch");
	if (threads < 1 || threads > 256)
		return 2;
	for (i = 0; i < threads; i++)
		pthread_create(&t[i], NULL, worker, NULL);
	for (i = 0; i < threads; i++)
		pthread_join(t[i], NULL);
	printf("calls done: %d threads x %d\n", threads, iters);
	return argc > 4 ? atoi(argv[4]) : 0;
}
