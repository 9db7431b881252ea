/* The recording thread's own cost, without cudart or the PLT around it:
 * tp_rec_begin / tp_rec_end / tp_rec_commit with the fields a launch hook
 * fills, on one thread, with no writer running.
 *
 * usage: bench_ring EVENTS REPS
 *
 * Each repetition runs on a new thread, so it gets a new ring of EVENTS
 * slots (rounded down to a power of two) and times passes over it:
 * the first also faults in the ring's pages, as the first pass of a real
 * run does; the second runs on pages already touched (the steady state
 * once the ring has wrapped). Before each pass the thread empties its own
 * ring as the writer would, so these two passes drop nothing.
 *
 * A third pass then appends as many events again to the ring left full,
 * which nobody empties: every one takes the drop path.
 *
 * Prints "fresh NS", "warm NS" and "full NS" (ns per append; full: per
 * dropped event) once per repetition, and "dropped N" at the end (the
 * third passes' drops, checked to be all of them).
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "hooks/cudart/cudart_apis.h"
#include "record/clock.h"
#include "config/config.h"
#include "record/thread.h"

struct sample {
	unsigned long events;
	double fresh;
	double warm;
	double full;
	unsigned long long dropped;
};

/* Stands in for a kernel's host stub: only its address is recorded. */
static void bench_kernel(void)
{
}

/* What TP_HOOK records for cudaLaunchKernel, minus the real call. */
static inline void append(unsigned long i)
{
	struct tp_event *e;
	struct tp_rec r;

	if (!tp_rec_begin(&r, TP_SRC_CUDA))
		return;
	e = tp_rec_end(&r, TP_CUDART_LAUNCH, 0);
	if (!e)
		return;
	e->a.launch.func = (uint64_t)(uintptr_t)bench_kernel;
	e->a.launch.grid[0] = (uint32_t)i;
	e->a.launch.grid[1] = 1;
	e->a.launch.grid[2] = 1;
	e->a.launch.block[0] = 256;
	e->a.launch.block[1] = 1;
	e->a.launch.block[2] = 1;
	e->a.launch.shmem = 0;
	e->stream = 0;
	tp_rec_commit(&r);
}

/* ns per append over n appends */
static double pass(unsigned long n)
{
	uint64_t t0, t1;
	unsigned long i;

	t0 = tp_clock_ns(CLOCK_MONOTONIC);
	for (i = 0; i < n; i++)
		append(i);
	t1 = tp_clock_ns(CLOCK_MONOTONIC);
	return (double)(t1 - t0) / (double)n;
}

/* What the writer would do: consume everything published so far. */
static void empty_ring(struct tp_ring *r)
{
	uint64_t head = __atomic_load_n(&r->head, __ATOMIC_ACQUIRE);

	__atomic_store_n(&r->tail, head, __ATOMIC_RELEASE);
}

static void *rep_main(void *arg)
{
	struct sample *s = arg;

	append(0);		/* attaches: makes this thread's ring */
	if (!tp_self || tp_self->internal)
		return NULL;
	empty_ring(&tp_self->ring);
	s->fresh = pass(s->events);
	empty_ring(&tp_self->ring);
	s->warm = pass(s->events);
	/* The ring is full now and nobody empties it: every append of this
	 * pass takes the drop path (it must be the cheap one). */
	s->full = pass(s->events);
	s->dropped = tp_ring_dropped(&tp_self->ring);
	return NULL;
}

/* The ring of a thread that has exited: nobody else frees it here. */
static void free_rings(void)
{
	struct tp_thread *t, *next;

	for (t = tp_thread_list(); t; t = next) {
		next = t->next;
		tp_thread_unlink(t);
		tp_thread_free(t);
	}
}

static int run_rep(unsigned long events, unsigned long long *dropped)
{
	struct sample s = { .events = events };
	pthread_t th;

	if (pthread_create(&th, NULL, rep_main, &s)) {
		fprintf(stderr, "bench_ring: cannot create a thread\n");
		return -1;
	}
	pthread_join(th, NULL);
	free_rings();
	if (s.fresh == 0) {
		fprintf(stderr, "bench_ring: no ring was made\n");
		return -1;
	}
	if (s.dropped != s.events) {
		fprintf(stderr, "bench_ring: %llu of %lu appends to a full "
			"ring dropped\n", s.dropped, s.events);
		return -1;
	}
	printf("fresh %.3f\nwarm %.3f\nfull %.3f\n", s.fresh, s.warm, s.full);
	*dropped += s.dropped;
	return 0;
}

int main(int argc, char **argv)
{
	unsigned long events = 1, want, reps, i;
	unsigned long long dropped = 0;

	if (argc != 3) {
		fprintf(stderr, "usage: bench_ring EVENTS REPS\n");
		return 2;
	}
	want = strtoul(argv[1], NULL, 10);
	reps = strtoul(argv[2], NULL, 10);
	while (events * 2 <= want)
		events *= 2;
	/* What tp_session_init does for the hot path: TSC ticks where the
	 * kernel trusts them, the cudart names, every source on. */
	tp_clock_init();
	tp_cudart_register();
	tp_thread_set_ring_bytes(events * sizeof(struct tp_event));
	tp_recording = TP_SRC_ALL;
	for (i = 0; i < reps; i++)
		if (run_rep(events, &dropped) < 0)
			return 1;
	printf("dropped %llu\n", dropped);
	return 0;
}
