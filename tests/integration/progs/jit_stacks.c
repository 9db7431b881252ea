/* CUDA calls made through stand-ins for the Python perf trampolines
 * (code without unwind information in anonymous memory), named in
 * /tmp/perf-<pid>.map as the interpreter names them:
 *
 *   jit_stacks   main -> run_a -> [py::step_a, 3.12 trampoline] ->
 *                step_a -> cudaMemcpy, then main -> run_b ->
 *                [py::step_b, 3.14 trampoline] -> step_b ->
 *                cudaStreamSynchronize
 *
 * The map file is left behind, as the interpreter leaves it: tprof reads
 * it when it writes the trace, at exit.
 */
#include <stdio.h>
#include <unistd.h>

#include <cuda_runtime_api.h>

#include "tests/common/jit_tramp.h"

static long step_a(void *a, void *b, long c)
{
	char buf[64] = { 0 };

	(void)a, (void)b;
	return cudaMemcpy(buf, buf + 32, 16, cudaMemcpyHostToDevice) + c;
}

static long step_b(void *a, void *b, long c)
{
	(void)a, (void)b;
	return cudaStreamSynchronize(0) + c;
}

__attribute__((noinline)) static long run_a(jit_tramp t)
{
	long r = t(NULL, NULL, 1, step_a);

	__asm__ volatile("" ::: "memory");
	return r + 1;
}

__attribute__((noinline)) static long run_b(jit_tramp t)
{
	long r = t(NULL, NULL, 1, step_b);

	__asm__ volatile("" ::: "memory");
	return r + 1;
}

static int write_map(jit_tramp *t, unsigned *sizes)
{
	char path[64];
	FILE *f;

	snprintf(path, sizeof(path), "/tmp/perf-%d.map", (int)getpid());
	f = fopen(path, "w");
	if (!f)
		return -1;
	fprintf(f, "%lx %x py::step_a:/fake/train.py\n",
		(unsigned long)t[JIT_SUB8], sizes[JIT_SUB8]);
	fprintf(f, "%lx %x py::step_b:/fake/train.py\n",
		(unsigned long)t[JIT_RBP], sizes[JIT_RBP]);
	return fclose(f);
}

int main(void)
{
	jit_tramp t[JIT_KINDS];
	unsigned sizes[JIT_KINDS];
	long rc;

	if (jit_make(t, sizes) < 0 || write_map(t, sizes) < 0) {
		perror("jit_stacks");
		return 1;
	}
	rc = run_a(t[JIT_SUB8]) + run_b(t[JIT_RBP]);
	printf("jit_stacks done %d\n", rc > 0);
	return 0;
}
