// CK(call): a CUDA runtime call that fails ends the program with one
// line, "PROG: call: error name", and exit status 1. Define PROG first.
#include <cstdio>
#include <cstdlib>
#include <cuda_runtime.h>

#define CK(x)                                                              \
	do {                                                               \
		cudaError_t e_ = (x);                                      \
		if (e_ != cudaSuccess) {                                   \
			fprintf(stderr, "%s: %s: %s\n", PROG, #x,          \
				cudaGetErrorName(e_));                     \
			exit(1);                                           \
		}                                                          \
	} while (0)
