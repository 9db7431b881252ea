/* Ranges of every kind at once, as fast as the threads go, for
 * test_range_drops.py: with a small ring, no spill pool and a slow
 * writer, many are dropped, and the test checks that every range in the
 * trace is one that happened, whole.
 *
 * usage: ranges_flood N
 *
 * Five threads, N rounds each (the range names carry the round):
 *   flat:    nvtxRangePushA("f<i>"), nvtxRangePop()
 *   nested:  o<i> { n<i> { j<i> } } with nvtxRangePushA / nvtxRangePop
 *   domains: push "da<i>" in domain A, push "db<i>" in domain B, pop A,
 *            pop B (db<i> outlives da<i>: written clipped)
 *   tprof:   tprof_range_push("t<i>"), tprof_range_pop() (the C API,
 *            found with dlsym as a program that runs without tprof does)
 *   starts:  nvtxRangeStartA("s<i>"), ended by a sixth thread
 *            (nvtxRangeEnd), the ids passed through a queue
 * Prints "pushes P" (pushes made in all) and "starts S".
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <nvtx3/nvToolsExt.h>

#define QUEUE 4096

static int n;
static nvtxDomainHandle_t dom_a, dom_b;
static void (*range_push)(const char *);
static void (*range_pop)(void);

/* Start ids from the starting thread to the ending one. */
static nvtxRangeId_t queue[QUEUE];
static unsigned long q_in, q_out;

static void name(char *buf, size_t len, const char *prefix, int i)
{
	snprintf(buf, len, "%s%d", prefix, i);
}

static void *flat(void *arg)
{
	char b[32];
	int i;

	(void)arg;
	for (i = 0; i < n; i++) {
		name(b, sizeof(b), "f", i);
		nvtxRangePushA(b);
		nvtxRangePop();
	}
	return NULL;
}

static void *nested(void *arg)
{
	char b[32];
	int i;

	(void)arg;
	for (i = 0; i < n; i++) {
		name(b, sizeof(b), "o", i);
		nvtxRangePushA(b);
		name(b, sizeof(b), "n", i);
		nvtxRangePushA(b);
		name(b, sizeof(b), "j", i);
		nvtxRangePushA(b);
		nvtxRangePop();
		nvtxRangePop();
		nvtxRangePop();
	}
	return NULL;
}

static void push_in(nvtxDomainHandle_t d, const char *s)
{
	nvtxEventAttributes_t a;

	memset(&a, 0, sizeof(a));
	a.version = NVTX_VERSION;
	a.size = NVTX_EVENT_ATTRIB_STRUCT_SIZE;
	a.messageType = NVTX_MESSAGE_TYPE_ASCII;
	a.message.ascii = s;
	nvtxDomainRangePushEx(d, &a);
}

static void *domains(void *arg)
{
	char b[32];
	int i;

	(void)arg;
	for (i = 0; i < n; i++) {
		name(b, sizeof(b), "da", i);
		push_in(dom_a, b);
		name(b, sizeof(b), "db", i);
		push_in(dom_b, b);
		nvtxDomainRangePop(dom_a);
		nvtxDomainRangePop(dom_b);
	}
	return NULL;
}

static void *tprof_api(void *arg)
{
	char b[32];
	int i;

	(void)arg;
	if (!range_push || !range_pop)
		return NULL;
	for (i = 0; i < n; i++) {
		name(b, sizeof(b), "t", i);
		range_push(b);
		range_pop();
	}
	return NULL;
}

static void *starter(void *arg)
{
	char b[32];
	int i;

	(void)arg;
	for (i = 0; i < n; i++) {
		name(b, sizeof(b), "s", i);
		while (__atomic_load_n(&q_in, __ATOMIC_ACQUIRE) -
		       __atomic_load_n(&q_out, __ATOMIC_ACQUIRE) == QUEUE)
			;
		queue[q_in % QUEUE] = nvtxRangeStartA(b);
		__atomic_store_n(&q_in, q_in + 1, __ATOMIC_RELEASE);
	}
	return NULL;
}

static void *ender(void *arg)
{
	int i;

	(void)arg;
	for (i = 0; i < n; i++) {
		while (__atomic_load_n(&q_out, __ATOMIC_ACQUIRE) ==
		       __atomic_load_n(&q_in, __ATOMIC_ACQUIRE))
			;
		nvtxRangeEnd(queue[q_out % QUEUE]);
		__atomic_store_n(&q_out, q_out + 1, __ATOMIC_RELEASE);
	}
	return NULL;
}

int main(int argc, char **argv)
{
	void *(*fn[])(void *) = { flat, nested, domains, tprof_api, starter,
				  ender };
	pthread_t th[sizeof(fn) / sizeof(fn[0])];
	unsigned i, k = sizeof(fn) / sizeof(fn[0]);

	n = argc > 1 ? atoi(argv[1]) : 1000;
	dom_a = nvtxDomainCreateA("flood A");
	dom_b = nvtxDomainCreateA("flood B");
	range_push = (void (*)(const char *))dlsym(RTLD_DEFAULT,
						   "tprof_range_push");
	range_pop = (void (*)(void))dlsym(RTLD_DEFAULT, "tprof_range_pop");
	for (i = 0; i < k; i++)
		if (pthread_create(&th[i], NULL, fn[i], NULL))
			return 1;
	for (i = 0; i < k; i++)
		pthread_join(th[i], NULL);
	printf("pushes %d\n", n * (1 + 3 + 2 + (range_push ? 1 : 0)));
	printf("starts %d\n", n);
	return 0;
}
