/* Reaches the CUDA runtime only through a library dlopen-ed RTLD_LOCAL,
 * as Python extension modules are: dlsym(RTLD_NEXT) cannot see libcudart
 * from the preloaded library then. Also calls a hooked symbol when no
 * libcudart is loaded at all ("missing").
 *
 *   dlopen_local LIBPATH N    call user_alloc(N) in LIBPATH
 *   dlopen_local missing      look cudaMalloc up globally and call it
 */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef int (*alloc_fn)(int);
typedef int (*malloc_fn)(void **, size_t);

int main(int argc, char **argv)
{
	void *h, *p = NULL;

	if (argc > 1 && !strcmp(argv[1], "missing")) {
		malloc_fn m = (malloc_fn)dlsym(RTLD_DEFAULT, "cudaMalloc");

		if (!m) {
			printf("no cudaMalloc\n");
			return 0;
		}
		printf("cudaMalloc -> %d\n", m(&p, 16));
		printf("cudaMalloc -> %d\n", m(&p, 16));
		return 0;
	}
	if (argc < 3)
		return 2;
	h = dlopen(argv[1], RTLD_NOW | RTLD_LOCAL);
	if (!h) {
		printf("dlopen: %s\n", dlerror());
		return 1;
	}
	printf("user_alloc -> %d\n",
	       ((alloc_fn)dlsym(h, "user_alloc"))(atoi(argv[2])));
	return 0;
}
