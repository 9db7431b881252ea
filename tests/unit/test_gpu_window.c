/* The GPU analyses' reorder window (summary/gpu_*.c): events delivered
 * out of time order as the library gets them (a span at its end, GPU
 * activity in late buffers) give, through a bounded window, exactly what
 * the unbounded one (tprof report) gives while no event is later than
 * the window; beyond, the "approx" counts say so and bound the error;
 * the window's memory stays bounded however many events pass; and each
 * idle gap names the CPU spans around its middle as a search of every
 * CPU span does, though the sweep keeps only those that may still. */
#include <stdio.h>
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

/* Idle gaps between bursts of kernels, while one thread makes calls
 * back to back, each with a name and a duration of its own (so the
 * shortest spans around a time are one answer); with ranges, spans
 * that enclose others (their ends then do not follow their starts). The
 * sweep grows, prunes and wraps its list of CPU spans many times. */
#define GAP_SPANS 12000

static char span_name[GAP_SPANS][16];
static struct { int64_t ts, end; } span_at[GAP_SPANS];
static unsigned nspan;

static void cpu_span(const char *cat, int64_t ts, int64_t dur)
{
	if (nspan == GAP_SPANS)
		return;
	snprintf(span_name[nspan], sizeof(span_name[0]), "c%u", nspan);
	span_at[nspan].ts = ts;
	span_at[nspan].end = ts + dur;
	add(cat, span_name[nspan++], 1, ts, dur, 0, 0);
}

static void make_gaps(int ranges)
{
	int64_t t = 1000000, r0 = 0, s0, m[2] = { 0, 0 };
	unsigned b, i, calls;

	nev = 0;
	nspan = 0;
	for (b = 0; nspan + 800 < GAP_SPANS; b++) {
		for (i = 0; i < 20; i++) {	/* a burst: the GPU busy */
			add("kernel", "k", 7, t, 3000, 0, 0);
			cpu_span("cpu_op", t, 2000 + (int64_t)nspan);
			t += 3000;
		}
		calls = 50 + (unsigned)(rnd() % 700);
		s0 = t;
		for (i = 0; i < calls; i++) {	/* then idle */
			int64_t d = 900 + (int64_t)nspan;

			if (ranges && i % 40 == 0)
				r0 = t;
			if (ranges && (i == calls / 4 || i == calls / 3))
				m[i == calls / 3] = t;
			cpu_span("cpu_op", t, d);
			t += d + 100;
			if (ranges && i % 40 == 39)
				cpu_span("user_annotation", r0 - 50,
					 t - r0 + 17 * (int64_t)nspan);
		}
		/* one around the whole stretch, ahead of it all, and two
		 * from a quarter and a third of the way to its end */
		if (ranges) {
			cpu_span("user_annotation", s0 - 70,
				 t - s0 + 100 + (int64_t)nspan);
			cpu_span("user_annotation", m[0] - 30,
				 t - m[0] + 80 + (int64_t)nspan);
			cpu_span("user_annotation", m[1] - 20,
				 t - m[1] + 90 + (int64_t)nspan);
		}
		t += 60000;
	}
}

/* The TP_GAP_CPU shortest spans holding m, longest first: what the
 * summary names, from every span. */
static void expected_cpu(int64_t m, char *out, size_t len)
{
	unsigned best[TP_GAP_CPU], n = 0, i, k;
	size_t used = 0;

	for (i = 0; i < nspan; i++) {
		int64_t d = span_at[i].end - span_at[i].ts;

		if (span_at[i].ts > m || span_at[i].end <= m)
			continue;
		for (k = n; k && span_at[best[k - 1]].end -
				 span_at[best[k - 1]].ts > d; k--)
			if (k < TP_GAP_CPU)
				best[k] = best[k - 1];
		if (k < TP_GAP_CPU)
			best[k] = i;
		if (n < TP_GAP_CPU)
			n++;
	}
	out[0] = 0;
	for (k = n; k--;)
		used += (size_t)snprintf(out + used, len - used, "%s\"%s\"",
					 k + 1 < n ? ", " : "",
					 span_name[best[k]]);
}

static void gap_context(int ranges)
{
	struct tp_gpu *g;
	char *j, *p, want[256], name[64];
	int gaps = 0, ok = 0;

	make_gaps(ranges);
	g = feed(0);
	j = json(g);
	for (p = strstr(j, "{\"start_ns\": "); p;
	     p = strstr(p + 1, "{\"start_ns\": ")) {
		int64_t start = strtoll(p + 13, NULL, 10);
		int64_t dur = num(p, "dur_ns");
		const char *c = strstr(p, "\"cpu\": [") + 8;
		size_t n = (size_t)(strchr(c, ']') - c);

		expected_cpu(start + dur / 2, want, sizeof(want));
		gaps++;
		ok += strlen(want) == n && !strncmp(c, want, n);
		if (strlen(want) != n || strncmp(c, want, n))
			fprintf(stderr, "gap at %lld: [%.*s], want [%s]\n",
				(long long)start, (int)n, c, want);
	}
	snprintf(name, sizeof(name), "gaps%s: the CPU spans around each "
		 "middle", ranges ? " (with ranges)" : "");
	TP_CHECK(name, gaps == TP_GPU_GAPS && ok == gaps && g->capcpu >= 512,
		 "%d of %d gaps, list of %zu", ok, gaps, g->capcpu);
	free(j);
	tp_gpu_free(g);
}

int main(void)
{
	in_window();
	gap_context(0);
	gap_context(1);
	beyond();
	long_run();
	free(evs);
	return TP_TEST_DONE();
}
