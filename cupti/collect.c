/* cupti/: the CUPTI client: GPU activity, API callbacks, devices, GPU
 * tracks; on util/ .. output/. */
/* Collection: start CUPTI once per process, and turn the buffers it hands
 * back (buffers.c) into trace events on the writer's thread.
 *
 * The writer flushes CUPTI every FLUSH_CYCLES of its cycles (200 ms: a
 * CUPTI 13.2 call is slow when repeated, so no more often) and converts
 * a batch of buffers a cycle after it arrived, so the CPU calls its
 * records point to have been written. A batch is converted in the order
 * of its records' start times, whatever thread's buffer they came in.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "record/corrmap.h"
#include "record/gpu_source.h"
#include "util/log.h"
#include "session/session.h"
#include "record/thread.h"
#include "session/timeline.h"
#include "clockmap.h"
#include "collect.h"
#include "devices.h"
#include "tracks.h"

#define FLUSH_CYCLES 4
/* Device-side buffers for GPU timestamps: CUPTI's defaults, untouched
 * (3.2 MB each, at most 250 per context). tprof once capped the pool at
 * 32 x 4 MB to bound the program's device memory (128 MB per context
 * instead of up to 800 MB), but cupti_activity.h says a bigger pool
 * "helps in timestamp collection" for programs with a high rate of
 * launches, and with CUDA graphs on 13.0.85 timestamps went zero after
 * ~0.9 M records at a pool limit of 8 (parca-dev/parcagpu#23): the
 * memory is the price of times that are there. CUPTI allocates a pool
 * buffer only when the ones in use are full of records not yet read
 * back, so a program keeping up uses a few (3 are pre-allocated). */
/* Records further than this outside the trace's span are not placed. */
#define CLOCK_SLACK_NS 60000000000ll

static struct {
	pthread_once_t once;
	/* writer side */
	unsigned cycle;
	struct tp_cbuf *fresh, *aged;
	struct sorted *v;
	size_t n, cap;
} C = {
	.once = PTHREAD_ONCE_INIT,
};

/* Records of a batch in this order: devices and contexts, then GPU ops
 * by start, then syncs (which learn their device from the ops' contexts:
 * a context made before tprof started, or a green context, has no
 * CONTEXT record). */
struct sorted {
	int class;
	uint64_t start;
	size_t seq;
	const CUpti_Activity *r;
};

/* CUPTI's clock: nanoseconds (cupti_activity.h: "The returned timestamp
 * must be in nanoseconds"), a fixed linear function of the hooks' tick
 * counter (convert.c), so GPU times are mapped to the trace by the very
 * function that maps CPU events (tp_trace_ns) and the two timelines
 * cannot drift apart. Registered on every CUPTI version, as Kineto does
 * from CUDA 11.6: CUPTI's own clock would be CLOCK_REALTIME, which NTP
 * steps move. */
static uint64_t CUPTIAPI timestamp_now(void)
{
	return tp_cupti_ns_now();
}

static void take(int final)
{
	struct tp_cbuf *list, **tail;
	int state = __atomic_load_n(&tp_cs.state, __ATOMIC_ACQUIRE);

	if (state == TP_CUPTI_OFF)
		return;
	if (state == TP_CUPTI_ON &&
	    (final || ++C.cycle % FLUSH_CYCLES == 0))
		tp_cupti_flush(final);
	if (__atomic_exchange_n(&tp_cs.check_buffers, 0, __ATOMIC_ACQ_REL))
		tp_cupti_check_buffers();
	list = tp_cupti_buffers_take();
	for (tail = &C.fresh; *tail; tail = &(*tail)->next)
		;
	*tail = list;
}

static uint64_t record_start(const CUpti_Activity *r)
{
	switch (r->kind) {
	case CUPTI_ACTIVITY_KIND_KERNEL:
	case CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL:
		return ((const CUpti_ActivityKernel10 *)r)->start;
	case CUPTI_ACTIVITY_KIND_MEMCPY:
		return ((const CUpti_ActivityMemcpy6 *)r)->start;
	case CUPTI_ACTIVITY_KIND_MEMCPY2:
		return ((const CUpti_ActivityMemcpyPtoP4 *)r)->start;
	case CUPTI_ACTIVITY_KIND_MEMSET:
		return ((const CUpti_ActivityMemset4 *)r)->start;
	case CUPTI_ACTIVITY_KIND_SYNCHRONIZATION:
		return ((const CUpti_ActivitySynchronization2 *)r)->start;
	case CUPTI_ACTIVITY_KIND_OVERHEAD:
		return ((const CUpti_ActivityOverhead3 *)r)->start;
	case CUPTI_ACTIVITY_KIND_MEMORY2:
		return ((const CUpti_ActivityMemory4 *)r)->timestamp;
	default:
		return 0;	/* devices and contexts first */
	}
}

static int by_start(const void *a, const void *b)
{
	const struct sorted *x = a, *y = b;

	if (x->class != y->class)
		return x->class < y->class ? -1 : 1;
	if (x->start != y->start)
		return x->start < y->start ? -1 : 1;
	return x->seq < y->seq ? -1 : x->seq > y->seq;
}

static int collect_record(const CUpti_Activity *r)
{
	struct sorted *v;

	if (C.n == C.cap) {
		size_t cap = C.cap ? C.cap * 2 : 4096;

		v = realloc(C.v, cap * sizeof(*v));
		if (!v)
			return -1;
		C.v = v;
		C.cap = cap;
	}
	C.v[C.n].class = r->kind == CUPTI_ACTIVITY_KIND_DEVICE ||
			 r->kind == CUPTI_ACTIVITY_KIND_CONTEXT ? 0 :
			 r->kind == CUPTI_ACTIVITY_KIND_SYNCHRONIZATION ? 2 : 1;
	C.v[C.n].start = record_start(r);
	C.v[C.n].seq = C.n;
	C.v[C.n].r = r;
	C.n++;
	return 0;
}

/* Every record of the batch, from the offsets found when CUPTI handed
 * each buffer back (buffers.c): no CUPTI call here, so none after
 * cuptiFinalize. A buffer whose records stopped before its valid end (an
 * incomplete record: CUPTI_ERROR_INVALID_KIND) is counted as truncated. */
static void collect_list(struct tp_cbuf *list)
{
	struct tp_cupti_counts *n = tp_cupti_counts_w();
	struct tp_cbuf *cb;
	size_t i;

	for (cb = list; cb; cb = cb->next) {
		if (cb->discard && cb->nrec) {
			pthread_mutex_lock(&tp_cs.lock);
			tp_cs.dropped += cb->nrec;
			tp_cs.discarded += cb->nrec;
			pthread_mutex_unlock(&tp_cs.lock);
		}
		for (i = 0; !cb->discard && i < cb->nrec; i++)
			if (collect_record((const CUpti_Activity *)
					   (cb->data + cb->offs[i])) < 0)
				n->unplaced++;
		if (cb->truncated)
			n->truncated++;
	}
}

/* Without tprof's timestamp callback, records are in CUPTI's own
 * clock (nanoseconds): a batch with records is converted with the line
 * through the samples of the last batches, one taken now, after every
 * record of the batch (clockmap.h). */
static void cupti_clock(int sample)
{
	struct tp_cclock_line l;

	if (tp_cs.raw_ts)
		return;
	/* Once finalized, any CUPTI call would start it again: the line
	 * stays as the samples before made it. */
	if (sample && __atomic_load_n(&tp_cs.finalized, __ATOMIC_RELAXED) != 1)
		tp_cclock_sample();
	tp_cclock_line(&tp_tl.map, &l);
	tp_cupti_convert_line(&l);
}

static void set_window(int records)
{
	int64_t lo = (int64_t)(tp_sess.anchor.unix_ns -
			       (uint64_t)tp_sess.base_ns);

	/* No CUPTI call once it is finalized: the line stays as the
	 * samples before made it. */
	cupti_clock(tp_cupti_calls_begin() && records);
	tp_cupti_calls_end();
	tp_cupti_convert_window(lo - CLOCK_SLACK_NS,
				tp_trace_ns(tp_ticks()) + CLOCK_SLACK_NS);
}

static uint64_t convert_list(struct tp_buf *b, const struct tp_clock_map *m,
			     struct tp_cbuf *list, void (*flush)(void))
{
	uint64_t n = 0;
	size_t i;

	C.n = 0;
	collect_list(list);
	if (C.n)	/* C.v is NULL until a record came */
		qsort(C.v, C.n, sizeof(*C.v), by_start);
	set_window(C.n > 0);
	for (i = 0; i < C.n; i++) {
		n += tp_cupti_convert(b, m, C.v[i].r);
		flush();
	}
	tp_cupti_buffers_give_back(list);
	return n;
}

/* Buffers taken a cycle ago, so the CPU calls they point to (committed
 * before their GPU work could finish) have been written. */
static uint64_t convert(struct tp_buf *b, const struct tp_clock_map *m,
			void (*flush)(void), int final)
{
	uint64_t n;

	if (__atomic_load_n(&tp_cs.state, __ATOMIC_ACQUIRE) == TP_CUPTI_OFF)
		return 0;
	if (final) {
		struct tp_cbuf **tail;

		for (tail = &C.aged; *tail; tail = &(*tail)->next)
			;
		*tail = C.fresh;
		C.fresh = NULL;
	}
	n = convert_list(b, m, C.aged, flush);
	C.aged = C.fresh;
	C.fresh = NULL;
	return n;
}

static void put_counts(struct tp_buf *b, const struct tp_cupti_counts *n)
{
	static const struct {
		const char *key;
		size_t off;
	} keys[] = {
#define K(k, f) { k, offsetof(struct tp_cupti_counts, f) }
		K("records", records), K("kernels", kernels),
		K("memcpys", memcpys), K("memsets", memsets),
		K("syncs", syncs), K("memory", memory),
		K("overhead", overhead), K("zero_timestamps", zero_ts),
		K("shifted", shifted), K("shifted_max_ns", shifted_max_ns),
		K("overlapped", overlapped),
		K("late", late), K("unclocked", unclocked),
		K("unplaced", unplaced), K("truncated_buffers", truncated),
		K("unlinked", unlinked), K("unknown_records", unknown),
#undef K
	};
	unsigned i;

	for (i = 0; i < sizeof(keys) / sizeof(keys[0]); i++) {
		if (i)
			tp_buf_lit(b, ", \"");
		else
			tp_buf_lit(b, ",\n  \"");
		tp_buf_cstr(b, keys[i].key);
		tp_buf_lit(b, "\": ");
		tp_json_u64(b, *(const uint64_t *)((const char *)n +
						   keys[i].off));
	}
	/* Grown past its first 65,536: launches outran their GPU records. */
	tp_buf_lit(b, ", \"link_slots\": ");
	tp_json_u64(b, tp_corr_slots());
}

/* The program's own CUPTI client, if one acted. */
static void put_client(struct tp_buf *b)
{
	const char *who;
	double at = 0;

	who = tp_cupti_client(&at);
	tp_buf_lit(b, ", \"other_client\": ");
	if (!who) {
		tp_buf_lit(b, "null");
		return;
	}
	tp_json_str(b, who);
	tp_buf_lit(b, ", \"other_client_at_us\": ");
	tp_json_us(b, (int64_t)(at * 1e9));
}

/* How CUPTI's own clock was mapped (clockmap.h): samples taken, those
 * rejected, and the widest bracket the current line rests on. */
static void put_clock(struct tp_buf *b)
{
	struct tp_cclock_stats st;

	tp_cclock_get_stats(&tp_tl.map, &st);
	tp_buf_lit(b, ", \"clock_samples\": ");
	tp_json_u64(b, st.samples);
	tp_buf_lit(b, ", \"clock_rejected\": ");
	tp_json_u64(b, st.rejected);
	tp_buf_lit(b, ", \"clock_bracket_ns\": ");
	tp_json_u64(b, st.widest_used_ns);
}

static void put_stats(struct tp_buf *b)
{
	tp_buf_lit(b, ",\n \"cupti\": {\"state\": ");
	tp_json_str(b, __atomic_load_n(&tp_cs.state, __ATOMIC_ACQUIRE) ==
		       TP_CUPTI_OFF ? "off" : "on");
	tp_buf_lit(b, ", \"reason\": ");
	tp_json_str(b, tp_cs.reason);
	tp_buf_lit(b, ", \"library\": ");
	tp_json_str(b, tp_cs.lib);
	tp_buf_lit(b, ", \"version\": ");
	tp_json_u64(b, tp_cs.version);
	tp_buf_lit(b, ", \"timestamps\": ");
	tp_json_str(b, tp_cs.raw_ts ? "tprof" : "cupti");
	tp_buf_lit(b, ", \"subscribers\": ");
	tp_json_str(b, tp_cs.multi ? "several" : "one");
	tp_buf_lit(b, ", \"callbacks\": ");
	tp_json_u64(b, tp_cs.callbacks);
	tp_buf_lit(b, ", \"finalized\": ");
	tp_json_i64(b, tp_cs.finalized);
	tp_buf_lit(b, ", \"stopped_at_us\": ");
	tp_json_us(b, (int64_t)tp_cs.stopped_at_ns);
	tp_buf_lit(b, ", \"stopped_why\": ");
	tp_json_str(b, tp_cs.stopped_why ? tp_cs.stopped_why : "");
	put_client(b);
	put_clock(b);
	put_counts(b, tp_cupti_counts());
	tp_buf_lit(b, ",\n  \"dropped\": ");
	pthread_mutex_lock(&tp_cs.lock);
	tp_json_u64(b, tp_cs.dropped);
	tp_buf_lit(b, ", \"refused_buffers\": ");
	tp_json_u64(b, tp_cs.refused);
	tp_buf_lit(b, ", \"buffers\": ");
	tp_json_u64(b, tp_cs.buffers);
	tp_buf_lit(b, ", \"foreign_buffers\": ");
	tp_json_u64(b, tp_cs.foreign);
	tp_buf_lit(b, ", \"discarded\": ");
	tp_json_u64(b, tp_cs.discarded);
	pthread_mutex_unlock(&tp_cs.lock);
	tp_buf_lit(b, ", \"buffers_never_returned\": ");
	tp_json_u64(b, tp_cupti_buffers_out());
	tp_buf_lit(b, ", \"buffer_mb\": ");
	tp_json_u64(b, tp_cs.cap >> 20);
	tp_buf_char(b, '}');
}

/* GPU ops whose times, mapped, put them before the call that launched
 * them: moved to its start, and said. */
static void before_launch(char *s, size_t len, const struct tp_cupti_counts *n)
{
	size_t at = strlen(s);

	if (!n->shifted || at >= len)
		return;
	snprintf(s + at, len - at, "; %llu GPU ops started before their "
		 "launch call (moved to it, by up to %.1f us: GPU times are "
		 "off by as much)", (unsigned long long)n->shifted,
		 (double)n->shifted_max_ns / 1e3);
}

/* Lost: what CUPTI dropped, records without timestamps (work still
 * running when the trace ended), records cut off mid-buffer, and records
 * whose time was outside the trace's clock. */
static void exit_note(char *s, size_t len)
{
	const struct tp_cupti_counts *n = tp_cupti_counts();
	uint64_t never = tp_cupti_buffers_out();
	unsigned long long lost;

	if (__atomic_load_n(&tp_cs.state, __ATOMIC_ACQUIRE) == TP_CUPTI_OFF) {
		snprintf(s, len, "; no GPU activity: CUPTI is off");
		return;
	}
	pthread_mutex_lock(&tp_cs.lock);
	lost = tp_cs.dropped + n->zero_ts + n->unclocked + n->unplaced;
	snprintf(s, len, "; GPU: %llu records, %llu lost (%llu dropped by "
		 "CUPTI, %llu buffers refused, %llu without timestamps, "
		 "%llu outside the trace's clock, %llu buffers cut short, "
		 "%llu never returned)",
		 (unsigned long long)n->records, lost,
		 (unsigned long long)tp_cs.dropped,
		 (unsigned long long)tp_cs.refused,
		 (unsigned long long)n->zero_ts,
		 (unsigned long long)n->unclocked,
		 (unsigned long long)n->truncated, (unsigned long long)never);
	pthread_mutex_unlock(&tp_cs.lock);
	before_launch(s, len, n);
}

static uint64_t dropped_records(void)
{
	return tp_cs.dropped;
}

static const struct tp_gpu_source source = {
	.take = take,
	.convert = convert,
	.teardown = tp_cupti_detach_request,
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
	vsnprintf(tp_cs.reason, sizeof(tp_cs.reason), fmt, ap);
	va_end(ap);
	/* Release: other threads read the state (and then the reason). */
	__atomic_store_n(&tp_cs.state, TP_CUPTI_OFF, __ATOMIC_RELEASE);
	tp_warn("%s; GPU activity is not recorded, CPU-side tracing goes on",
		tp_cs.reason);
}

/* With CUPTI 13.3+, one subscriber among several (multi.c): a client
 * there first is no reason to stay off. Else CUPTI's one subscriber,
 * unless a client acted first (never displaced). */
static int subscribe(void)
{
	char other[128], why[sizeof(tp_cs.reason)];
	CUptiResult r;
	int m = tp_cupti_multi_subscribe(tp_cupti_on_callback, &r, other,
					 sizeof(other));

	if (m > 0 && tp_cs.version < 130400 && tp_cupti_client_clock()) {
		tp_cupti.unsubscribe(tp_cs.sub);
		tp_cs.multi = 0;
		degrade("the program's profiler set CUPTI 13.3's "
			"process-wide timestamp callback before tprof started, "
			"which would set the unit of tprof's records too (CUPTI "
			"13.4 or later keeps one per subscriber)");
		return -1;
	}
	if (m > 0)
		return 0;
	if (m < 0 && r == CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED) {
		degrade("CUPTI %u refused several subscribers (%s holds it "
			"alone: nsys, or a profiler that subscribed first): "
			"profile with one tool at a time, or set TPROF_TRACE "
			"without 'gpu'", tp_cs.version,
			other[0] ? other : "another tool");
		return -1;
	}
	if (m < 0) {
		degrade("CUPTI cannot start (cuptiSubscribe_v2: %s): check "
			"that nvidia-smi lists a GPU and CUDA_VISIBLE_DEVICES "
			"names it", tp_cupti_result(r));
		return -1;
	}
	if (tp_cupti_client_first(why, sizeof(why)) ||
	    tp_cupti_client_unseen(why, sizeof(why))) {
		degrade("%s", why);
		return -1;
	}
	r = tp_cupti.subscribe(&tp_cs.sub, tp_cupti_on_callback, NULL);
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

/* CUPTI versions with known bugs (NVIDIA's release notes). 0 when
 * collection can go on (with a workaround, said in *note), else -1 with
 * the reason. */
static int version_gate(uint32_t v, char *why, size_t len)
{
	if (v == 130000) {
		snprintf(why, len, "CUPTI 13.0 GA (API version 130000) can "
			 "crash in cuptiActivityFlushAll and deadlock when "
			 "kernel tracing is disabled: upgrade to CUDA 13.0 "
			 "Update 1 or later");
		return -1;
	}
	return 0;
}

/* nsys, compute-sanitizer and the like inject themselves through the
 * driver; they expect CUPTI to themselves (before 13.3, one subscriber):
 * tprof leaves it to them. */
static int other_tool(char *why, size_t len)
{
	const char *inj = getenv("CUDA_INJECTION64_PATH");
	Dl_info me;

	if (!inj || !*inj)
		return 0;
	if (dladdr((void *)other_tool, &me) && me.dli_fname &&
	    !strcmp(me.dli_fname, inj))
		return 0;
	snprintf(why, len, "CUDA_INJECTION64_PATH names %s (nsys or another "
		 "CUDA tool), which expects CUPTI to itself: it is left to "
		 "it (NVTX and TPROF_NSYS still work)", inj);
	return 1;
}

static void start_once(void)
{
	struct tp_thread *self = tp_self;
	char why[sizeof(tp_cs.reason)];
	CUptiResult r;

	tp_cs.queue_tail = &tp_cs.queue;
	tp_cs.cap = (size_t)tp_sess.cfg.cupti_buffer_mb << 20;
	tp_writer_set_gpu(&source);
	/* CUPTI's own start-up calls record nothing. */
	tp_self = tp_thread_internal();
	/* Before libcupti is even loaded: its constructors and threads
	 * are the other tool's business. */
	if (other_tool(why, sizeof(why))) {
		degrade("%s", why);
		goto out;
	}
	if (tp_cupti_load(&tp_sess.cfg, tp_cs.lib, sizeof(tp_cs.lib),
			  &tp_cs.version, why, sizeof(why)) < 0) {
		degrade("%s", why);
		goto out;
	}
	if (version_gate(tp_cs.version, why, sizeof(why)) < 0) {
		degrade("%s", why);
		goto out;
	}
	if (subscribe() < 0)
		goto out;
	/* Before any kind is enabled, so every record uses it. On every
	 * version: tprof once skipped it on 12.6 Update 2 - 13.0.x for a
	 * zero-timestamp bug no NVIDIA note or Kineto issue documents
	 * (docs/design/cupti-rules.md); such records are counted, never
	 * placed, should a CUPTI have it. */
	tp_cupti_ns_init();
	tp_cs.raw_ts = tp_cupti.register_timestamp(timestamp_now) ==
		       CUPTI_SUCCESS;
	if (tp_cs.multi && !tp_cs.raw_ts)
		tp_info("CUPTI %u: the timestamp callback is process-wide "
			"before 13.4 and may be the program's profiler's: "
			"CUPTI's clock is mapped", tp_cs.version);
	tp_cupti_convert_init(tp_cs.raw_ts);
	/* The first sample of CUPTI's clock, for the line's span. */
	if (!tp_cs.raw_ts)
		tp_cclock_sample();
	r = tp_cupti.register_callbacks(tp_cupti_buffer_requested,
					tp_cupti_buffer_completed);
	if (r != CUPTI_SUCCESS) {
		tp_cupti.unsubscribe(tp_cs.sub);
		degrade("CUPTI refused tprof's buffers "
			"(cuptiActivityRegisterCallbacks: %s)",
			tp_cupti_result(r));
		goto out;
	}
	tp_cs.callbacks = tp_cupti_enable_callbacks(tp_cs.sub);
	if (tp_cupti_enable_kinds() < 0) {
		snprintf(why, sizeof(why), "%s", tp_cs.reason);
		tp_cupti.unsubscribe(tp_cs.sub);
		degrade("%s", why);
		goto out;
	}
	tp_cupti_exit_setup();
	__atomic_store_n(&tp_cs.state, TP_CUPTI_ON, __ATOMIC_RELEASE);
	tp_info("CUPTI %u from %s: recording GPU activity%s", tp_cs.version,
		tp_cs.lib, tp_cs.multi ? " (one subscriber among several)" :
					 "");
out:
	tp_self = self;
}

/* On the first CUDA call tprof sees, at load for programs with device
 * code of their own, or from the driver's cuInit (CUDA_INJECTION64_PATH,
 * finish.c): before the first kernel in every case. */
void tp_cupti_start(void)
{
	if (!tp_sess.active || !(tp_sess.cfg.sources & TP_SRC_GPU))
		return;
	pthread_once(&C.once, start_once);
}

/* The child cannot use the parent's CUDA state: no GPU records there. */
void tp_cupti_after_fork(void)
{
	if (__atomic_load_n(&tp_cs.state, __ATOMIC_RELAXED) != TP_CUPTI_OFF)
		snprintf(tp_cs.reason, sizeof(tp_cs.reason), "forked child: "
			 "CUDA state is not inherited");
	__atomic_store_n(&tp_cs.state, TP_CUPTI_OFF, __ATOMIC_RELAXED);
	tp_cs.queue = NULL;
	tp_cs.queue_tail = &tp_cs.queue;
	C.fresh = C.aged = NULL;
	C.v = NULL;
	C.n = C.cap = 0;
	pthread_mutex_init(&tp_cs.lock, NULL);
	tp_cupti_buffers_reset();
	tp_track_reset();
	tp_devices_reset();
	tp_cclock_reset();
}
