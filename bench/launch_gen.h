/* The kernel launches bench_writer records and bench_enc encodes: one
 * generator, so both measure the same events (same seed, same mix of
 * kernels, grids, streams and times).
 *
 * A step is a cycle of STEP_LAUNCHES launches with the grids, blocks and
 * streams of a small training step: mostly elementwise kernels, then
 * GEMMs, reductions, softmax, with the sizes of a few layers, on two
 * streams with heap-like addresses. Launches follow each other 100-500 ns
 * after the previous one ended and last 500-900 ns, so starts are about
 * 1 us apart, with the nanosecond jitter a real trace has. */
#ifndef TP_BENCH_LAUNCH_GEN_H
#define TP_BENCH_LAUNCH_GEN_H

#include <stdint.h>

#define STEP_LAUNCHES 256
#define LAUNCH_GEN_SEED 0x9e3779b97f4a7c15ull

/* The kernels, by index (each program names them its own way). */
enum { K_ELEMENTWISE, K_GEMM, K_REDUCE, K_SOFTMAX, K_KINDS };

struct launch {
	int kernel;
	uint32_t grid[3], block[3];
	uint64_t shmem, stream;
};

struct launch_gen {
	uint64_t rng;		/* LAUNCH_GEN_SEED at first */
	uint64_t ns;		/* end of the last launch */
	struct launch step[STEP_LAUNCHES];
	unsigned long next;
};

static inline uint64_t rnd(struct launch_gen *g)
{
	g->rng ^= g->rng << 13;
	g->rng ^= g->rng >> 7;
	g->rng ^= g->rng << 17;
	return g->rng;
}

static inline void set_dims(struct launch *l, int k, uint32_t gx,
			    uint32_t gy, uint32_t bx, uint64_t shmem)
{
	l->kernel = k;
	l->grid[0] = gx;
	l->grid[1] = gy;
	l->grid[2] = 1;
	l->block[0] = bx;
	l->block[1] = 1;
	l->block[2] = 1;
	l->shmem = shmem;
}

static inline void make_step(struct launch_gen *g)
{
	static const uint32_t rows[] = { 512, 1024, 2048, 4096, 8192 };
	unsigned i;

	for (i = 0; i < STEP_LAUNCHES; i++) {
		struct launch *l = &g->step[i];
		uint32_t m = rows[rnd(g) % 5], n = rows[rnd(g) % 5];
		unsigned kind = (unsigned)(rnd(g) % 20);

		if (kind < 10)
			set_dims(l, K_ELEMENTWISE, (m * n / 4 + 255) / 256, 1,
				 256, 0);
		else if (kind < 15)
			set_dims(l, K_GEMM, m / 128, n / 64, 128, 49152);
		else if (kind < 18)
			set_dims(l, K_REDUCE, m, 1, 512, 2048);
		else
			set_dims(l, K_SOFTMAX, m, 1, 128, 0);
		l->stream = rnd(g) % 8 ? 0x55d4c3a1f2b0ull : 0x55d4c3a20f40ull;
	}
}

/* The next launch of the cycle and its [*start, *end] in ns from the
 * generator's start. */
static inline const struct launch *next_launch(struct launch_gen *g,
					       uint64_t *start, uint64_t *end)
{
	const struct launch *l = &g->step[g->next++ % STEP_LAUNCHES];

	*start = g->ns + 100 + rnd(g) % 400;
	*end = *start + 500 + rnd(g) % 400;
	g->ns = *end;
	return l;
}

#endif
