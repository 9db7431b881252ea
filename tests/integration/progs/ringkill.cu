// For test_crash.py's rings-file case: a process SIGKILLed while its
// threads record, whose records must all be recovered or counted.
//
//   ringkill COUNTS
//
// Thread "early" makes EARLY_CALLS calls and ends; FAST threads call
// cudaStreamSynchronize as fast as they can; one paced thread launches
// the kernel ring_tick<<<>>> every 2 ms (its name comes from the CUDA
// registration, as for any nvcc-built program). Each counts, in the
// shared file COUNTS (MAP_SHARED, read by the test after the kill), the
// calls it started and finished. Once the early thread has ended and
// LINGER_MS passed, main prints "ready" and waits for the SIGKILL.
#include <cstdio>
#include <cstring>
#include <fcntl.h>
#include <pthread.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#define FAST 3
#define EARLY_CALLS 500
#define LINGER_MS 1600

struct counts {
	unsigned long started;
	unsigned long finished;
	unsigned long spare;
	long tid;
};

// [0] early, [1..FAST] fast, [FAST + 1] paced
static counts *C;

extern "C" __global__ void ring_tick(float *a, int n)
{
	int i = blockIdx.x * blockDim.x + threadIdx.x;
	if (i < n)
		a[i] += 1.0f;
}

static void nap_ms(int ms)
{
	struct timespec ts = { ms / 1000, (ms % 1000) * 1000000L };

	nanosleep(&ts, NULL);
}

static void *early(void *)
{
	C[0].tid = gettid();
	for (int i = 0; i < EARLY_CALLS; i++) {
		__atomic_add_fetch(&C[0].started, 1, __ATOMIC_SEQ_CST);
		cudaStreamSynchronize(0);
		__atomic_add_fetch(&C[0].finished, 1, __ATOMIC_SEQ_CST);
	}
	return NULL;
}

static void *fast(void *arg)
{
	counts *c = (counts *)arg;

	c->tid = gettid();
	for (;;) {
		__atomic_add_fetch(&c->started, 1, __ATOMIC_SEQ_CST);
		cudaStreamSynchronize(0);
		__atomic_add_fetch(&c->finished, 1, __ATOMIC_SEQ_CST);
	}
	return NULL;
}

static void *paced(void *arg)
{
	counts *c = (counts *)arg;

	c->tid = gettid();
	for (;;) {
		__atomic_add_fetch(&c->started, 1, __ATOMIC_SEQ_CST);
		ring_tick<<<2, 64>>>(NULL, 0);
		__atomic_add_fetch(&c->finished, 1, __ATOMIC_SEQ_CST);
		nap_ms(2);
	}
	return NULL;
}

int main(int argc, char **argv)
{
	pthread_t t;
	int fd;

	if (argc < 2)
		return 2;
	fd = open(argv[1], O_RDWR);
	if (fd < 0)
		return 2;
	C = (counts *)mmap(NULL, (FAST + 2) * sizeof(*C),
			   PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (C == MAP_FAILED)
		return 2;
	pthread_create(&t, NULL, early, NULL);
	pthread_join(t, NULL);
	for (int i = 1; i <= FAST; i++)
		pthread_create(&t, NULL, fast, &C[i]);
	pthread_create(&t, NULL, paced, &C[FAST + 1]);
	nap_ms(LINGER_MS);
	printf("ready\n");
	fflush(stdout);
	for (;;)
		pause();
}
