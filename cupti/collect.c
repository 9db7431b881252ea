/* cupti/: the CUPTI client: GPU activity, API callbacks, devices, GPU
 * tracks; on trace/ .. output/. */
/* Collection: start CUPTI once per process, lend it bounded buffers, and
 * hand the filled ones to the writer.
 *
 * Buffers are TP_CUPTI_BUF_BYTES each, at most TPROF_CUPTI_BUFFER_MB in
 * all; when that is used up CUPTI is refused a buffer (it then drops and
 * counts records) rather than the program's memory growing. The writer
 * flushes CUPTI every FLUSH_CYCLES of its cycles and at the end.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "trace/gpu_source.h"
#include "trace/log.h"
#include "trace/session.h"
#include "trace/thread.h"
#include "cupti.h"
#include "devices.h"
#include "tracks.h"

#define TP_CUPTI_BUF_BYTES (1u << 20)
#define BUF_HEAD 64		/* keeps the records 8-byte aligned */
#define FLUSH_CYCLES 4

struct cbuf {
	struct cbuf *next;
	size_t valid;
};

enum { OFF, ON, STOPPED };

static const CUpti_ActivityKind kinds[] = {
	CUPTI_ACTIVITY_KIND_DEVICE, CUPTI_ACTIVITY_KIND_CONTEXT,
	CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL, CUPTI_ACTIVITY_KIND_MEMCPY,
	CUPTI_ACTIVITY_KIND_MEMCPY2, CUPTI_ACTIVITY_KIND_MEMSET,
	CUPTI_ACTIVITY_KIND_SYNCHRONIZATION, CUPTI_ACTIVITY_KIND_OVERHEAD,
	CUPTI_ACTIVITY_KIND_MEMORY2,
};
#define N_KINDS (sizeof(kinds) / sizeof(kinds[0]))

static struct {
	pthread_once_t once;
	int state;
	char reason[1200];
	char lib[4096];
	uint32_t version;
	CUpti_SubscriberHandle sub;
	int raw_ts;
	unsigned callbacks;
	int enabled[N_KINDS];
	pthread_mutex_t lock;
	struct cbuf *free, *queue, **queue_tail;
	size_t allocated, cap;
	uint64_t refused, dropped, buffers;
	int finalized;		/* after the last window: CUPTI let go */
	/* writer side */
	unsigned cycle;
	struct cbuf *fresh, *aged;
} C = {
	.once = PTHREAD_ONCE_INIT,
	.lock = PTHREAD_MUTEX_INITIALIZER,
};

static uint8_t *buf_data(struct cbuf *b)
{
	return (uint8_t *)b + BUF_HEAD;
}

static struct cbuf *buf_of(uint8_t *data)
{
	return (struct cbuf *)(data - BUF_HEAD);
}

static void CUPTIAPI buffer_requested(uint8_t **buffer, size_t *size,
				      size_t *max_records)
{
	struct cbuf *b;

	*buffer = NULL;
	*size = 0;
	*max_records = 0;
	pthread_mutex_lock(&C.lock);
	b = C.free;
	if (b) {
		C.free = b->next;
	} else if (C.allocated + TP_CUPTI_BUF_BYTES <= C.cap) {
		b = aligned_alloc(64, BUF_HEAD + TP_CUPTI_BUF_BYTES);
		if (b) {
			C.allocated += TP_CUPTI_BUF_BYTES;
			C.buffers++;
		}
	}
	if (!b)
		C.refused++;
	pthread_mutex_unlock(&C.lock);
	if (!b)
		return;
	*buffer = buf_data(b);
	*size = TP_CUPTI_BUF_BYTES;
}

static void CUPTIAPI buffer_completed(CUcontext ctx, uint32_t stream,
				      uint8_t *buffer, size_t size,
				      size_t valid)
{
	struct cbuf *b;
	size_t dropped = 0;

	(void)size;
	if (!buffer)
		return;
	if (tp_cupti.get_num_dropped(ctx, stream, &dropped) != CUPTI_SUCCESS)
		dropped = 0;
	b = buf_of(buffer);
	b->valid = valid;
	b->next = NULL;
	pthread_mutex_lock(&C.lock);
	C.dropped += dropped;
	*C.queue_tail = b;
	C.queue_tail = &b->next;
	pthread_mutex_unlock(&C.lock);
}

/* CUPTI's clock is ours: GPU times come back on the hooks' timeline. */
static uint64_t CUPTIAPI timestamp_now(void)
{
	return tp_clock_ns(CLOCK_MONOTONIC_RAW);
}

static void give_back(struct cbuf *list)
{
	struct cbuf *b, *next;

	pthread_mutex_lock(&C.lock);
	for (b = list; b; b = next) {
		next = b->next;
		b->next = C.free;
		C.free = b;
	}
	pthread_mutex_unlock(&C.lock);
}

static void disable_all(void)
{
	unsigned i;

	for (i = 0; i < N_KINDS; i++)
		if (C.enabled[i])
			tp_cupti.activity_disable(kinds[i]);
	memset(C.enabled, 0, sizeof(C.enabled));
}

static void take(int final)
{
	struct cbuf *list, **tail;

	if (C.state == OFF)
		return;
	if (C.state == ON && (final || ++C.cycle % FLUSH_CYCLES == 0))
		tp_cupti.flush_all(final ? CUPTI_ACTIVITY_FLAG_FLUSH_FORCED : 0);
	/* The end of the trace: nothing more is collected, so the rest of
	 * the process's life (exit handlers) pays nothing for CUPTI. */
	if (C.state == ON && final) {
		size_t dropped = 0;

		disable_all();
		C.state = STOPPED;
		/* Drops after the last delivered buffer are counted only here. */
		if (tp_cupti.get_num_dropped(NULL, 0, &dropped) == CUPTI_SUCCESS) {
			pthread_mutex_lock(&C.lock);
			C.dropped += dropped;
			pthread_mutex_unlock(&C.lock);
		}
	}
	pthread_mutex_lock(&C.lock);
	list = C.queue;
	C.queue = NULL;
	C.queue_tail = &C.queue;
	pthread_mutex_unlock(&C.lock);
	for (tail = &C.fresh; *tail; tail = &(*tail)->next)
		;
	*tail = list;
}

static uint64_t convert_list(struct tp_buf *b, const struct tp_clock_map *m,
			     struct cbuf *list, void (*flush)(void))
{
	CUpti_Activity *r;
	struct cbuf *cb;
	uint64_t n = 0;

	for (cb = list; cb; cb = cb->next) {
		r = NULL;
		while (tp_cupti.get_next_record(buf_data(cb), cb->valid, &r) ==
		       CUPTI_SUCCESS && r) {
			n += tp_cupti_convert(b, m, r);
			flush();
		}
	}
	give_back(list);
	return n;
}

/* Buffers taken a cycle ago, so the CPU calls they point to (committed
 * before their GPU work could finish) have been written. */
static uint64_t convert(struct tp_buf *b, const struct tp_clock_map *m,
			void (*flush)(void), int final)
{
	uint64_t n;

	if (C.state == OFF)
		return 0;
	n = convert_list(b, m, C.aged, flush);
	C.aged = C.fresh;
	C.fresh = NULL;
	if (final) {
		n += convert_list(b, m, C.aged, flush);
		C.aged = NULL;
	}
	return n;
}

static void put_stats(struct tp_buf *b)
{
	const struct tp_cupti_counts *n = tp_cupti_counts();

	tp_buf_lit(b, ",\n \"cupti\": {\"state\": ");
	tp_json_str(b, C.state == OFF ? "off" : "on");
	tp_buf_lit(b, ", \"reason\": ");
	tp_json_str(b, C.reason);
	tp_buf_lit(b, ", \"library\": ");
	tp_json_str(b, C.lib);
	tp_buf_lit(b, ", \"version\": ");
	tp_json_u64(b, C.version);
	tp_buf_lit(b, ", \"timestamps\": ");
	tp_json_str(b, C.raw_ts ? "tprof" : "cupti");
	tp_buf_lit(b, ", \"callbacks\": ");
	tp_json_u64(b, C.callbacks);
	tp_buf_lit(b, ", \"finalized\": ");
	tp_json_i64(b, C.finalized);
	tp_buf_lit(b, ",\n  \"records\": ");
	tp_json_u64(b, n->records);
	tp_buf_lit(b, ", \"kernels\": ");
	tp_json_u64(b, n->kernels);
	tp_buf_lit(b, ", \"memcpys\": ");
	tp_json_u64(b, n->memcpys);
	tp_buf_lit(b, ", \"memsets\": ");
	tp_json_u64(b, n->memsets);
	tp_buf_lit(b, ", \"syncs\": ");
	tp_json_u64(b, n->syncs);
	tp_buf_lit(b, ", \"memory\": ");
	tp_json_u64(b, n->memory);
	tp_buf_lit(b, ", \"overhead\": ");
	tp_json_u64(b, n->overhead);
	tp_buf_lit(b, ",\n  \"dropped\": ");
	pthread_mutex_lock(&C.lock);
	tp_json_u64(b, C.dropped);
	tp_buf_lit(b, ", \"refused_buffers\": ");
	tp_json_u64(b, C.refused);
	tp_buf_lit(b, ", \"buffers\": ");
	tp_json_u64(b, C.buffers);
	pthread_mutex_unlock(&C.lock);
	tp_buf_lit(b, ", \"buffer_mb\": ");
	tp_json_u64(b, C.cap >> 20);
	tp_buf_lit(b, ", \"zero_timestamps\": ");
	tp_json_u64(b, n->zero_ts);
	tp_buf_lit(b, ", \"clamped\": ");
	tp_json_u64(b, n->clamped);
	tp_buf_lit(b, ", \"unlinked\": ");
	tp_json_u64(b, n->unlinked);
	tp_buf_lit(b, ", \"unknown_records\": ");
	tp_json_u64(b, n->unknown);
	tp_buf_char(b, '}');
}

static void exit_note(char *s, size_t len)
{
	const struct tp_cupti_counts *n = tp_cupti_counts();

	if (C.state == OFF) {
		snprintf(s, len, "; no GPU activity: CUPTI is off");
		return;
	}
	pthread_mutex_lock(&C.lock);
	snprintf(s, len, "; GPU: %llu records, %llu lost (%llu dropped by "
		 "CUPTI, %llu buffers refused, %llu without timestamps)",
		 (unsigned long long)n->records,
		 (unsigned long long)(C.dropped + n->zero_ts),
		 (unsigned long long)C.dropped, (unsigned long long)C.refused,
		 (unsigned long long)n->zero_ts);
	pthread_mutex_unlock(&C.lock);
}

/* After the last recording window: without a subscriber and finalized,
 * CUPTI costs the rest of the run nothing. Records still in flight are
 * counted as dropped by CUPTI, not lost silently. */
static void teardown(void)
{
	if (C.state == OFF || C.finalized)
		return;
	tp_cupti.unsubscribe(C.sub);
	C.finalized = tp_cupti.finalize() == CUPTI_SUCCESS ? 1 : -1;
	tp_info("the last recording window has ended: CUPTI %s",
		C.finalized > 0 ? "finalized" : "unsubscribed (cuptiFinalize "
		"failed)");
}

static uint64_t dropped_records(void)
{
	return C.dropped;
}

static const struct tp_gpu_source source = {
	.take = take,
	.convert = convert,
	.teardown = teardown,
	.put_meta = tp_cupti_put_meta,
	.put_devices = tp_devices_put_json,
	.put_stats = put_stats,
	.exit_note = exit_note,
	.dropped = dropped_records,
};

/* One warning line, naming the cause; CPU-side tracing goes on. */
static void degrade(const char *fmt, ...)
	__attribute__((format(printf, 1, 2)));

static void degrade(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(C.reason, sizeof(C.reason), fmt, ap);
	va_end(ap);
	C.state = OFF;
	tp_warn("%s; GPU activity is not recorded, CPU-side tracing goes on",
		C.reason);
}

static int subscribe(void)
{
	CUptiResult r = tp_cupti.subscribe(&C.sub, tp_cupti_on_callback, NULL);

	if (r == CUPTI_SUCCESS)
		return 0;
	if (r == CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED) {
		degrade("CUPTI is already in use by another tool in this "
			"process (torch.profiler, nsys, compute-sanitizer, "
			"...; CUPTI allows one): profile with one tool at a "
			"time, or set TPROF_TRACE without 'gpu'");
		return -1;
	}
	/* the driver answered (tp_cuda_driver_check), so no device, most
	 * likely: CUDA_VISIBLE_DEVICES empty, or a container without GPUs */
	degrade("CUPTI cannot start (cuptiSubscribe: %s): check that "
		"nvidia-smi lists a GPU and CUDA_VISIBLE_DEVICES names it",
		tp_cupti_result(r));
	return -1;
}

static int enable_kinds(void)
{
	CUptiResult r;
	unsigned i;

	for (i = 0; i < N_KINDS; i++) {
		if (kinds[i] == CUPTI_ACTIVITY_KIND_MEMORY2 &&
		    !(tp_sess.cfg.sources & TP_SRC_MEM))
			continue;
		r = tp_cupti.activity_enable(kinds[i]);
		C.enabled[i] = r == CUPTI_SUCCESS;
		if (r == CUPTI_SUCCESS ||
		    kinds[i] != CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL)
			continue;
		disable_all();
		degrade("CUPTI cannot record kernels (cuptiActivityEnable: "
			"%s)", tp_cupti_result(r));
		return -1;
	}
	return 0;
}

static void start_once(void)
{
	struct tp_thread *self = tp_self;
	char why[1100];
	CUptiResult r;

	C.queue_tail = &C.queue;
	C.cap = (size_t)tp_sess.cfg.cupti_buffer_mb << 20;
	tp_writer_set_gpu(&source);
	/* CUPTI's own start-up calls record nothing. */
	tp_self = tp_thread_internal();
	if (tp_cupti_load(&tp_sess.cfg, C.lib, sizeof(C.lib), &C.version,
			  why, sizeof(why)) < 0) {
		degrade("%s", why);
		goto out;
	}
	if (subscribe() < 0)
		goto out;
	/* Before any kind is enabled, so every record uses it. */
	C.raw_ts = tp_cupti.register_timestamp(timestamp_now) == CUPTI_SUCCESS;
	tp_cupti_convert_init(C.raw_ts);
	r = tp_cupti.register_callbacks(buffer_requested, buffer_completed);
	if (r != CUPTI_SUCCESS) {
		tp_cupti.unsubscribe(C.sub);
		degrade("CUPTI refused tprof's buffers "
			"(cuptiActivityRegisterCallbacks: %s)",
			tp_cupti_result(r));
		goto out;
	}
	C.callbacks = tp_cupti_enable_callbacks(C.sub);
	if (enable_kinds() < 0) {
		tp_cupti.unsubscribe(C.sub);
		goto out;
	}
	C.state = ON;
	tp_info("CUPTI %u from %s: recording GPU activity", C.version, C.lib);
out:
	tp_self = self;
}

/* On the first CUDA call tprof sees, or at load for programs with
 * device code of their own: before their first kernel. */
void tp_cupti_start(void)
{
	if (!tp_sess.active || !(tp_sess.cfg.sources & TP_SRC_GPU))
		return;
	pthread_once(&C.once, start_once);
}

/* The child cannot use the parent's CUDA state: no GPU records there. */
void tp_cupti_after_fork(void)
{
	if (C.state != OFF)
		snprintf(C.reason, sizeof(C.reason), "forked child: CUDA "
			 "state is not inherited");
	C.state = OFF;
	C.queue = C.free = C.fresh = C.aged = NULL;
	C.queue_tail = &C.queue;
	C.allocated = 0;
	pthread_mutex_init(&C.lock, NULL);
	tp_track_reset();
	tp_devices_reset();
}
