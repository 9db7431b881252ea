/* The summary's host side (summary/host*.c) on a timeline known exactly:
 * which CPU samples and which part of which blocking calls fell in the
 * GPU's idle intervals, through the GPU sweep, in the window mode the
 * library runs and in the exact mode tprof report runs. */
#include <stdlib.h>
#include <string.h>

#include "summary/summary.h"
#include "tp_test.h"

static const char A[] = "[\"f_a+0x10 (lib.so)\",\"main+0x5 (prog)\"]";
static const char A2[] = "[\"f_a+0x24 (lib.so)\",\"main+0x5 (prog)\"]";
static const char B[] = "[\"PyLong_Add+0x3 (libpython.so)\","
			"\"py::decode:/x/img.py:12\",\"main+0x5 (prog)\"]";

static void span_on(struct tp_sum *s, int64_t tid, const char *cat,
		    const char *name, int64_t ts, int64_t dur, const char *args)
{
	struct tp_sum_span e = {
		.cat = cat, .name = name, .pid = 1, .tid = tid, .ts_ns = ts,
		.dur_ns = dur, .args = args, .args_len = args ? strlen(args) : 0,
	};

	tp_sum_span(s, &e);
}

static void span(struct tp_sum *s, const char *cat, const char *name,
		 int64_t ts, int64_t dur, const char *args)
{
	span_on(s, 1, cat, name, ts, dur, args);
}

static void sample(struct tp_sum *s, int64_t ts, const char *stack)
{
	struct tp_sum_sample x = {
		.pid = 1, .tid = 2, .ts_ns = ts, .weight_ns = 1000,
		.stack = stack, .stack_len = strlen(stack),
	};

	tp_sum_sample(s, &x);
}

/* GPU busy [10000, 20000) and [50000, 60000): idle [20000, 50000).
 * Thread 1 launches; thread 9 only waits (its blocking is not shown). */
static void feed(struct tp_sum *s)
{
	span(s, "cuda_runtime", "cudaLaunchKernel", 1000, 10, NULL);
	sample(s, 5000, A);		/* before the GPU's span */
	span(s, "kernel", "k", 10000, 10000, NULL);
	sample(s, 15000, A);		/* busy */
	span(s, "osrt", "read", 18000, 14000, "{\"fd\":3,\"path\":\"/data/x\"}");
	span_on(s, 9, "osrt", "pthread_cond_wait", 19000, 40000, NULL);
	sample(s, 25000, B);		/* idle */
	sample(s, 30000, A2);		/* idle, another offset of f_a */
	sample(s, 45000, B);		/* idle */
	span(s, "kernel", "k", 50000, 10000, NULL);
	sample(s, 55000, B);		/* busy */
	span(s, "osrt", "nanosleep", 58000, 20000, NULL);
	sample(s, 70000, A);		/* after the GPU's last activity */
}

static char *json_of(int exact)
{
	struct tp_sum *s = tp_sum_new();
	struct tp_buf b = { 0 };

	if (exact)
		tp_sum_gpu_exact(s, 1 << 20);
	else
		tp_sum_gpu_window(s, 4);	/* records arrive in order */
	tp_sum_sampler(s, "perf_event", 1000);
	feed(s);
	tp_sum_write_json(s, &b, NULL, NULL);
	tp_buf_char(&b, '\0');
	tp_sum_free(s);
	return b.p;
}

static void check_mode(const char *mode, const char *j)
{
	char name[160];
	const char *idle = j ? strstr(j, "\"idle\": {") : NULL;

#define HAS(what, text)                                                  \
	snprintf(name, sizeof(name), "host summary, %s: %s", mode, what); \
	TP_CHECK(name, idle && strstr(idle, text), "%s", idle ? idle : "(none)")
	HAS("idle samples and time: 3 of 1 us, 12 us blocked in the "
	    "launching thread, 30 us in the other",
	    "\"idle\": {\"samples\": 3, \"sampled_ns\": 3000, "
	    "\"blocking_ns\": 12000, \"blocking_other_threads_ns\": 30000,");
	HAS("f_a's two offsets are one function, 1 us of self time",
	    "{\"function\": \"f_a (lib.so)\", \"python\": false, "
	    "\"self_ns\": 1000, \"total_ns\": 1000}");
	HAS("decode is the innermost Python function of 2 us, with its file "
	    "and line", "{\"function\": \"decode\", \"python\": true, "
	    "\"file\": \"/x/img.py\", \"line\": 12, \"ns\": 2000, "
	    "\"total_ns\": 2000}");
	HAS("the read's 12 us inside the gap (of 14), by file; not the sleep "
	    "after the GPU's span", "\"blocking\": [\n   {\"call\": \"read\", "
	    "\"file\": \"/data/x\", \"calls\": 1, \"ns\": 12000}]");
	HAS("the flame tree from main down",
	    "\"flame\": {\"name\": \"all\", \"ns\": 3000, \"children\": "
	    "[{\"name\": \"main (prog)\", \"ns\": 3000, \"children\": ["
	    "{\"name\": \"py::decode:/x/img.py:12\", \"ns\": 2000, "
	    "\"children\": [{\"name\": \"PyLong_Add (libpython.so)\", "
	    "\"ns\": 2000}]},{\"name\": \"f_a (lib.so)\", \"ns\": 1000}]}]}");
	snprintf(name, sizeof(name), "host summary, %s: the whole run", mode);
	TP_CHECK(name, j && strstr(j, "\"host_activity\": {\"version\": 1, "
		 "\"sampler\": \"perf_event\", \"sample_hz\": 1000, "
		 "\"samples\": 7, \"sampled_ns\": 7000, \"samples_unread\": 0, "
		 "\"blocking_calls\": 3, \"blocking_ns\": 74000, "
		 "\"gpu_idle_ns\": 30000,"), "%s", j ? j : "");
}

int main(void)
{
	char *w = json_of(0), *x = json_of(1);

	check_mode("window", w);
	check_mode("exact", x);
	free(w);
	free(x);
	return TP_TEST_DONE();
}
