/* A process that SIGKILLs itself after a known set of calls, for
 * test_pftrace_flight.py: the same calls must come back from `tprof
 * recover` in either format.
 *
 *   killself N1 N2
 *
 * Two threads (main and "worker") each make N1 pairs of calls
 * cudaMemset(ptr = base + i, 0, 16), cudaStreamSynchronize(0), then
 * sleep 1.3 s (the writer syncs what it drained into the .tmp), then N2
 * pairs more as fast as they go (most still in the rings at the kill),
 * then main SIGKILLs the process. base: 0 for main, 1000000 for the
 * worker. */
#define _GNU_SOURCE
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#include <cuda_runtime_api.h>

static long n1, n2;
static pthread_barrier_t bar;

static void calls(uintptr_t base, long from, long to)
{
	for (long i = from; i <= to; i++) {
		cudaMemset((void *)(base + (uintptr_t)i), 0, 16);
		cudaStreamSynchronize(0);
	}
}

static void nap(void)
{
	struct timespec ts = { 1, 300000000L };

	nanosleep(&ts, NULL);
}

static void *worker(void *arg)
{
	(void)arg;
	calls(1000000, 1, n1);
	pthread_barrier_wait(&bar);
	pthread_barrier_wait(&bar);
	calls(1000000, n1 + 1, n1 + n2);
	pthread_barrier_wait(&bar);
	pause();
	return NULL;
}

int main(int argc, char **argv)
{
	pthread_t t;

	if (argc != 3)
		return 2;
	n1 = atol(argv[1]);
	n2 = atol(argv[2]);
	pthread_barrier_init(&bar, NULL, 2);
	pthread_create(&t, NULL, worker, NULL);
	calls(0, 1, n1);
	pthread_barrier_wait(&bar);
	nap();
	pthread_barrier_wait(&bar);
	calls(0, n1 + 1, n1 + n2);
	pthread_barrier_wait(&bar);
	kill(getpid(), SIGKILL);
	return 1;
}
