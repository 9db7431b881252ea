/* A program that dies while its threads make CUDA calls, and keeps its
 * own log of every call it made, for test_death.py: the log is the
 * ground truth a trace of the death is compared with.
 *
 *   deathlog HOW THREADS SECONDS LOG
 *
 * THREADS threads (main and THREADS-1 workers) each call
 * cudaMemset(ptr = (k << 32) | i, 0, 16), i = 1, 2, ..., for thread k
 * (0: main), one every 200 us, and after each return store its end
 * (CLOCK_REALTIME ns, the clock of a trace's end_unix_ns) in LOG, a
 * file mapped MAP_SHARED, so the log
 * survives any death. After SECONDS, worker 1 (not the main thread)
 * stores the time of death in the log and dies by HOW:
 *   abort    abort()
 *   segv     a store through a null pointer
 *   exit     _exit(3)
 *   Exit     exit(3) (atexit handlers and destructors run)
 *   kill     kill(getpid(), SIGKILL)
 * The others go on calling meanwhile.
 *
 * LOG layout (int64 each): [0] time of death, [1] THREADS, then per
 * thread k at 2 + k * (MAX + 1): the number of calls n, then n ends.
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include <cuda_runtime_api.h>

#define MAX 200000
#define PERIOD_NS 200000

static volatile int64_t *log_;
static const char *how;
static double seconds;

static int64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

static void die(void)
{
	log_[0] = now_ns();
	__atomic_thread_fence(__ATOMIC_SEQ_CST);
	if (!strcmp(how, "abort"))
		abort();
	if (!strcmp(how, "segv"))
		*(volatile int *)(uintptr_t)8 = 1;
	if (!strcmp(how, "exit"))
		_exit(3);
	if (!strcmp(how, "Exit"))
		exit(3);
	kill(getpid(), SIGKILL);
}

static void *calls(void *arg)
{
	uintptr_t k = (uintptr_t)arg;
	volatile int64_t *mine = log_ + 2 + k * (MAX + 1);
	int64_t start = now_ns(), end = start + (int64_t)(seconds * 1e9);
	struct timespec next;
	uint64_t i;

	clock_gettime(CLOCK_MONOTONIC, &next);
	for (i = 1; i <= MAX; i++) {
		cudaMemset((void *)(k << 32 | i), 0, 16);
		mine[i] = now_ns();
		mine[0] = (int64_t)i;
		if (k == 1 && mine[i] >= end)
			die();
		next.tv_nsec += PERIOD_NS;
		while (next.tv_nsec >= 1000000000) {
			next.tv_nsec -= 1000000000;
			next.tv_sec++;
		}
		clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &next, NULL);
	}
	pause();
	return NULL;
}

int main(int argc, char **argv)
{
	pthread_t t;
	size_t bytes;
	long n, k;
	int fd;

	if (argc != 5)
		return 2;
	how = argv[1];
	n = atol(argv[2]);
	seconds = atof(argv[3]);
	if (n < 2 || n > 64)
		return 2;
	bytes = (size_t)(2 + n * (MAX + 1)) * sizeof(int64_t);
	fd = open(argv[4], O_RDWR | O_CREAT | O_TRUNC, 0644);
	if (fd < 0 || ftruncate(fd, (off_t)bytes) < 0)
		return 3;
	log_ = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (log_ == MAP_FAILED)
		return 3;
	log_[1] = n;
	for (k = 1; k < n; k++)
		pthread_create(&t, NULL, calls, (void *)(uintptr_t)k);
	calls((void *)0);
	return 0;
}
