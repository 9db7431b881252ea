/* The GPU analyses' reorder window (summary/gpu_*.c): events delivered
 * out of time order as the library gets them (a span at its end, GPU
 * activity in late buffers) give, through a bounded window, exactly what
 * the unbounded one (tprof report) gives while no event is later than
 * the window; beyond, the "approx" counts say so and bound the error;
 * and the window's memory stays bounded however many events pass. */
#include <stdlib.h>
#include <string.h>

#include "summary/gpu_int.h"
#include "tp_test.h"

struct ev {
	const char *cat, *name;
	int64_t tid, ts, dur, deliver;
	uint64_t corr;
	int step;
};

static struct ev *evs;
static size_t nev, capev;

static void add(const char *cat, const char *name, int64_t tid, int64_t ts,
		int64_t dur, uint64_t corr, int64_t lag)
{
	if (nev == capev) {
		capev = capev ? capev * 2 : 4096;
		evs = realloc(evs, capev * sizeof(*evs));
	}
	evs[nev++] = (struct ev){ cat, name, tid, ts, dur, ts + dur + lag,
				  corr, 0 };
}

static uint64_t rnd_state = 88172645463325252ull;

static uint64_t rnd(void)
{
	rnd_state ^= rnd_state << 13;
	rnd_state ^= rnd_state >> 7;
	rnd_state ^= rnd_state << 17;
	return rnd_state;
}

/* steps of a training loop: per step a range holding `per` launches of
 * compute kernels (and one NCCL kernel overlapping them on another
 * stream, one copy), each a busy interval of its own, then an idle
 * stretch the CPU spends in "dataloader"; GPU records delivered lag ns
 * after their end, CPU spans at their end. */
static void make(int steps, int per, int64_t lag)
{
	int64_t t = 1000000, gpu = 0, a, d;
	uint64_t corr = 1;
	int s, i;

	nev = 0;
	for (s = 0; s < steps; s++) {
		int64_t r0 = t;

		for (i = 0; i < per; i++, corr++) {
			add("cuda_runtime", "cudaLaunchKernel", 1, t, 3000, corr,
			    0);
			a = t + 3000 + (int64_t)(rnd() % 4000);
			if (a < gpu)
				a = gpu;
			d = 2000 + (int64_t)(rnd() % 6000);
			add("kernel", i % 3 ? "gemm_a" : "gemm_b", 7, a, d,
			    corr, lag);
			gpu = a + d;
			if (i == per / 2) {
				add("kernel", "ncclKernel_AllReduce", 8, a,
				    2 * d, 0, lag);
				add("gpu_memcpy", "Memcpy HtoD", 9, a + d, 900,
				    0, lag);
			}
			t += 10000;
		}
		add("user_annotation", "fwd", 1, r0, t - r0, 0, 0);
		a = gpu > t ? gpu : t;
		t = a + 200000 + (int64_t)(rnd() % 500000);
		add("cpu_op", "dataloader", 1, a + 5000, t - a - 10000, 0, 0);
		add("", "step", 0, r0, t - r0, 0, 0);
		evs[nev - 1].step = 1;
	}
}

static int by_delivery(const void *x, const void *y)
{
	const struct ev *a = x, *b = y;

	return a->deliver < b->deliver ? -1 : a->deliver > b->deliver;
}

static struct tp_gpu *feed(size_t window)
{
	struct tp_gpu *g = tp_gpu_new(window);
	size_t i;

	for (i = 0; i < nev; i++) {
		struct tp_sum_span e = {
			.cat = evs[i].cat, .name = evs[i].name, .pid = 1,
			.tid = evs[i].tid, .ts_ns = evs[i].ts,
			.dur_ns = evs[i].dur, .corr = evs[i].corr,
		};

		if (evs[i].step)
			tp_gpu_step(g, "ProfilerStep#1", evs[i].ts,
				    evs[i].dur);
		else
			tp_gpu_span(g, &e, tp_sum_cat_of(e.cat));
	}
	return g;
}

static char *json(struct tp_gpu *g)
{
	struct tp_buf b = { 0 };

	tp_gpu_write_json(g, &b);
	tp_buf_char(&b, '\0');
	return b.p;
}

static int64_t num(const char *j, const char *key)
{
	char k[64];
	const char *p;

	snprintf(k, sizeof(k), "\"%s\": ", key);
	p = strstr(j, k);
	return p ? strtoll(p + strlen(k), NULL, 10) : -999;
}

/* The member up to "window" (where the two runs differ by design). */
static char *figures(char *j)
{
	char *w = strstr(j, ",\n  \"window\"");

	if (w)
		*w = 0;
	return j;
}

static void in_window(void)
{
	struct tp_gpu *x, *b;
	char *jx, *jb;

	make(40, 50, 30000);
	qsort(evs, nev, sizeof(*evs), by_delivery);
	x = feed(0);
	b = feed(256);
	jx = json(x);
	jb = json(b);
	TP_CHECK_INT("window: nothing late", num(jb, "late"), 0);
	TP_CHECK("window: every figure as the unbounded window's",
		 !strcmp(figures(jx), figures(jb)), "\n%s\n%s", jx, jb);
	TP_CHECK("window: gaps and ranges found", strstr(jx, "\"fwd\"") &&
		 strstr(jx, "dataloader") && num(jx, "overlap_ns") > 0 &&
		 num(jx, "steps_cpu_bound") == 40, "%s", jx);
	free(jx);
	free(jb);
	tp_gpu_free(x);
	tp_gpu_free(b);
}

static void beyond(void)
{
	struct tp_gpu *x, *b;
	char *jx, *jb;
	int64_t late;

	/* GPU records a whole step late, the window 32 events */
	make(40, 50, 2000000);
	qsort(evs, nev, sizeof(*evs), by_delivery);
	x = feed(0);
	b = feed(32);
	jx = json(x);
	jb = json(b);
	late = num(jb, "late_slice_ns");
	TP_CHECK("late: counted", num(jb, "late_slices") > 0 && late > 0,
		 "%s", jb);
	TP_CHECK("late: busy off by at most the late slices' time",
		 llabs(num(jb, "busy_ns") - num(jx, "busy_ns")) <= late,
		 "%lld vs %lld, late %lld", (long long)num(jb, "busy_ns"),
		 (long long)num(jx, "busy_ns"), (long long)late);
	TP_CHECK("late: compute off by at most the late slices' time",
		 llabs(num(jb, "compute_ns") - num(jx, "compute_ns")) <= late,
		 "%lld vs %lld", (long long)num(jb, "compute_ns"),
		 (long long)num(jx, "compute_ns"));
	TP_CHECK_INT("late: sums exact", num(jb, "kernel_ns"),
		     num(jx, "kernel_ns"));
	TP_CHECK_INT("late: span exact", num(jb, "span_ns"),
		     num(jx, "span_ns"));
	free(jx);
	free(jb);
	tp_gpu_free(x);
	tp_gpu_free(b);
}

static void util_of(const char *j, int64_t *u)
{
	const char *p = strstr(j, "\"utilisation\": [");
	char *end;
	int i;

	for (i = 0; i < TP_GPU_BUCKETS; i++)
		u[i] = -1;
	if (!p)
		return;
	p += strlen("\"utilisation\": [");
	for (i = 0; i < TP_GPU_BUCKETS; i++) {
		u[i] = strtoll(p, &end, 10);
		p = end + 1;
	}
}

static void long_run(void)
{
	int64_t ux[TP_GPU_BUCKETS], ub[TP_GPU_BUCKETS], span, worst = 0, d;
	struct tp_gpu *x, *b;
	char *jx, *jb;
	int i, ok = 1;

	/* 150000 launches, 3000 steps: past every exact list's bound */
	make(3000, 50, 30000);
	qsort(evs, nev, sizeof(*evs), by_delivery);
	x = feed(0);
	b = feed(4096);
	TP_CHECK("bounded: the window holds at most its size",
		 tp_gpu_heap_size(&b->heap) <= 4096, "%zu",
		 tp_gpu_heap_size(&b->heap));
	jx = json(x);
	jb = json(b);
	TP_CHECK("bounded: delays and utilisation binned past their bounds",
		 strstr(jb, "\"launch_delays_binned\": true") &&
		 strstr(jb, "\"utilisation_binned\": true"), "%s", jb);
	TP_CHECK("bounded: memory bounded (calls table, CPU spans, lists)",
		 b->capcalls <= (1u << 16) && b->capcpu <= (1u << 16) &&
		 !b->delays && !b->busy && b->heap.cap <= 4096 &&
		 b->heap.qcap <= 4096, "calls %zu cpu %zu heap %zu ring %zu",
		 b->capcalls, b->capcpu, b->heap.cap, b->heap.qcap);
	TP_CHECK_INT("bounded: nothing late", num(jb, "late"), 0);
	for (i = 0; i < 3; i++) {
		static const char *const k[] = { "busy_ns", "overlap_ns",
						 "launch_delay_sum_ns" };
		char name[80];

		snprintf(name, sizeof(name), "bounded: %s exact", k[i]);
		TP_CHECK_INT(name, num(jb, k[i]), num(jx, k[i]));
	}
	for (i = 0; i < 2; i++) {
		const char *k = i ? "launch_delay_p90_ns" :
				    "launch_delay_p50_ns";
		int64_t e = num(jx, k), v = num(jb, k);

		char name[80];

		snprintf(name, sizeof(name), "bounded: %s within 1/32", k);
		TP_CHECK(name, llabs(v - e) <= e / 32 + 1,
			 "binned %lld, exact %lld", (long long)v,
			 (long long)e);
	}
	util_of(jx, ux);
	util_of(jb, ub);
	span = num(jx, "span_ns");
	for (i = 0; i < TP_GPU_BUCKETS; i++) {
		d = llabs(ub[i] - ux[i]);
		worst = d > worst ? d : worst;
		ok &= d <= 4 * span / GPU_BINS + 1;
	}
	TP_CHECK("bounded: each part of the utilisation within "
		 "4 * span / 32768 of the exact one", ok,
		 "worst %lld, bound %lld", (long long)worst,
		 (long long)(4 * span / GPU_BINS));
	free(jx);
	free(jb);
	tp_gpu_free(x);
	tp_gpu_free(b);
}

int main(void)
{
	in_window();
	beyond();
	long_run();
	free(evs);
	return TP_TEST_DONE();
}
