/* Paced hooked calls for the flight recorder's test (test_flight.py):
 *
 *   paced PERIOD_US COUNT FILE
 *
 * makes COUNT calls cudaMemset(ptr = i, 0, 16), i = 1, 2, ..., one every
 * PERIOD_US microseconds (0: at once, a burst; the real runtime refuses them without a GPU, at
 * once; the hook records each, its ptr arg naming it), and after each
 * stores i in FILE (shared memory mapped from it), so whoever stops this
 * process knows the last call it made. */
#include <fcntl.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include <cuda_runtime_api.h>

int main(int argc, char **argv)
{
	struct timespec next;
	long period, count, i;
	volatile int64_t *last;
	int fd;

	if (argc != 4)
		return 2;
	period = atol(argv[1]);
	count = atol(argv[2]);
	fd = open(argv[3], O_RDWR | O_CREAT | O_TRUNC, 0644);
	if (fd < 0 || ftruncate(fd, 4096) < 0)
		return 3;
	last = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (last == MAP_FAILED)
		return 3;
	clock_gettime(CLOCK_MONOTONIC, &next);
	for (i = 1; i <= count; i++) {
		cudaMemset((void *)(uintptr_t)i, 0, 16);
		*last = i;
		if (!period)		/* a burst: as fast as it goes */
			continue;
		next.tv_nsec += period * 1000;
		while (next.tv_nsec >= 1000000000) {
			next.tv_nsec -= 1000000000;
			next.tv_sec++;
		}
		clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &next, NULL);
	}
	return 0;
}
