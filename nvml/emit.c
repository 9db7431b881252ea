/* nvml/: the GPU health counters from NVML, sampled beside the trace; on
 * util/ .. cupti/. */
/* The writer's side of the GPU health counters, on the writer thread:
 * each cycle it publishes the devices the process uses (CUPTI's device
 * records with a context on them), starts the sampler once there is
 * one, and writes the samples taken since as counter events on each
 * device (pid = the CUDA device, JSON "C" events, Perfetto counter
 * tracks), each fed to the summary as written. At the end it stops the
 * sampler, writes its last samples, and says in the trailer
 * (tprof.gpu_metrics) and the summary what was sampled and what was
 * not. */
#include <stdio.h>
#include <string.h>

#include "capture/capture.h"
#include "config/config.h"
#include "cupti/devices.h"
#include "cupti/tracks.h"
#include "output/writer.h"
#include "session/session.h"
#include "session/timeline.h"
#include "summary/health.h"
#include "summary/proc_summary.h"
#include "util/log.h"
#include "gpumetrics.h"
#include "gpumetrics_int.h"

/* How long the end of the trace waits for the sampler to stop: one NVML
 * call, normally well under a millisecond. */
#define STOP_WAIT_MS 500

static uint64_t published;	/* CUDA devices given a slot */
static uint64_t left_out;	/* used devices past TP_GM_DEVICES */
static struct tp_targs A;

/* The counter events of a sample, one per unit, and their keys. */
static const struct group {
	const char *name;
	int m[2];
	int n;
} groups[] = {
	{ "GPU clocks", { GM_SM, GM_MEMCLK }, 2 },
	{ "GPU power", { GM_POWER, GM_LIMIT }, 2 },
	{ "GPU temperature", { GM_TEMP, 0 }, 1 },
	{ "GPU utilization", { GM_GUTIL, GM_MUTIL }, 2 },
	{ "GPU memory used", { GM_MUSED, GM_MTOTAL }, 2 },
	{ "GPU PCIe", { GM_PCIE_TX, GM_PCIE_RX }, 2 },
	{ "GPU NVLink", { GM_NVL_TX, GM_NVL_RX }, 2 },
	{ "GPU ECC", { GM_ECC_C, GM_ECC_U }, 2 },
	{ "GPU XID", { GM_XID_N, GM_XID_LAST }, 2 },
};

#define REASON_ROW(bit, name) { bit, #name },
static const struct {
	unsigned long long bit;
	const char *name;
} reasons[] = { TP_NVML_REASONS(REASON_ROW) };
#undef REASON_ROW

/* CUDA's 16 bytes as NVML writes a UUID: "GPU-" 8-4-4-4-12 hex. */
static void uuid_str(char *out, size_t size, const unsigned char *u)
{
	unsigned i, zero = 1;
	size_t n;

	for (i = 0; i < 16; i++)
		zero &= !u[i];
	if (zero) {
		out[0] = '\0';
		return;
	}
	n = (size_t)snprintf(out, size, "GPU-");
	for (i = 0; i < 16 && n + 3 < size; i++)
		n += (size_t)snprintf(out + n, size - n, "%s%02x",
				      i == 4 || i == 6 || i == 8 || i == 10 ?
				      "-" : "", u[i]);
}

static void publish(void)
{
	const struct tp_device *v;
	unsigned n = tp_gm.ndev;
	struct tp_gm_dev *d;
	uint32_t id;

	for (id = 0; id < TP_MAX_DEVICES; id++) {
		if (published & (1ull << id))
			continue;
		v = tp_device_get(id);
		if (!v || !tp_device_used(id))
			continue;
		published |= 1ull << id;
		if (n == TP_GM_DEVICES) {
			left_out++;
			continue;
		}
		d = &tp_gm.dev[n];
		d->cuda_id = id;
		uuid_str(d->uuid, sizeof(d->uuid),
			 (const unsigned char *)v->d.uuid.bytes);
		__atomic_store_n(&tp_gm.ndev, ++n, __ATOMIC_RELEASE);
	}
}

static unsigned put_event(struct tp_buf *b, const char *name, uint32_t dev,
			  int64_t ts)
{
	struct tp_tev ev;

	if (!A.n)
		return 0;
	memset(&ev, 0, sizeof(ev));
	ev.track.kind = TP_TEV_COUNTER;
	ev.track.pid = dev;
	ev.track.tid = -1;	/* a device's counter */
	ev.phase = TP_TEV_COUNTER_SET;
	ev.name = name;
	ev.namelen = strlen(name);
	ev.cat = "gpu_metrics";
	ev.catlen = 11;
	ev.ts_ns = ts;
	ev.args = A.a;
	ev.nargs = A.n;
	ev.static_names = ev.static_keys = ev.plain_names = 1;
	tp_tev_put(b, &ev);
	return 1;
}

static void arg(const char *event, uint32_t dev, const char *key,
		uint64_t v)
{
	tp_targs_uint(&A, key, v);
	tp_psum_health_sample(dev, event, key, strlen(key), (double)v);
}

static unsigned put_sample(struct tp_buf *b, const struct tp_gm_sample *s)
{
	int64_t ts = tp_trace_ns(s->ticks);
	uint32_t dev = tp_gm.dev[s->slot].cuda_id;
	const char *rn = TP_HEALTH_REASONS_EVENT;
	unsigned i, k, n = 0;

	if (!tp_capture_kept_ns(ts))
		return 0;
	tp_gm.written++;
	for (i = 0; i < sizeof(groups) / sizeof(groups[0]); i++) {
		tp_targs_reset(&A);
		for (k = 0; k < (unsigned)groups[i].n; k++)
			if (s->valid & (1u << groups[i].m[k]))
				arg(groups[i].name, dev,
				    tp_gm_names[groups[i].m[k]],
				    s->v[groups[i].m[k]]);
		n += put_event(b, groups[i].name, dev, ts);
	}
	if (!(s->valid & (1u << GM_REASONS)))
		return n;
	tp_targs_reset(&A);
	for (i = 0; i < sizeof(reasons) / sizeof(reasons[0]); i++)
		arg(rn, dev, reasons[i].name,
		    !!(s->v[GM_REASONS] & reasons[i].bit));
	return n + put_event(b, rn, dev, ts);
}

static unsigned drain(struct tp_buf *b)
{
	uint64_t head = __atomic_load_n(&tp_gm.head, __ATOMIC_ACQUIRE);
	uint64_t tail = tp_gm.tail;
	unsigned n = 0;

	for (; tail != head; tail++)
		n += put_sample(b, &tp_gm.ring[tail % TP_GM_RING]);
	__atomic_store_n(&tp_gm.tail, tail, __ATOMIC_RELEASE);
	return n;
}

static unsigned cycle(struct tp_buf *b)
{
	publish();
	if (tp_gm.ndev && !tp_gm.started)
		tp_gm_sampler_start();
	return drain(b);
}

static const char *state(void)
{
	if (__atomic_load_n(&tp_gm.state_ready, __ATOMIC_ACQUIRE))
		return tp_gm.state;
	if (!tp_gm.started)
		return "not sampled: no GPU used (no CUPTI device record with "
		       "a context on it)";
	return "not sampled: the sampler did not start in time";
}

/* Why a counter of a device was not read, or NULL: a refusal, or
 * failures (then why holds the words). */
static const char *unavailable(const struct tp_gm_dev *d, int m, char *why,
			       size_t len)
{
	int gone = __atomic_load_n(&d->gone[m], __ATOMIC_RELAXED);
	uint64_t failed = __atomic_load_n(&d->failed[m], __ATOMIC_RELAXED);

	if (d->map_rc)
		return NULL;
	if (gone)
		return tp_nvml_rc_words(gone);
	if (!failed)
		return NULL;
	snprintf(why, len, "failed %llu times: %s", (unsigned long long)failed,
		 tp_nvml_rc_words(__atomic_load_n(&d->last_rc[m],
						  __ATOMIC_RELAXED)));
	return why;
}

static void map_why(const struct tp_gm_dev *d, char *why, size_t len)
{
	if (!d->uuid[0])
		snprintf(why, len, "not sampled: CUPTI gave no UUID to find "
			 "it in NVML");
	else
		snprintf(why, len, "not sampled: nvmlDeviceGetHandleByUUID: "
			 "%s", tp_nvml_rc_words(d->map_rc));
}

/* The summary's view of what the trailer says. */
static void feed_summary(void)
{
	unsigned i, m, n = __atomic_load_n(&tp_gm.ndev, __ATOMIC_ACQUIRE);
	const char *w;
	char why[120];

	tp_psum_health_state(state(), tp_gm.hz);
	for (i = 0; i < n; i++) {
		const struct tp_gm_dev *d = &tp_gm.dev[i];

		tp_psum_health_device(d->cuda_id, d->uuid);
		if (d->map_rc) {
			map_why(d, why, sizeof(why));
			tp_psum_health_unavailable(d->cuda_id, "all", why);
			continue;
		}
		for (m = 0; m < GM_N; m++)
			if ((w = unavailable(d, (int)m, why, sizeof(why))))
				tp_psum_health_unavailable(d->cuda_id,
							   tp_gm_names[m], w);
	}
}

static unsigned trace_end(struct tp_buf *b, int64_t end_ns)
{
	unsigned n;

	(void)end_ns;
	if (tp_gm_sampler_stop(STOP_WAIT_MS) < 0)
		tp_warn("the GPU metrics sampler did not stop within %d ms (an "
			"NVML call blocks); the trace has its samples up to "
			"now", STOP_WAIT_MS);
	n = drain(b);
	feed_summary();
	return n;
}

static void put_device(struct tp_buf *b, const struct tp_gm_dev *d)
{
	const char *w;
	char why[120];
	unsigned m, k = 0;

	tp_buf_lit(b, "{\"device\": ");
	tp_json_u64(b, d->cuda_id);
	tp_buf_lit(b, ", \"uuid\": ");
	tp_json_str(b, d->uuid);
	tp_buf_lit(b, ", \"mapped\": ");
	tp_buf_cstr(b, d->map_rc || !d->mapped ? "false" : "true");
	tp_buf_lit(b, ", \"unavailable\": {");
	if (d->map_rc) {
		map_why(d, why, sizeof(why));
		tp_buf_lit(b, "\"all\": ");
		tp_json_str(b, why);
	}
	for (m = 0; m < GM_N && !d->map_rc; m++) {
		if (!(w = unavailable(d, (int)m, why, sizeof(why))))
			continue;
		tp_buf_cstr(b, k++ ? ", " : "");
		tp_json_str(b, tp_gm_names[m]);
		tp_buf_lit(b, ": ");
		tp_json_str(b, w);
	}
	tp_buf_lit(b, "}}");
}

static void put_stats(struct tp_buf *b)
{
	unsigned i, n = __atomic_load_n(&tp_gm.ndev, __ATOMIC_ACQUIRE);
	int done = __atomic_load_n(&tp_gm.done, __ATOMIC_ACQUIRE);

	tp_buf_lit(b, ",\n \"gpu_metrics\": {\"source\": \"nvml\", "
		   "\"state\": ");
	tp_json_str(b, state());
	tp_buf_lit(b, ", \"hz\": ");
	tp_json_i64(b, tp_gm.hz);
	tp_buf_lit(b, ", \"samples\": ");
	tp_json_u64(b, tp_gm.written);
	tp_buf_lit(b, ", \"dropped\": ");
	tp_json_u64(b, __atomic_load_n(&tp_gm.dropped, __ATOMIC_RELAXED));
	/* the sampler's own cost: its thread's CPU time over its life */
	tp_buf_lit(b, ", \"sampler_cpu_ns\": ");
	tp_json_u64(b, done ? tp_gm.cpu_ns : 0);
	tp_buf_lit(b, ", \"sampler_wall_ns\": ");
	tp_json_u64(b, done ? tp_gm.wall_ns : 0);
	tp_buf_lit(b, ", \"devices_left_out\": ");
	tp_json_u64(b, left_out);
	tp_buf_lit(b, ", \"devices\": [");
	for (i = 0; i < n; i++) {
		tp_buf_cstr(b, i ? ", " : "");
		put_device(b, &tp_gm.dev[i]);
	}
	tp_buf_lit(b, "]}");
}

static const struct tp_writer_ext gm_ext = {
	.cycle = cycle,
	.trace_end = trace_end,
	.put_stats = put_stats,
};

void tp_gpumetrics_setup(void)
{
	if (!(tp_sess.cfg.sources & TP_SRC_GPUMETRICS))
		return;
	tp_gm.hz = tp_sess.cfg.gm_hz;
	tp_gm.period_ns = 1000000000ull / (uint64_t)tp_gm.hz;
	tp_writer_add_ext(&gm_ext);
}

/* The child's writer keeps its extensions (this one included) and the
 * sampler's rate: only what the parent sampled is forgotten. */
void tp_gpumetrics_after_fork(void)
{
	tp_gm_sampler_after_fork();
	published = 0;
	left_out = 0;
}
