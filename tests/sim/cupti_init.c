/* CUPTI's start-up and the dynamic loader's lock (part of libcupti.so).
 *
 * CUPTI starts at its first subscription or buffer registration: it
 * starts a thread of its own which, holding a lock of CUPTI's, loads a
 * library (dlopen, as CUPTI loads its helper libraries when it needs
 * them); the start-up then takes that lock. NVIDIA documents two places
 * to start CUPTI from: InitializeInjection (CUDA_INJECTION64_PATH) and
 * the program's ordinary code. Started inside a library constructor
 * instead, the start-up runs under the loader's lock, which dlopen holds
 * for all of a library's constructors: the thread waits for the loader's
 * lock while holding CUPTI's, the start-up waits for CUPTI's while
 * holding the loader's. The real process hangs there for good; the
 * simulation waits SIM_LOADER_WAIT_NS (2 s) for CUPTI's lock and then
 * aborts, logging {"ev":"abort","why":"loader lock"}.
 *
 * Loading libcupti is logged too ({"ev":"loaded","lib":"libcupti"}):
 * a profiler that leaves CUPTI to another tool must not load it.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "sim.h"
#include "cupti_init.h"

static pthread_mutex_t cupti_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_once_t once = PTHREAD_ONCE_INIT;
static int holding;

__attribute__((constructor)) static void loaded(void)
{
	sim_log("{\"ev\":\"loaded\",\"lib\":\"libcupti\"}");
}

/* CUPTI's helper thread: it loads what it needs under CUPTI's lock. */
static void *helper(void *arg)
{
	void *h;

	(void)arg;
	pthread_mutex_lock(&cupti_lock);
	__atomic_store_n(&holding, 1, __ATOMIC_RELEASE);
	h = dlopen("libcuda.so.1", RTLD_LAZY | RTLD_NOLOAD);
	if (h)
		dlclose(h);
	pthread_mutex_unlock(&cupti_lock);
	return NULL;
}

static uint64_t wait_ns(void)
{
	const char *e = getenv("SIM_LOADER_WAIT_NS");

	return e ? strtoull(e, NULL, 10) : 2000000000ull;
}

static void start(void)
{
	struct timespec ts, nap = { 0, 100000 };
	pthread_t t;
	uint64_t ns;
	int r;

	if (pthread_create(&t, NULL, helper, NULL))
		return;
	pthread_detach(t);
	/* At its worst: the helper has CUPTI's lock before the start-up
	 * wants it. */
	while (!__atomic_load_n(&holding, __ATOMIC_ACQUIRE))
		nanosleep(&nap, NULL);
	clock_gettime(CLOCK_REALTIME, &ts);
	ns = (uint64_t)ts.tv_nsec + wait_ns();
	ts.tv_sec += (time_t)(ns / 1000000000ull);
	ts.tv_nsec = (long)(ns % 1000000000ull);
	r = pthread_mutex_timedlock(&cupti_lock, &ts);
	if (r == ETIMEDOUT) {
		fprintf(stderr, "cupti-sim: CUPTI started under the dynamic "
			"loader's lock (inside a library constructor): its "
			"thread's dlopen waits for that lock while holding "
			"CUPTI's: deadlock\n");
		sim_log("{\"ev\":\"abort\",\"why\":\"loader lock\"}");
		abort();
	}
	if (!r)
		pthread_mutex_unlock(&cupti_lock);
}

void sim_cupti_start(void)
{
	pthread_once(&once, start);
}
