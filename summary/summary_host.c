/* summary/: the summary aggregator: per-name statistics, histograms, steps,
 * groups, memory, and its JSON/markdown output; on util/ .. session/ and
 * stacks/. */
/* CPU samples and blocking calls into the host side (host.h), and
 * through the GPU analyses' sweep, which says which fell while the GPU
 * was idle. */
#include "gpu.h"
#include "host.h"
#include "summary_int.h"

void tp_sum_sample(struct tp_sum *s, const struct tp_sum_sample *x)
{
	int64_t id = tp_host_sample(s->host, x->stack, x->stack_len,
				    x->weight_ns, x->tid);

	if (x->ts_ns < s->start)
		s->start = x->ts_ns;
	if (x->ts_ns > s->end)
		s->end = x->ts_ns;
	if (id >= 0 && s->gpu)
		tp_gpu_sample(s->gpu, x->ts_ns, x->weight_ns, (uint32_t)id);
}

void tp_sum_feeder(struct tp_sum *s, int64_t tid)
{
	s->feeder_known = tp_host_feeder(s->host, tid) == 0;
	s->feeder_last = tid;
}

void tp_sum_sampler(struct tp_sum *s, const char *mechanism, unsigned hz)
{
	tp_host_set_sampler(s->host, mechanism, hz);
}

/* A blocking call is kept by (call, file): the file its descriptor was,
 * or the path it opened. */
void tp_sum_osrt(struct tp_sum *s, const struct tp_sum_span *e)
{
	struct sum_arg a = { "path", NULL, 0, NULL };
	char buf[512];
	const char *path;
	int64_t key;

	tp_sum_span_args(e, &a, 1);
	path = tp_sum_arg_str(&a, buf, sizeof(buf));
	key = tp_host_osrt(s->host, e->name, path, e->dur_ns, e->tid);
	if (key >= 0 && s->gpu)
		tp_gpu_osrt(s->gpu, e, (uint32_t)key);
}
