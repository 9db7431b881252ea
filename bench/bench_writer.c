/* The writer's throughput on one core: drain, format as JSON, gzip and
 * write realistic kernel launch records, driven synchronously on this
 * thread so that nothing else shares the time measured.
 *
 * usage: bench_writer DIR EVENTS
 *
 * The records are what the launch hook writes: a cycle of launches with
 * the grids, blocks and streams of a small training step, each about
 * 1 us after the previous one with nanosecond jitter (the digits a real
 * trace has), naming kernels whose host stubs are functions of this
 * program: the writer resolves their names once (here from the ELF
 * symbol table, in a real run from __cudaRegisterFunction) and formats
 * the same strings as it would for a real run. The ring is filled one
 * chunk at a time (what the writer finds at one wake-up); only
 * tp_writer_open, tp_writer_drain and tp_writer_finish are timed, never
 * the filling.
 *
 * Prints "events", "dropped", "raw" (JSON bytes), "file" (gzip bytes),
 * "wall_ns" and "cpu_ns" (time in the writer's steps) and "demangled"
 * (whether kernel names could be demangled), one per line.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "hooks/cudart/cudart_apis.h"
#include "record/clock.h"
#include "gzip/gzip_isal.h"
#include "session/session.h"
#include "record/thread.h"
#include "output/writer.h"
#include "launch_gen.h"

/* Half the default ring: about one writer cycle's worth of launches. */
#define CHUNK 65536
#define CALIBRATE_WAIT_MS 150

/* Host stubs of C++ kernels, with template names as long as real ones:
 * the names resolved from them are what a real trace spends most bytes
 * on. Only their addresses and symbol names matter. */
static void k_gemm(void) __asm__("_ZN5bench4gemm11tile_kernelINS0_9Tile"
	"ShapeILi128ELi64ELi32EEE6__halfNS0_8EpilogueIfEEEEvNS0_6ParamsIT0_"
	"T1_EE");
static void k_elementwise(void) __asm__("_ZN5bench3ops16pointwise_kernel"
	"ILi4ENS0_6MulAddIfEENS_4PackIPcLi3EEEEEviT0_T1_");
static void k_reduce(void) __asm__("_ZN5bench3ops13reduce_kernelIfLi512E"
	"NS0_5SumOpIfEEEEvPKT_PT_iT1_");
static void k_softmax(void) __asm__("_ZN5bench3ops14softmax_kernelIfLi1024"
	"ELb0EEEvPT_PKS2_iii");

static void k_gemm(void)
{
}

static void k_elementwise(void)
{
}

static void k_reduce(void)
{
}

static void k_softmax(void)
{
}

/* The generator's kernels by index. */
static void (*const kernel_stub[K_KINDS])(void) = {
	[K_ELEMENTWISE] = k_elementwise,
	[K_GEMM] = k_gemm,
	[K_REDUCE] = k_reduce,
	[K_SOFTMAX] = k_softmax,
};

struct gen {
	struct launch_gen l;
	uint64_t base_ticks;
	double ticks_per_ns;
};

/* One launch record, its times in ticks. */
static void put_launch(struct gen *g, struct tp_event *e)
{
	uint64_t start, end;
	const struct launch *l = next_launch(&g->l, &start, &end);

	e->start = g->base_ticks + (uint64_t)((double)start * g->ticks_per_ns);
	e->end = g->base_ticks + (uint64_t)((double)end * g->ticks_per_ns);
	e->api = TP_CUDART_LAUNCH;
	e->flags = 0;
	e->ret = 0;
	e->stream = l->stream;
	e->a.launch.func = (uint64_t)(uintptr_t)kernel_stub[l->kernel];
	e->a.launch.grid[0] = l->grid[0];
	e->a.launch.grid[1] = l->grid[1];
	e->a.launch.grid[2] = l->grid[2];
	e->a.launch.block[0] = l->block[0];
	e->a.launch.block[1] = l->block[1];
	e->a.launch.block[2] = l->block[2];
	e->a.launch.shmem = l->shmem;
}

static int fill(struct gen *g, struct tp_ring *r, unsigned long n)
{
	unsigned long i;

	for (i = 0; i < n; i++) {
		struct tp_event *e = tp_ring_reserve(r);

		if (!e)
			return -1;
		put_launch(g, e);
		tp_ring_commit(r);
	}
	return 0;
}

struct timer {
	uint64_t wall;
	uint64_t cpu;
	uint64_t wall0;
	uint64_t cpu0;
};

static void timer_start(struct timer *t)
{
	t->wall0 = tp_clock_ns(CLOCK_MONOTONIC);
	t->cpu0 = tp_clock_ns(CLOCK_THREAD_CPUTIME_ID);
}

static void timer_stop(struct timer *t)
{
	t->cpu += tp_clock_ns(CLOCK_THREAD_CPUTIME_ID) - t->cpu0;
	t->wall += tp_clock_ns(CLOCK_MONOTONIC) - t->wall0;
}

/* A C++ program (PyTorch...) has libstdc++ loaded, so the writer shows
 * demangled kernel names, which are longer; this C program loads it
 * for the same names. Without it the names stay mangled: "demangled 0". */
static int load_demangler(void)
{
	return dlopen("libstdc++.so.6", RTLD_NOW | RTLD_GLOBAL) != NULL;
}

/* The tick rate, measured over the wait the writer needs anyway before
 * its first drain (its clock calibration). */
static double wait_calibration(void)
{
	struct tp_clock_point a = tp_clock_sample(), b;
	struct timespec ts = { 0, CALIBRATE_WAIT_MS * 1000000l };

	nanosleep(&ts, NULL);
	b = tp_clock_sample();
	if (b.raw_ns <= a.raw_ns || b.ticks <= a.ticks)
		return 1.0;
	return (double)(b.ticks - a.ticks) / (double)(b.raw_ns - a.raw_ns);
}

static int run(struct gen *g, unsigned long events, struct timer *tm)
{
	struct tp_thread *t = tp_thread_attach();
	unsigned long done = 0, chunk;

	if (!t) {
		fprintf(stderr, "bench_writer: no ring\n");
		return -1;
	}
	chunk = tp_ring_capacity(&t->ring) / 2;
	if (chunk > CHUNK)
		chunk = CHUNK;
	timer_start(tm);
	if (tp_writer_open() < 0)
		return -1;
	timer_stop(tm);
	while (done < events) {
		unsigned long n = events - done < chunk ? events - done : chunk;

		if (fill(g, &t->ring, n) < 0) {
			fprintf(stderr, "bench_writer: the ring filled\n");
			return -1;
		}
		done += n;
		timer_start(tm);
		tp_writer_drain();
		timer_stop(tm);
	}
	timer_start(tm);
	if (tp_writer_finish() < 0)
		return -1;
	timer_stop(tm);
	return 0;
}

int main(int argc, char **argv)
{
	struct gen g = { .l.rng = LAUNCH_GEN_SEED };
	struct timer tm = { 0 };
	struct tp_writer_stats st;
	unsigned long events;
	int demangled;

	if (argc != 3 && !(argc == 4 && !strcmp(argv[3], "zlib"))) {
		fprintf(stderr, "usage: bench_writer DIR EVENTS [zlib]\n");
		return 2;
	}
	/* ISA-L is looked for once per process: a name that is not there
	 * leaves the writer on zlib, for the figure without ISA-L. */
	if (argc == 4)
		tp_isal_load("libtprof-bench-no-isal.so");
	events = strtoul(argv[2], NULL, 10);
	setenv("TPROF_OUTPUT_DIR", argv[1], 1);
	tp_cudart_register();
	if (tp_session_init() < 0)
		return 1;
	demangled = load_demangler();
	make_step(&g.l);
	g.ticks_per_ns = wait_calibration();
	/* After the session anchor, as every recorded tick is. */
	g.base_ticks = tp_ticks();
	if (run(&g, events, &tm) < 0)
		return 1;
	st = tp_writer_stats();
	printf("events %llu\ndropped %llu\nraw %llu\nfile %llu\n"
	       "wall_ns %llu\ncpu_ns %llu\ndemangled %d\ncompressor %s\n",
	       (unsigned long long)st.events, (unsigned long long)st.dropped,
	       (unsigned long long)st.raw_bytes,
	       (unsigned long long)st.file_bytes,
	       (unsigned long long)tm.wall, (unsigned long long)tm.cpu,
	       demangled, st.compressor);
	return 0;
}
