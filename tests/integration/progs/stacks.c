/* Calls that reach the CUDA runtime through known functions, for the
 * call-stack tests:
 *
 *   stacks N    N times: main -> layer_two -> layer_one -> do_copy ->
 *               cudaMemcpy, then main -> do_sync -> cudaStreamSynchronize
 */
#include <stdio.h>
#include <stdlib.h>

#include <cuda_runtime_api.h>

__attribute__((noinline)) static int do_copy(void)
{
	char buf[64] = { 0 };

	/* Not a tail call: do_copy must stay on the stack. */
	return cudaMemcpy(buf, buf + 32, 16, cudaMemcpyHostToDevice) + 1;
}

__attribute__((noinline)) static int layer_one(void)
{
	return do_copy() + 1;
}

__attribute__((noinline)) int layer_two(void)
{
	return layer_one() + 1;
}

__attribute__((noinline)) static int do_sync(void)
{
	return cudaStreamSynchronize(0) + 1;
}

int main(int argc, char **argv)
{
	int n = argc > 1 ? atoi(argv[1]) : 1, i, rc = 0;

	for (i = 0; i < n; i++) {
		rc += layer_two();
		rc += do_sync();
	}
	printf("stacks done %d\n", rc > 0);
	return 0;
}
