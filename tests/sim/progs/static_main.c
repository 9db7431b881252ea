/* A program using a library with its own static CUDA runtime
 * (libstatic_rt.so): no GPU code of its own, GEMMs through the library,
 * then it returns from main; the library unloads its module from its own
 * exit handler, while CUPTI is on.
 * usage: static_main [CALLS] */
#include <stdio.h>
#include <stdlib.h>

int static_rt_gemm(int n);

int main(int argc, char **argv)
{
	int calls = argc > 1 ? atoi(argv[1]) : 5, i, n = 0;

	for (i = 0; i < calls; i++)
		n += static_rt_gemm(20);
	printf("static_main: %d launches\n", n);
	return 0;
}
