/* A program without GPU code of its own that loads a library with GPU
 * code after some CPU work, then launches from it.
 * usage: late_main LIBRARY [LAUNCHES] */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

int main(int argc, char **argv)
{
	struct timespec pause = { 0, 50000000 };
	int n = argc > 2 ? atoi(argv[2]) : 10;
	int (*run)(int);
	void *h;

	nanosleep(&pause, NULL);
	h = dlopen(argv[1], RTLD_NOW | RTLD_LOCAL);
	if (!h) {
		fprintf(stderr, "%s\n", dlerror());
		return 1;
	}
	*(void **)&run = dlsym(h, "late_run");
	printf("late_main: %d\n", run(n));
	return 0;
}
