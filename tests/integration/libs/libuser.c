/* A library linked to libcudart, loaded by dlopen_local with RTLD_LOCAL. */
#include <cuda_runtime_api.h>

__attribute__((visibility("default"))) int user_alloc(int n)
{
	void *p;
	int i, rc = 0;

	for (i = 0; i < n; i++)
		rc = cudaMalloc(&p, 1024);
	return rc;
}
