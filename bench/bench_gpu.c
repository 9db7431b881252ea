/* The writer's conversion of GPU records on one core: CUPTI 13 kernel
 * and copy records, as a flush hands them over, turned into trace events
 * (placement on their track, flow to their launch, args, summary), the
 * same path the writer runs; the JSON is dropped after each batch, so
 * gzip is not part of it (bench_writer measures that).
 *
 * usage: bench_gpu RECORDS
 *
 * Four streams, kernels of 20 names (long templated C++ names, as a
 * real model's) 1-40 us long, a copy every 16th record; each batch is
 * given in start order per thread and two threads interleaved, the way
 * per-thread buffers arrive. Prints "records", "wall_ns", "cpu_ns".
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cupti/cupti.h"
#include "record/clock.h"
#include "record/corrmap.h"
#include "session/session.h"
#include "session/timeline.h"

#define BATCH 4096

static const char *const names[] = {
	"_ZN5bench4gemm11tile_kernelINS0_9TileShapeILi128ELi64ELi32EEE6__halfNS0_8EpilogueIfEEEEvNS0_6ParamsIT0_T1_EE",
	"_ZN5bench3ops16pointwise_kernelILi4ENS0_6MulAddIfEENS_4PackIPcLi3EEEEEviT0_T1_",
	"_ZN5bench3ops13reduce_kernelIfLi512ENS0_5SumOpIfEEEEvPKT_PT_iT1_",
	"_ZN5bench3ops14softmax_kernelIfLi1024ELb0EEEvPT_PKS2_iii",
	"_Z6splitKILi1EEvPf", "_Z6splitKILi2EEvPf", "_Z6splitKILi3EEvPf",
	"_Z6splitKILi4EEvPf", "_Z6splitKILi5EEvPf", "_Z6splitKILi6EEvPf",
	"_Z4fillPfi", "_Z4copyPfS_i", "_Z5scalePffi", "_Z4axpyPfS_fi",
	"_Z7layernormPfS_S_i", "_Z4geluPfi", "_Z7dropoutPfS_fi",
	"_Z6embedPfPiii", "_Z9attentionPfS_S_S_iii", "_Z6adamw_Pfffi",
};

static union {
	CUpti_ActivityKernel10 k;
	CUpti_ActivityMemcpy6 m;
} recs[BATCH];

static uint64_t tick_ns(uint64_t ns)
{
	/* Ticks equal to ns: the map below is the identity. */
	return ns;
}

static void make(unsigned long i, uint64_t t0)
{
	unsigned thread = (unsigned)(i & 1), stream = 7 + (unsigned)(i % 4);
	uint64_t start = t0 + i * 50000 + thread * 25000;
	uint32_t corr = (uint32_t)(i + 1);

	/* Its launch, as the writer notes it when it writes the call. */
	tp_corr_note(corr, 100 + thread, (int64_t)start - 5000, 1);
	memset(&recs[i % BATCH], 0, sizeof(recs[0]));
	if (i % 16 == 15) {
		CUpti_ActivityMemcpy6 *m = &recs[i % BATCH].m;

		m->kind = CUPTI_ACTIVITY_KIND_MEMCPY;
		m->copyKind = CUPTI_ACTIVITY_MEMCPY_KIND_HTOD;
		m->srcKind = CUPTI_ACTIVITY_MEMORY_KIND_PINNED;
		m->dstKind = CUPTI_ACTIVITY_MEMORY_KIND_DEVICE;
		m->bytes = 1 << 20;
		m->start = tick_ns(start);
		m->end = tick_ns(start + 20000);
		m->streamId = stream;
		m->contextId = 1;
		m->correlationId = corr;
		return;
	}
	CUpti_ActivityKernel10 *k = &recs[i % BATCH].k;

	k->kind = CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL;
	k->start = tick_ns(start);
	k->end = tick_ns(start + 1000 + (i * 7919) % 39000);
	k->streamId = stream;
	k->contextId = 1;
	k->correlationId = corr;
	k->name = names[i % 20];
	k->gridX = 264;
	k->gridY = k->gridZ = 1;
	k->blockX = 256;
	k->blockY = k->blockZ = 1;
	k->registersPerThread = 32;
}

int main(int argc, char **argv)
{
	unsigned long n = argc > 1 ? strtoul(argv[1], NULL, 10) : 1000000, i;
	struct tp_clock_point a = { 0, 0, 1800000000000000000ull };
	struct tp_clock_point b = { 1000000000, 1000000000, 0 };
	struct tp_buf out = { 0 };
	uint64_t wall0, cpu0, wall = 0, cpu = 0, t0 = 1000000, bytes = 0;
	const struct tp_cupti_counts *c;

	dlopen("libstdc++.so.6", RTLD_NOW | RTLD_GLOBAL);
	tp_clock_use_tsc = 1;
	tp_clock_map_from(&tp_tl.map, a, b);
	tp_tl.ready = 1;
	tp_sess.base_ns = 1800000000000000000ll;
	tp_sess.pid = 1;
	tp_cupti_convert_init(1);
	tp_cupti_convert_window(INT64_MIN, INT64_MAX);
	for (i = 0; i < n; i += BATCH) {
		unsigned long j, m = n - i < BATCH ? n - i : BATCH;

		for (j = 0; j < m; j++)
			make(i + j, t0);
		wall0 = tp_clock_ns(CLOCK_MONOTONIC);
		cpu0 = tp_clock_ns(CLOCK_THREAD_CPUTIME_ID);
		for (j = 0; j < m; j++)
			tp_cupti_convert(&out, &tp_tl.map,
					 (const CUpti_Activity *)&recs[j]);
		cpu += tp_clock_ns(CLOCK_THREAD_CPUTIME_ID) - cpu0;
		wall += tp_clock_ns(CLOCK_MONOTONIC) - wall0;
		bytes += out.len;
		out.len = 0;
	}
	c = tp_cupti_counts();
	printf("kernels %llu\ncopies %llu\nunplaced %llu\nbytes %llu\n",
	       (unsigned long long)c->kernels, (unsigned long long)c->memcpys,
	       (unsigned long long)(c->unplaced + c->unclocked),
	       (unsigned long long)bytes);
	printf("records %lu\nwall_ns %llu\ncpu_ns %llu\n", n,
	       (unsigned long long)wall, (unsigned long long)cpu);
	tp_buf_free(&out);
	return 0;
}
