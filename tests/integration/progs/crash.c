/* Deaths that skip the normal exit path, for test_crash.py:
 *
 *   crash MODE COUNTS   MODE: abort | segv | segv-handler | exit3 | kill
 *
 * Thread "early" makes EARLY_CALLS calls and ends; WORKERS threads call
 * cudaStreamSynchronize until the process dies, each counting in the
 * shared file COUNTS (an array of struct counts, MAP_SHARED, so the test
 * reads them after the death) the calls it started and finished. Once the
 * early thread has ended and LINGER_MS passed, main snapshots the
 * counters into the file (snap_finished) and dies by MODE; "kill" prints
 * "ready" and waits for the test's SIGKILL instead. segv-handler installs
 * the program's own SIGSEGV handler (after tprof's, as a program does in
 * main) that writes "own handler" and restores the default action. */
#define _GNU_SOURCE
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include <cuda_runtime_api.h>

#define WORKERS 3
#define EARLY_CALLS 500
#define LINGER_MS 1600

struct counts {
	unsigned long started;
	unsigned long finished;
	unsigned long snap_finished;
	long tid;
};

static struct counts *C;	/* [0] early, [1..WORKERS] the workers */

static void nap_ms(int ms)
{
	struct timespec ts = { ms / 1000, (ms % 1000) * 1000000L };

	nanosleep(&ts, NULL);
}

static void one_call(struct counts *c)
{
	__atomic_add_fetch(&c->started, 1, __ATOMIC_SEQ_CST);
	cudaStreamSynchronize(0);
	__atomic_add_fetch(&c->finished, 1, __ATOMIC_SEQ_CST);
}

static void *early(void *arg)
{
	int i;

	(void)arg;
	C[0].tid = gettid();
	for (i = 0; i < EARLY_CALLS; i++)
		one_call(&C[0]);
	return NULL;
}

static void *worker(void *arg)
{
	struct counts *c = arg;

	c->tid = gettid();
	for (;;) {
		one_call(c);
		if (c->started % 64 == 0)
			nap_ms(1);
	}
	return NULL;
}

static void own_segv(int sig)
{
	static const char msg[] = "own handler\n";

	if (write(STDOUT_FILENO, msg, sizeof(msg) - 1) < 0)
		_exit(9);
	signal(sig, SIG_DFL);
}

static void die(const char *mode)
{
	if (!strcmp(mode, "abort"))
		abort();
	if (!strcmp(mode, "segv") || !strcmp(mode, "segv-handler"))
		*(volatile int *)(unsigned long)sizeof(int) = 1;
	if (!strcmp(mode, "exit3"))
		_exit(3);
	if (!strcmp(mode, "kill")) {
		printf("ready\n");
		fflush(stdout);
		for (;;)
			pause();
	}
}

int main(int argc, char **argv)
{
	pthread_t t;
	int fd, i;

	if (argc < 3)
		return 2;
	fd = open(argv[2], O_RDWR);
	if (fd < 0)
		return 2;
	C = mmap(NULL, (WORKERS + 1) * sizeof(*C), PROT_READ | PROT_WRITE,
		 MAP_SHARED, fd, 0);
	if (C == MAP_FAILED)
		return 2;
	if (!strcmp(argv[1], "segv-handler"))
		signal(SIGSEGV, own_segv);
	pthread_create(&t, NULL, early, NULL);
	pthread_join(t, NULL);
	for (i = 1; i <= WORKERS; i++) {
		pthread_t w;

		pthread_create(&w, NULL, worker, &C[i]);
	}
	nap_ms(LINGER_MS);
	for (i = 0; i <= WORKERS; i++)
		C[i].snap_finished = __atomic_load_n(&C[i].finished,
						     __ATOMIC_SEQ_CST);
	die(argv[1]);
	return 2;
}
