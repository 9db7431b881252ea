/* The summary aggregator: rows, percentiles, GEMM and NCCL groups with
 * the GPU time of the kernels they launched (in tprof's order and in
 * torch's), ranges with memory, steps, memory downsampling, drops; the
 * writer's static names (found by address) summed as the same text. */
#include <stdio.h>
#include <stdlib.h>

#include "summary/hist.h"
#include "summary/summary.h"
#include "summary/summary_int.h"
#include "summary/summary_out.h"
#include "tp_test.h"

static void span(struct tp_sum *s, const char *cat, const char *name,
		 int64_t tid, int64_t ts, int64_t dur, uint64_t corr,
		 const char *args)
{
	struct tp_sum_span e = {
		.cat = cat, .name = name, .pid = 100, .tid = tid,
		.ts_ns = ts, .dur_ns = dur, .corr = corr, .args = args,
		.args_len = args ? strlen(args) : 0,
	};

	tp_sum_span(s, &e);
}

static struct sum_row *row(struct tp_sum *s, const char *cat,
			   const char *name)
{
	size_t i;

	for (i = 0; i < s->rows.n; i++) {
		struct sum_row *r = s->rows.items[i];

		if (!strcmp(r->cat, cat) && !strcmp(r->name, name))
			return r;
	}
	return NULL;
}

static struct sum_group *group(struct tp_sum *s, const char *name)
{
	size_t i;

	for (i = 0; i < s->groups.n; i++) {
		struct sum_group *g = s->groups.items[i];

		if (!strcmp(g->name, name))
			return g;
	}
	return NULL;
}

static void test_hist(void)
{
	struct tp_hist h = { 0 };
	uint64_t v;
	unsigned b;
	int ok = 1;

	/* Buckets tile the number line, each value in its own bucket. */
	for (v = 0; v < 100000; v += 7) {
		b = tp_hist_bucket(v);
		if (v < tp_hist_lower(b) ||
		    v >= tp_hist_lower(b) + tp_hist_width(b))
			ok = 0;
	}
	TP_CHECK("hist_buckets_hold_their_values", ok, "a value outside");
	TP_CHECK_INT("hist_exact_below_32", tp_hist_bucket(31), 31);
	TP_CHECK_INT("hist_bucket_1000", tp_hist_bucket(1000), 6 * 16 + 15);
	TP_CHECK_INT("hist_lower_1000", tp_hist_lower(tp_hist_bucket(1000)),
		     992);
	TP_CHECK_INT("hist_last_bucket", tp_hist_bucket(UINT64_MAX),
		     TP_HIST_BUCKETS - 1);
	/* 1..100 us: nearest rank, middle of the bucket, within 1/32. */
	for (v = 1; v <= 100; v++)
		tp_hist_add(&h, v * 1000, 1);
	TP_CHECK_INT("hist_p50", tp_hist_percentile(&h, 50, 1000, 100000),
		     50176);	/* 50000 is in [49152, 51200) */
	TP_CHECK_INT("hist_p90", tp_hist_percentile(&h, 90, 1000, 100000),
		     88064);	/* 90000 is in [86016, 90112) */
	TP_CHECK_INT("hist_p99_clamped",
		     tp_hist_percentile(&h, 99, 1000, 99000), 99000);
	TP_CHECK_INT("hist_p100_is_max_bucket",
		     tp_hist_percentile(&h, 100, 1000, 100000), 100000);
	tp_hist_free(&h);
}

static void test_rows(void)
{
	struct tp_sum *s = tp_sum_new();
	struct sum_row *r;

	span(s, "cuda_runtime", "cudaLaunchKernel", 1, 1000, 100, 0, NULL);
	span(s, "cuda_runtime", "cudaLaunchKernel", 1, 2000, 300, 0, NULL);
	span(s, "cuda_runtime", "cudaLaunchKernel", 1, 3000, 200, 0, NULL);
	span(s, "cuda_runtime", "cudaMalloc", 1, 11000, 10, 0, NULL);
	tp_sum_dropped(s, "cuda_runtime", "cudaMalloc", 30, 1);
	r = row(s, "cuda_runtime", "cudaLaunchKernel");
	TP_CHECK("rows_found", r != NULL, "no row");
	if (!r)
		return;
	TP_CHECK_INT("rows_count", r->count, 3);
	TP_CHECK_INT("rows_total", r->total, 600);
	TP_CHECK_INT("rows_min", r->min, 100);
	TP_CHECK_INT("rows_max", r->max, 300);
	TP_CHECK_INT("rows_mean", (int64_t)(r->mean * 1000), 200000);
	/* population std of 100, 300, 200: sqrt(20000/3) = 81.650 */
	TP_CHECK_INT("rows_std", (int64_t)(tp_sum_row_std(r) * 1000), 81649);
	/* 200 is in [200, 208): its middle */
	TP_CHECK_INT("rows_p50", tp_sum_row_pct(r, 50), 204);
	TP_CHECK_INT("rows_wall", tp_sum_wall(s), 11010 - 1000);
	r = row(s, "cuda_runtime", "cudaMalloc");
	TP_CHECK_INT("rows_dropped_counted", r ? r->count : 0, 2);
	TP_CHECK_INT("rows_dropped_marked", r ? r->dropped : 0, 1);
	TP_CHECK_INT("rows_dropped_total", s->dropped, 1);
	tp_sum_free(s);
}

#define GEMM_ARGS "{\"ret\":0,\"m\":1024,\"n\":1024,\"k\":1024,\"batch\":1," \
	"\"transa\":\"N\",\"d type\":\"CUDA_R_32F\",\"flops\":2147483648}"

/* tprof's order: the launch (nested, ends first), the GEMM, the kernel. */
static void test_gemm_tprof_order(void)
{
	struct tp_sum *s = tp_sum_new();
	struct sum_group *g;

	span(s, "cuda_runtime", "cudaLaunchKernel", 7, 1100, 50, 41,
	     "{\"ret\":0,\"correlation\":41}");
	span(s, "cublas", "cublasSgemm_v2", 7, 1000, 500, 0, GEMM_ARGS);
	/* Another thread's launch in the same time is not the GEMM's. */
	span(s, "cuda_runtime", "cudaLaunchKernel", 8, 1200, 50, 42, NULL);
	span(s, "kernel", "sgemm_128x64", 0, 5000, 1000000, 41, NULL);
	span(s, "kernel", "other", 0, 5000, 7, 42, NULL);
	g = group(s, "cublasSgemm_v2");
	TP_CHECK("gemm_group", g != NULL, "no group");
	if (!g)
		return;
	TP_CHECK_INT("gemm_m", g->m, 1024);
	TP_CHECK_INT("gemm_calls", g->calls, 1);
	TP_CHECK_INT("gemm_flops", (int64_t)g->flops, 2147483648ll);
	TP_CHECK_INT("gemm_kernels", g->kernels, 1);
	TP_CHECK_INT("gemm_gpu_ns", g->gpu_ns, 1000000);
	TP_CHECK_STR("gemm_dtype", g->dtype ? g->dtype : "", "CUDA_R_32F");
	tp_sum_free(s);
}

/* torch's order: the op first, then its launches and kernels. A nested
 * call (no flops, "nested":1) is no group of its own. */
static void test_gemm_torch_order(void)
{
	struct tp_sum *s = tp_sum_new();
	struct sum_group *g;

	span(s, "cublas", "cublasGemmEx", 3, 1000, 500, 0, GEMM_ARGS);
	span(s, "cublas", "cublasLtMatmul", 3, 1010, 400, 0,
	     "{\"m\":1024,\"n\":1024,\"k\":1024,\"nested\":1}");
	span(s, "cuda_runtime", "cudaLaunchKernel", 3, 1100, 50, 9, NULL);
	span(s, "cuda_runtime", "cudaLaunchKernel", 3, 1200, 50, 10, NULL);
	span(s, "kernel", "k1", 0, 5000, 300, 9, NULL);
	span(s, "kernel", "k2", 0, 6000, 200, 10, NULL);
	/* After the GEMM's span: not its launch. */
	span(s, "cuda_runtime", "cudaLaunchKernel", 3, 1600, 50, 11, NULL);
	span(s, "kernel", "k3", 0, 7000, 999, 11, NULL);
	g = group(s, "cublasGemmEx");
	TP_CHECK_INT("gemm_torch_kernels", g ? g->kernels : 0, 2);
	TP_CHECK_INT("gemm_torch_gpu_ns", g ? g->gpu_ns : 0, 500);
	TP_CHECK("gemm_nested_no_group", !group(s, "cublasLtMatmul"),
		 "nested call grouped");
	tp_sum_free(s);
}

static void test_nccl(void)
{
	struct tp_sum *s = tp_sum_new();
	struct sum_group *g;

	span(s, "nccl", "ncclAllReduce", 1, 1000, 100, 0,
	     "{\"ret\":0,\"count\":1048576,\"dtype\":\"ncclFloat32\","
	     "\"bytes\":4194304,\"op\":\"sum\",\"rank\":0,\"size\":8}");
	span(s, "cuda_driver", "cuLaunchKernelEx", 1, 1050, 20, 77, NULL);
	span(s, "kernel", "ncclDevKernel_AllReduce", 0, 2000, 200000, 77,
	     NULL);
	span(s, "nccl", "ncclAllGather", 1, 5000, 100, 0,
	     "{\"count\":1024,\"dtype\":\"ncclFloat32\",\"bytes\":4096,"
	     "\"out bytes\":32768,\"size\":8}");
	g = group(s, "ncclAllReduce");
	TP_CHECK_INT("nccl_bytes", g ? g->bytes : 0, 4194304);
	TP_CHECK_INT("nccl_nranks", g ? g->nranks : 0, 8);
	TP_CHECK_INT("nccl_gpu_ns", g ? g->gpu_ns : 0, 200000);
	/* 4194304 B / 200 us = 20.972 GB/s; busbw x 2*7/8 = 36.700 */
	TP_CHECK_INT("nccl_algbw", g ? (int64_t)(tp_sum_algbw(g) * 1000) : 0,
		     20971);
	TP_CHECK_INT("nccl_busbw",
		     g ? (int64_t)(tp_sum_algbw(g) * tp_sum_busbw_factor(g) *
				   1000) : 0, 36700);
	g = group(s, "ncclAllGather");
	TP_CHECK_INT("nccl_allgather_whole_buffer", g ? g->bytes : 0, 32768);
	TP_CHECK_INT("nccl_allgather_factor",
		     g ? (int64_t)(tp_sum_busbw_factor(g) * 1000) : 0, 875);
	tp_sum_free(s);
}

static void test_ranges_steps(void)
{
	struct tp_sum *s = tp_sum_new();
	struct sum_range *r;

	span(s, "user_annotation", "ProfilerStep#4", 1000000000, 0, 1000, 0,
	     "{\"step\":4}");
	span(s, "user_annotation", "ProfilerStep#5", 1000000000, 1000, 3000,
	     0, NULL);
	span(s, "user_annotation", "forward", 1, 100, 400, 0,
	     "{\"domain\":\"tprof\",\"mem_entry\":1000,\"mem_exit\":3000,"
	     "\"mem_peak\":9000}");
	span(s, "user_annotation", "forward", 1, 1100, 600, 0,
	     "{\"domain\":\"tprof\",\"mem_entry\":3000,\"mem_exit\":4000,"
	     "\"mem_peak\":5000}");
	span(s, "user_annotation", "forward", 1, 2100, 100, 0, NULL);
	TP_CHECK_INT("steps_count", s->steps_seen, 2);
	TP_CHECK_INT("steps_number_from_args", s->steps[0].step, 4);
	TP_CHECK_INT("steps_number_from_name", s->steps[1].step, 5);
	TP_CHECK_INT("steps_dur", s->steps[1].dur, 3000);
	TP_CHECK("steps_not_rows", !row(s, "user_annotation",
					"ProfilerStep#4"), "step row");
	TP_CHECK_INT("ranges_n", s->ranges.n, 2);
	r = s->ranges.items[0];
	TP_CHECK_STR("ranges_domain", r->domain ? r->domain : "", "tprof");
	TP_CHECK_INT("ranges_repeats", r->repeats, 2);
	TP_CHECK_INT("ranges_total", r->total, 1000);
	TP_CHECK_INT("ranges_mem_net", (int64_t)(r->mem_net / r->mem_n),
		     1500);
	TP_CHECK_INT("ranges_mem_peak", r->mem_peak, 8000);
	r = s->ranges.items[1];
	TP_CHECK("ranges_no_domain", !r->domain && r->repeats == 1,
		 "domain %s repeats %llu", r->domain ? r->domain : "-",
		 (unsigned long long)r->repeats);
	tp_sum_free(s);
}

static void test_memory(void)
{
	struct tp_sum *s = tp_sum_new();
	int64_t i, peak_seen = 0;
	unsigned j;

	for (i = 0; i < 2000; i++)
		tp_sum_memory(s, 0, i * 10, i == 777 ? 1 << 30 : i);
	tp_sum_memory_flush(s);
	TP_CHECK("memory_bounded", s->mem[0]->n <= SUM_MEM_POINTS &&
		 s->mem[0]->n >= SUM_MEM_POINTS / 4, "%u points",
		 s->mem[0]->n);
	for (j = 0; j < s->mem[0]->n; j++)
		if (s->mem[0]->pts[j][1] == 1 << 30)
			peak_seen = 1;
	TP_CHECK("memory_peak_survives", peak_seen, "peak merged away");
	TP_CHECK_INT("memory_peak", s->mem[0]->peak, 1 << 30);
	TP_CHECK_INT("memory_first_ts", s->mem[0]->pts[0][0], 0);
	tp_sum_free(s);
}

/* A device's memory, known from its record, goes with its memory[]
 * entry; a device without one says null. */
static void test_memory_capacity(void)
{
	struct tp_sum *s = tp_sum_new();
	struct tp_buf b = { 0 };

	tp_sum_device_memory(s, 1, 85520809984LL);
	tp_sum_device_memory(s, 1, 85520809984LL);	/* again: one entry */
	tp_sum_device_memory(s, 2, 0);			/* unknown: ignored */
	tp_sum_memory(s, 1, 10, 1 << 20);
	tp_sum_memory(s, 2, 10, 1 << 21);
	tp_sum_write_json(s, &b, NULL, NULL);
	TP_CHECK("memory_capacity_written", b.p && strstr(b.p,
		 "{\"device\": 1, \"peak_bytes\": 1048576, \"capacity_bytes\": "
		 "85520809984, "), "%s", b.p ? strstr(b.p, "\"memory\"") : "");
	TP_CHECK("memory_capacity_null", b.p && strstr(b.p,
		 "{\"device\": 2, \"peak_bytes\": 2097152, \"capacity_bytes\": "
		 "null, "), "%s", b.p ? strstr(b.p, "\"memory\"") : "");
	TP_CHECK_INT("memory_capacity_once", s->n_capacity, 1);
	tp_buf_free(&b);
	tp_sum_free(s);
}

/* The writer's own events hand their args typed: read as they are, a
 * nested member's key never taken for a top-level one. */
static void test_typed_args(void)
{
	static struct tp_targs w;
	struct sum_arg a[5] = { { "m", NULL, 0, NULL },
				{ "flops", NULL, 0, NULL },
				{ "d type", NULL, 0, NULL },
				{ "kernel", NULL, 0, NULL },
				{ "big", NULL, 0, NULL } };
	struct tp_sum_span e = { .cat = "cublas", .name = "g" };
	unsigned __int128 f;
	char buf[32];
	int64_t v;

	tp_targs_reset(&w);
	tp_targs_open(&w, "inner", 1);
	tp_targs_int(&w, "m", 99);
	tp_targs_close(&w);
	tp_targs_int(&w, "m", 64);
	tp_targs_u128(&w, "flops", (unsigned __int128)1 << 70);
	tp_targs_cstr(&w, "d type", "CUDA_R_16F");
	tp_targs_json(&w, "kernel", "\"k\\\"x\"", 6);
	tp_targs_uint(&w, "big", UINT64_MAX);
	e.targs = w.a;
	e.ntargs = w.n;
	tp_sum_span_args(&e, a, 5);
	TP_CHECK("typed_args_int", tp_sum_arg_i64(&a[0], &v) == 0 && v == 64,
		 "m");
	TP_CHECK("typed_args_u128", tp_sum_arg_u128(&a[1], &f) == 0 &&
		 f == (unsigned __int128)1 << 70, "flops");
	TP_CHECK("typed_args_u128_not_i64", tp_sum_arg_i64(&a[1], &v) == -1,
		 "flops");
	TP_CHECK_STR("typed_args_str", tp_sum_arg_str(&a[2], buf, sizeof(buf))
		     ? buf : "", "CUDA_R_16F");
	TP_CHECK_STR("typed_args_json_str",
		     tp_sum_arg_str(&a[3], buf, sizeof(buf)) ? buf : "",
		     "k\"x");
	TP_CHECK("typed_args_uint_too_big", tp_sum_arg_i64(&a[4], &v) == -1,
		 "big");
	TP_CHECK("typed_args_has", tp_sum_arg_has(&a[4]) && !a[4].v, "big");
}

static void test_args(void)
{
	struct sum_arg a[3] = { { "b", NULL, 0, NULL },
				{ "c d", NULL, 0, NULL },
				{ "x", NULL, 0, NULL } };
	char buf[32];
	int64_t v;
	const char *t = "{\"a\":[1,{\"b\":2}],\"b\":-42,\"c d\":\"q\\\"z\"}";

	tp_sum_args(t, strlen(t), a, 3);
	TP_CHECK("args_nested_key_skipped", tp_sum_arg_i64(&a[0], &v) == 0 &&
		 v == -42, "b");
	TP_CHECK_STR("args_string", tp_sum_arg_str(&a[1], buf, sizeof(buf)) ?
		     buf : "", "q\"z");
	TP_CHECK("args_absent", !a[2].v, "x found");
	/* Indented as Kineto writes args: the last value has no blanks. */
	tp_sum_args("{\n  \"x\": 7\n}", 12, a, 3);
	TP_CHECK("args_pretty_last", tp_sum_arg_i64(&a[2], &v) == 0 && v == 7,
		 "x");
	/* Cut short: never read past the end. */
	tp_sum_args("{\"b\":12", 6, a, 3);
	TP_CHECK("args_truncated", tp_sum_arg_i64(&a[0], &v) == 0 && v == 1,
		 "b");
	/* An absent arg (v NULL) read as each type: found by fuzzing report
	 * with a Kineto trace (tests/fuzz/corpus/report/kineto-trace.json),
	 * where clang's UBSan stopped at NULL + 0. */
	{
		unsigned __int128 u;
		struct sum_arg none = { "gone", NULL, 0, NULL };

		TP_CHECK("args_absent_i64", tp_sum_arg_i64(&none, &v) == -1,
			 "read");
		TP_CHECK("args_absent_u128", tp_sum_arg_u128(&none, &u) == -1,
			 "read");
		TP_CHECK("args_absent_str",
			 !tp_sum_arg_str(&none, buf, sizeof(buf)), "read");
	}
}

static void test_json(void)
{
	struct tp_sum *s = tp_sum_new();
	struct tp_buf b = { 0 };

	span(s, "cuda_runtime", "a\"b", 1, 0, 5, 0, NULL);
	tp_sum_write_json(s, &b, NULL, NULL);
	tp_buf_char(&b, '\0');
	TP_CHECK("json_escapes_names", b.p && strstr(b.p, "\"a\\\"b\""),
		 "%s", b.p ? b.p : "oom");
	TP_CHECK("json_schema", b.p && strstr(b.p, "\"schema_version\": 2"),
		 "no schema version");
	tp_buf_free(&b);
	tp_sum_free(s);
}

/* The writer's events name their row by address (static_names): the
 * same events with their names as text (copies, found by hashing) must
 * give the same summary, byte for byte, through every category's path
 * (launches with and without a correlation, their kernels, GEMM and NCCL
 * groups, blocking calls, ranges), with more names than the address
 * cache has slots (they collide and evict), threads taking turns, and
 * negative durations. */
#define N_NAMES 150

static uint64_t mix_rng = 0x2545f4914f6cdd1dull;

static uint64_t mix_rnd(void)
{
	mix_rng ^= mix_rng << 13;
	mix_rng ^= mix_rng >> 7;
	mix_rng ^= mix_rng << 17;
	return mix_rng;
}

static const char *const mix_cats[] = {
	"cuda_runtime", "cuda_driver", "cublas", "nccl", "osrt", "other",
};

static void mix_feed(struct tp_sum *s, const char (*names)[24], int as_text)
{
	static const char *const args[] = {
		"{\"m\": 64, \"n\": 128, \"k\": 32, \"d type\": \"f32\", "
		"\"flops\": 524288}",
		"{\"bytes\": 4096, \"dtype\": \"f32\", \"size\": 4}",
		"{\"path\": \"/tmp/x\"}",
	};
	int64_t t = 1000;
	uint64_t corr = 1;
	unsigned i;

	mix_rng = 0x2545f4914f6cdd1dull;
	for (i = 0; i < 20000; i++) {
		unsigned c = (unsigned)(mix_rnd() % 6), n;
		struct tp_sum_span e = {
			.cat = mix_cats[c], .pid = 100,
			.tid = (int64_t)(mix_rnd() % 4 ? 1 : 2 + mix_rnd() % 3),
			.ts_ns = t, .dur_ns = (int64_t)(mix_rnd() % 9000) - 200,
			.static_names = !as_text,
		};
		char cat[24], name[24];

		n = c == 0 ? (unsigned)(mix_rnd() % N_NAMES) : c;
		e.name = names[n];
		if (c <= 1 && mix_rnd() % 2)
			e.corr = corr++;
		if (c >= 2 && c <= 4) {
			e.args = args[c - 2];
			e.args_len = strlen(e.args);
		}
		if (as_text) {	/* other addresses, the same text */
			snprintf(cat, sizeof(cat), "%s", e.cat);
			snprintf(name, sizeof(name), "%s", e.name);
			e.cat = cat;
			e.name = name;
		}
		tp_sum_span(s, &e);
		if (e.corr && mix_rnd() % 2) {	/* its kernel */
			struct tp_sum_span k = {
				.cat = "kernel", .name = "gemm_kernel",
				.pid = 100, .tid = 7, .ts_ns = t + 500,
				.dur_ns = 700, .corr = e.corr,
			};

			tp_sum_span(s, &k);
		}
		t += 1000 + (int64_t)(mix_rnd() % 2000);
	}
}

static void test_static_names(void)
{
	static char names[N_NAMES][24];
	struct tp_sum *a = tp_sum_new(), *b = tp_sum_new();
	struct tp_buf ja = { 0 }, jb = { 0 }, ma = { 0 }, mb = { 0 };
	unsigned i;

	for (i = 0; i < N_NAMES; i++)
		snprintf(names[i], sizeof(names[i]), "cudaCall%u", i);
	mix_feed(a, (const char (*)[24])names, 0);
	mix_feed(b, (const char (*)[24])names, 1);
	tp_sum_write_json(a, &ja, NULL, NULL);
	tp_sum_write_json(b, &jb, NULL, NULL);
	tp_sum_write_md(a, &ma);
	tp_sum_write_md(b, &mb);
	tp_buf_char(&ja, '\0');
	tp_buf_char(&jb, '\0');
	tp_buf_char(&ma, '\0');
	tp_buf_char(&mb, '\0');
	TP_CHECK("static names: the same summary.json as the text",
		 ja.p && jb.p && !strcmp(ja.p, jb.p), "\n%s\n%s", ja.p, jb.p);
	TP_CHECK("static names: the same summary.md as the text",
		 ma.p && mb.p && !strcmp(ma.p, mb.p), "\n%s\n%s", ma.p, mb.p);
	TP_CHECK("static names: every name has its row, groups found",
		 a->rows.n == N_NAMES + 6 && a->groups.n == 2,
		 "rows %zu groups %zu", a->rows.n, a->groups.n);
	tp_buf_free(&ja);
	tp_buf_free(&jb);
	tp_buf_free(&ma);
	tp_buf_free(&mb);
	tp_sum_free(a);
	tp_sum_free(b);
}

int main(void)
{
	test_hist();
	test_rows();
	test_gemm_tprof_order();
	test_gemm_torch_order();
	test_nccl();
	test_ranges_steps();
	test_memory();
	test_memory_capacity();
	test_args();
	test_typed_args();
	test_json();
	test_static_names();
	return TP_TEST_DONE();
}
