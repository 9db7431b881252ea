/* output/: the background writer: drains the rings into the trace file,
 * with its metadata and trailer; on every folder above. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "record/api.h"
#include "capture/capture.h"
#include "record/collseq.h"
#include "record/corrmap.h"
#include "record/futex.h"
#include "record/inflight.h"
#include "record/gpu_source.h"
#include "encode/json.h"
#include "util/log.h"
#include "files/naming.h"
#include "files/owned_fd.h"
#include "record/ring_budget.h"
#include "record/ringfile.h"
#include "stacks/perfmap.h"
#include "summary/proc_summary.h"
#include "session/session.h"
#include "stacks/stacks.h"
#include "stacks/symbols.h"
#include "record/thread.h"
#include "session/timeline.h"
#include "flight.h"
#include "hang.h"
#include "trailer.h"
#include "writer.h"

#define FLUSH_BYTES (256 * 1024)
#define CYCLE_MS 50
/* At this interval what was drained reaches the file as a sync point of
 * the gzip stream: a process killed outright (SIGKILL, the OOM killer)
 * loses at most this much of what already left the rings, and `tprof
 * recover` reads the .tmp up to its last sync. */
#define SYNC_NS 1000000000ull
/* The tick rate is measured over at least this long before the first
 * conversion, and then fixed for the life of the process. */
#define CALIBRATE_NS 100000000ull
#define CALIBRATE_MIN_NS 10000000ull
/* After the last recording window, GPU work launched in it may still be
 * running: CUPTI is torn down only after twice the longest kept step,
 * within these bounds. */
#define TEARDOWN_MIN_NS 500000000ull
#define TEARDOWN_MAX_NS 10000000000ull
/* The writer releases a ring's slots to its producer in batches, so the
 * producer's cache line holding the tail does not bounce per event. */
#define POP_BATCH 256

static struct {
	pthread_t thread;
	int started;
	int claimed;		/* tp_writer_start ran */
	int torn_down;		/* GPU collection ended after the last window */
	int gpu_now;		/* 1: the GPU's exit handler waits for its
				 * records; 2: a module unload does */
	/* Requests for gpu_now, counted: a request is served by a cycle
	 * that began after it (gpu_done reaches its number), never by one
	 * that took CUPTI's records before the requester's flush. */
	uint64_t gpu_req;
	uint64_t gpu_done;
	int stop;
	uint32_t done;		/* futex: 1 once the file is complete */
	uint32_t wake_seq;	/* futex: bumped by every wake-up */
	uint32_t sleeping;	/* the writer waits on wake_seq */
	uint64_t progress;	/* bumped as the writer writes: a stop waits
				 * while it moves */
	struct tp_owned_fd own;	/* the trace file's descriptor */
	int said_abandoned;
	int said_no_ring;	/* the exit line counted the calls of
				 * threads without a ring */
	int failed;
	int opened;
	int dumping;		/* flight: the window goes to a file now */
	int pf_live;		/* flight_pf: the window's encoder is made */
	size_t pf_restart_len;	/* flight_pf: W.buf holds only a restart */
	unsigned dumps;		/* flight: dump files made */
	uint32_t dump_req;	/* a dump was asked for (signal, tprof dump) */
	uint64_t dump_at;	/* when */
	uint64_t flushed_events;	/* W.events at the last flush */
	struct tp_output out;
	struct tp_gz gz;
	struct tp_buf buf;
	uint64_t events;
	uint64_t synced_in;	/* gz.in_bytes at the last sync point */
	uint64_t synced_at;	/* CLOCK_MONOTONIC ns of that sync */
	/* ended threads whose rings are in the rings file: freed after the
	 * next sync point covers what was read from them */
	struct tp_thread *ended;
	struct tp_thread_stats stats;
	const struct tp_gpu_source *gpu;
	const struct tp_writer_ext *ext[TP_WRITER_MAX_EXT];
	unsigned n_ext;
	/* a record and its extension, made contiguous where they wrap */
	struct tp_event scratch[1 + TP_EV_EXT_MAX];
	struct tp_targs args;	/* the event being written */
} W = { .own = { .fd = -1 } };

static void mark_failed(const char *what, int err)
{
	if (W.failed)
		return;
	W.failed = 1;
	__atomic_store_n(&tp_recording, 0, __ATOMIC_RELAXED);
	tp_error("%s %s: %s; tracing is off for this process (%s)", what,
		 W.out.tmp, strerror(err), tp_fix_for(err));
	tp_gz_abandon(&W.gz);
	tp_fd_close(&W.own);
	unlink(W.out.tmp);
	tp_rf_remove();
}

/* The program closed the trace's descriptor or dup2'd over it: open the
 * same file again by name (the very file: same inode) and go on where the
 * last write ended. Its descriptor number is never written to. */
static int reopen_trace(void)
{
	int fd = open(W.out.tmp, O_WRONLY | O_CLOEXEC | O_NOFOLLOW);

	if (fd < 0)
		return -1;
	fd = tp_fd_high(fd);
	if (!tp_fd_same_file(&W.own, fd) ||
	    lseek(fd, (off_t)W.gz.out_bytes, SEEK_SET) < 0) {
		close(fd);
		return -1;
	}
	W.own.fd = fd;
	W.gz.fd = fd;
	return 0;
}

static int trace_fd_ok(void)
{
	if (tp_fd_is_ours(&W.own) || reopen_trace() == 0)
		return 1;
	W.own.fd = -1;
	mark_failed("cannot write", EBADF);
	return 0;
}

/* The flight recorder with TPROF_FORMAT=perfetto: one encoder for the
 * whole window (its track uuids stay the same across dumps), writing
 * absolute timestamps (a dump may leave packets out) and clearing its
 * incremental state at the start of every chunk, so a chunk needs
 * nothing older than itself but the track descriptors, which each dump
 * declares again first. */
static int flight_pf(void)
{
	return tp_flight_on() && tp_sess.cfg.format == TP_FORMAT_PERFETTO;
}

/* A chunk starts here: the encoder's state cleared into W.buf. */
static void pf_chunk_start(void)
{
	if (!flight_pf() || !W.pf_live)
		return;
	tp_enc_perfetto_restart(tp_tev_sink, &W.buf);
	W.pf_restart_len = W.buf.len;
}

static void flush_buf(int force)
{
	if (W.buf.len < FLUSH_BYTES && !force)
		return;
	if (tp_flight_on() && !W.dumping) {
		/* Flight recorder: the text goes to the window, not a file. */
		if (flight_pf() && W.buf.len <= W.pf_restart_len &&
		    !W.buf.oom)
			return;		/* nothing since the restart */
		if (!W.buf.oom)
			tp_flight_put(W.buf.p, W.buf.len,
				      W.events - W.flushed_events, tp_ticks());
		W.flushed_events = W.events;
		__atomic_add_fetch(&W.progress, 1, __ATOMIC_RELAXED);
		W.buf.len = 0;
		W.buf.oom = 0;
		pf_chunk_start();
		return;
	}
	if (!W.failed && W.buf.oom)
		mark_failed("out of memory formatting", ENOMEM);
	if (!W.failed && trace_fd_ok() &&
	    tp_gz_write(&W.gz, W.buf.p, W.buf.len) < 0)
		mark_failed("cannot write", W.gz.err);
	__atomic_add_fetch(&W.progress, 1, __ATOMIC_RELAXED);
	W.buf.len = 0;
	W.buf.oom = 0;
}

static void flush_some(void)
{
	flush_buf(0);
}

void tp_writer_set_gpu(const struct tp_gpu_source *g)
{
	W.gpu = g;
}

void tp_writer_add_ext(const struct tp_writer_ext *x)
{
	unsigned i;

	for (i = 0; i < W.n_ext; i++)
		if (W.ext[i] == x)
			return;
	if (W.n_ext < TP_WRITER_MAX_EXT)
		W.ext[W.n_ext++] = x;
}

/* The end of the trace, for what is still open when it ends. */
static int64_t end_ns(void)
{
	return tp_trace_ns(tp_ticks());
}

/* Events an extension writes for a thread that is going away (exited, or
 * the trace ends). */
static void thread_end(struct tp_thread *t)
{
	unsigned i;

	for (i = 0; i < W.n_ext; i++)
		if (W.ext[i]->thread_end && !W.failed)
			W.events += W.ext[i]->thread_end(&W.buf, t, end_ns());
}

static void calibrate(int final)
{
	uint64_t need = final ? CALIBRATE_MIN_NS : CALIBRATE_NS;
	struct tp_clock_point now;
	uint64_t elapsed;

	if (tp_tl.ready)
		return;
	now = tp_clock_sample();
	elapsed = now.raw_ns - tp_sess.anchor.raw_ns;
	if (elapsed < need && !final)
		return;
	if (elapsed < need) {
		struct timespec ts = { 0, (long)(need - elapsed) };

		nanosleep(&ts, NULL);
		now = tp_clock_sample();
	}
	tp_clock_map_from(&tp_tl.map, tp_sess.anchor, now);
	tp_rf_set_clock(&tp_tl.map, tp_sess.base_ns);
	/* Release: the exit path reads the map from another thread once it
	 * sees ready (cupti/finish.c). */
	__atomic_store_n(&tp_tl.ready, 1, __ATOMIC_RELEASE);
}

static void put_stack(struct tp_targs *w, const struct tp_event *e,
		      uint64_t dur)
{
	struct tp_stack_stats *st = tp_stack_stats(e->stack);
	const char *json;
	size_t len;

	json = tp_stack_json(e->stack, &len);
	if (!json || !st)
		return;
	tp_targs_json(w, "stack", json, len);
	st->calls++;
	st->total_ns += dur;
	if (dur >= st->max_ns) {
		st->max_ns = dur;
		st->max_api = e->api;
	}
}

/* The lengths of an API's name (returned) and category, measured once. */
static size_t api_len(uint16_t id, const struct tp_api *api, size_t *catlen)
{
	static uint16_t name_len[TP_API_MAX_TABLES << TP_API_TABLE_SHIFT];
	static uint16_t cat_len[TP_API_MAX_TABLES << TP_API_TABLE_SHIFT];

	if (id >= TP_API_MAX_TABLES << TP_API_TABLE_SHIFT) {
		*catlen = strlen(api->cat);
		return strlen(api->name);
	}
	if (!name_len[id]) {
		name_len[id] = (uint16_t)strlen(api->name);
		cat_len[id] = (uint16_t)strlen(api->cat);
	}
	*catlen = cat_len[id];
	return name_len[id];
}

/* A hooked call's record as its X event: the hook's table says what its
 * args are (keys and typed values); the encoder writes them. */
static void put_event(struct tp_buf *b, struct tp_thread *t,
		      const struct tp_event *e)
{
	const struct tp_api *api = tp_api_get(e->api);
	uint64_t s = tp_clock_to_unix(&tp_tl.map, e->start);
	uint64_t f = tp_clock_to_unix(&tp_tl.map, e->end);
	int64_t ts = (int64_t)(s - (uint64_t)tp_sess.base_ns);
	int64_t dur = f > s ? (int64_t)(f - s) : 0;
	struct tp_targs *w = &W.args;
	/* What every record's event shares is set once (a memset of the
	 * whole event per record was a third of drain's time); only the
	 * writer thread writes events, as with W.args. */
	static struct tp_tev ev = {
		.track.kind = TP_TEV_THREAD,
		.phase = TP_TEV_COMPLETE,
		.static_names = 1,	/* the API tables' */
		.static_keys = 1,	/* the formatters' literals */
	};

	if (api && api->emit) {
		W.events += api->emit(b, t, e);
		return;
	}
	if (!tp_capture_kept(e->start)) {
		/* Its GPU work goes with it. */
		if (e->corr)
			tp_corr_note(e->corr, (uint32_t)t->tid, ts, 0);
		return;
	}
	if (!api)
		return;
	ev.track.pid = tp_sess.pid;
	ev.track.tid = t->tid;
	ev.name = api->name;
	ev.namelen = api_len(e->api, api, &ev.catlen);
	ev.cat = api->cat;
	ev.ts_ns = ts;
	ev.dur_ns = dur;
	tp_targs_reset(w);
	/* JSON: each arg is appended as the formatter writes it. */
	if (!tp_tev_sink)
		tp_tev_json_open(b, &ev, w);
	tp_targs_int(w, "ret", e->ret);
	if (e->corr) {
		tp_targs_uint(w, "correlation", e->corr);
		tp_corr_note(e->corr, (uint32_t)t->tid, ts, 1);
	}
	/* Perfetto: the arrow to its GPU work starts on the slice itself
	 * (JSON writes its "s" when the GPU op comes: cupti/convert.c). */
	ev.flow_out = tp_tev_sink ? e->corr : 0;
	/* What the API's formatter adds repeats from call to call. */
	ev.stable_from = w->n;
	if (api->args)
		api->args(w, e);
	ev.stable_to = w->n;
	if (e->stack)
		put_stack(w, e, (uint64_t)dur);
	ev.args = w->a;
	ev.nargs = w->n;
	if (!tp_tev_sink)
		tp_tev_json_close(b, &ev, w);
	else
		tp_tev_put(b, &ev);
	if (!b->oom)
		tp_psum_api_span(api->cat, api->name, tp_sess.pid, t->tid, ts,
				 dur, e->corr, w->a, w->n);
	W.events++;
}

/* What the thread's ring dropped since this file began. */
static uint64_t thread_dropped(struct tp_thread *t)
{
	return tp_ring_dropped(&t->ring) - t->dropped_base;
}

/* The record at pos and its n - 1 extension slots, contiguous. */
static const struct tp_event *record_at(struct tp_ring *r, uint64_t pos,
					unsigned n)
{
	unsigned i;

	if (n == 1 || (pos & r->mask) + n <= r->mask + 1)
		return tp_ring_at(r, pos);
	for (i = 0; i < n; i++)
		W.scratch[i] = *tp_ring_at(r, pos + i);
	return W.scratch;
}

static void publish_list(struct tp_thread *t, uint64_t g)
{
	for (; t; t = t->next)
		if (tp_rf_owns(t))
			tp_rf_sync_ring(t, g);
}

static void release_list(struct tp_thread *t)
{
	for (; t; t = t->next)
		if (tp_rf_owns(t))
			tp_ring_publish(&t->ring);
}

/* A sync point: what was formatted goes through gzip to a byte boundary
 * of the .tmp, then the rings file records where it ends and where each
 * ring was read up to, and only then do the slots read go back to their
 * producers (a ring in the rings file holds them: see ringfile.h). So
 * after a kill every record is either before the .tmp's synced length or
 * still in its ring. Without new text, no gzip flush is needed. */
static void sync_now(void)
{
	uint64_t g;

	if (!W.opened || W.failed || (tp_flight_on() && !W.dumping))
		return;
	if (W.gz.in_bytes + W.buf.len != W.synced_in) {
		flush_buf(1);
		if (W.failed || !trace_fd_ok())
			return;
		if (tp_gz_sync(&W.gz) < 0) {
			mark_failed("cannot write", W.gz.err);
			return;
		}
		W.synced_in = W.gz.in_bytes;
	}
	if (!tp_rf_active())
		return;
	g = tp_rf_sync_begin();
	publish_list(tp_thread_list(), g);
	publish_list(W.ended, g);
	tp_rf_sync_end(g, W.synced_in);
	release_list(tp_thread_list());
	release_list(W.ended);
}

/* A ring of the rings file read a quarter of its size past the last
 * sync: the producer gets its slots back only at a sync. */
static void sync_if_held(struct tp_ring *r)
{
	if (r->hold && r->rd - __atomic_load_n(&r->tail, __ATOMIC_RELAXED) >=
	    (r->mask + 1) / 4)
		sync_now();
}

/* Ended threads of the rings file, once a sync covers them: each one's
 * drop count is noted in the file (the trailer that would hold it may
 * never be written), and its region goes back. */
static void free_ended(void)
{
	struct tp_thread *t, *next;

	if (!W.ended)
		return;
	sync_now();
	for (t = W.ended; t; t = next) {
		uint64_t tid = (uint64_t)t->tid, dropped = thread_dropped(t);
		char name[sizeof(t->name)];

		next = t->next;
		memcpy(name, t->name, sizeof(name));
		name[sizeof(name) - 1] = '\0';
		/* Freed first: a kill between the two loses the count
		 * rather than counting it twice (region and note). */
		tp_thread_free(t);
		tp_rf_note(TP_RF_NOTE_ENDED, tid, dropped, name);
	}
	W.ended = NULL;
}

/* Drains what was published when it started, no more: a thread that
 * records faster than the writer writes must not keep it from the other
 * rings or from a stop request. Slots go back to the producer in batches,
 * so the cache line holding the tail does not bounce per event. An
 * exited thread's ring is freed once it is known empty. */
static void drain_thread(struct tp_thread *t)
{
	int exited = __atomic_load_n(&t->exited, __ATOMIC_ACQUIRE);
	uint64_t head = tp_ring_head(&t->ring), pos = t->ring.rd;
	unsigned batch = 0;

	tp_capture_sync();
	while (pos != head) {
		unsigned n = 1 + (tp_ring_at(&t->ring, pos)->flags &
				  TP_EV_EXT_MASK);

		if (n > head - pos)	/* cannot be: never wait */
			n = (unsigned)(head - pos);
		if (!W.failed)
			put_event(&W.buf, t, record_at(&t->ring, pos, n));
		t->written++;
		pos += n;
		if (++batch == POP_BATCH) {
			tp_ring_release(&t->ring, pos);
			sync_if_held(&t->ring);
			batch = 0;
		}
		flush_buf(0);
	}
	tp_ring_release(&t->ring, pos);
	sync_if_held(&t->ring);
	__atomic_add_fetch(&W.progress, 1, __ATOMIC_RELAXED);
	if (!exited)
		return;
	thread_end(t);
	tp_thread_stats_add(&W.stats, t->tid, t->name, t->written,
			    thread_dropped(t));
	tp_psum_thread_drops(t, &tp_tl.map);
	tp_thread_unlink(t);
	if (tp_rf_owns(t) && W.opened && !W.failed) {
		t->next = W.ended;
		W.ended = t;
		return;
	}
	tp_thread_free(t);
}

/* The last window has ended and its GPU work has had time to finish. */
static int teardown_due(void)
{
	uint64_t at, longest, grace, now;

	if (W.torn_down || !W.gpu || !tp_capture_finished(&at, &longest))
		return 0;
	now = tp_ticks();
	grace = 2 * (uint64_t)(tp_trace_ns(at + longest) -
			       tp_trace_ns(at));
	if (grace < TEARDOWN_MIN_NS)
		grace = TEARDOWN_MIN_NS;
	if (grace > TEARDOWN_MAX_NS)
		grace = TEARDOWN_MAX_NS;
	return tp_trace_ns(now) - tp_trace_ns(at) >= (int64_t)grace;
}

/* Ring pages are made resident ahead only for live threads that recorded
 * since the last cycle, and only as far ahead as four cycles at the rate
 * they recorded in the last one: a thread that ended or records a few
 * calls keeps the pages it was given at its first event, no more, so
 * thread churn costs no memory per ended thread. */
static void prefault(struct tp_thread *t)
{
	uint64_t head = tp_ring_head(&t->ring);
	size_t ahead;

	if (__atomic_load_n(&t->exited, __ATOMIC_ACQUIRE) ||
	    head == t->prefault_head)
		return;
	ahead = (size_t)(head - t->prefault_head) * 4 * sizeof(struct tp_event);
	t->prefault_head = head;
	if (ahead > TP_RING_PREFAULT_AHEAD)
		ahead = TP_RING_PREFAULT_AHEAD;
	tp_ring_prefault(&t->ring, ahead);
}

/* GPU records are taken before the CPU rings are drained and converted
 * a cycle later, so the launch each one points to is already written.
 * After the last window GPU collection is asked to end for good (CUPTI
 * does it at the next API exit, cupti/finish.c); what it still delivers
 * is converted as usual. */
static int pf_live_start(void);

static void drain(int final)
{
	struct tp_thread *t, *next;
	int gpu_final = final, teardown = 0;

	if (flight_pf() && !W.pf_live && !W.failed && pf_live_start() < 0)
		return;

	for (t = tp_thread_list(); t; t = t->next)
		prefault(t);
	int now = __atomic_load_n(&W.gpu_req, __ATOMIC_ACQUIRE) != W.gpu_done ?
		  __atomic_load_n(&W.gpu_now, __ATOMIC_ACQUIRE) : 0;

	if (now == 1)
		gpu_final = 1;
	calibrate(gpu_final || now);
	if (!tp_tl.ready)
		return;
	if (!gpu_final && teardown_due())
		teardown = 1;
	if (W.gpu)
		W.gpu->take(gpu_final);
	/* Ended threads first, and their regions of the rings file given
	 * back at once: a cycle lasts as long as the live rings take to
	 * drain (seconds when the producers outrun the writer), and an
	 * ended thread's memory must not wait behind them. */
	for (t = tp_thread_list(); t; t = next) {
		next = t->next;
		if (__atomic_load_n(&t->exited, __ATOMIC_ACQUIRE))
			drain_thread(t);
	}
	free_ended();
	for (t = tp_thread_list(); t; t = next) {
		next = t->next;
		drain_thread(t);
	}
	if (!W.failed)
		W.events += tp_capture_put_steps(&W.buf);
	if (W.gpu && !W.failed)
		W.events += W.gpu->convert(&W.buf, &tp_tl.map, flush_some,
					   gpu_final || now == 2);
	if (teardown) {
		W.gpu->teardown();
		W.torn_down = 1;
	}
	free_ended();
	/* Flight recorder: a chunk per cycle at least, so the window is
	 * trimmed to the cycle. */
	flush_buf(tp_flight_on() && !W.dumping);
}

void tp_writer_drain(void)
{
	drain(0);
}

/* What the Perfetto encoder wrote into its own buffer (its header and
 * trailer) goes on into the trace's. */
static void take_enc_out(struct tp_buf *b)
{
	struct tp_buf *o = &tp_tev_sink->out;

	tp_buf_put(b, o->p, o->len);
	if (o->oom)
		b->oom = 1;
	o->len = 0;
	o->oom = 0;
}

/* CLOCK_REALTIME and CLOCK_BOOTTIME at one instant, for the Perfetto
 * clock snapshot: REALTIME read on both sides of BOOTTIME, of three
 * tries the one with the shortest gap; left unknown when BOOTTIME is not
 * there. */
static void clock_pair(struct tp_enc_meta *m)
{
	struct timespec r0, b, r1;
	int64_t best = INT64_MAX, gap;
	int i;

	for (i = 0; i < 3; i++) {
		if (clock_gettime(CLOCK_REALTIME, &r0) ||
		    clock_gettime(CLOCK_BOOTTIME, &b) ||
		    clock_gettime(CLOCK_REALTIME, &r1))
			return;
		gap = (r1.tv_sec - r0.tv_sec) * 1000000000ll +
		      (r1.tv_nsec - r0.tv_nsec);
		if (gap >= best)
			continue;
		best = gap;
		m->pair_realtime_ns = r0.tv_sec * 1000000000ll + r0.tv_nsec +
				      gap / 2;
		m->pair_boottime_ns = b.tv_sec * 1000000000ll + b.tv_nsec;
	}
	m->has_boottime = 1;
}

/* TPROF_FORMAT=perfetto: a fresh encoder per file (a fork child's or an
 * exec'd image's file declares its own tracks and strings). */
static int pf_begin(struct tp_buf *b, const char *name)
{
	struct tp_enc_meta m = { .trace_name = name,
				 .base_unix_ns = tp_sess.base_ns };

	clock_pair(&m);
	tp_enc_free(tp_tev_sink);
	tp_tev_sink = tp_enc_perfetto_new();
	if (!tp_tev_sink) {
		errno = ENOMEM;
		return -1;
	}
	tp_enc_begin(tp_tev_sink, &m);
	take_enc_out(b);
	tp_trailer_process_name(b);
	return 0;
}

/* flight_pf: the window's encoder, made before its first event. */
static int pf_live_start(void)
{
	struct tp_enc_meta m = { .trace_name = tp_sess.cfg.name,
				 .base_unix_ns = tp_sess.base_ns,
				 .absolute_ts = 1 };

	clock_pair(&m);
	tp_enc_free(tp_tev_sink);
	tp_tev_sink = tp_enc_perfetto_new();
	if (!tp_tev_sink) {
		W.failed = 1;
		__atomic_store_n(&tp_recording, 0, __ATOMIC_RELAXED);
		tp_error("no memory for the flight recorder's Perfetto "
			 "encoder; tracing is off for this process");
		return -1;
	}
	tp_enc_begin(tp_tev_sink, &m);
	take_enc_out(&W.buf);
	W.pf_restart_len = W.buf.len;
	W.pf_live = 1;
	return 0;
}

static int put_header(struct tp_buf *b)
{
	char name[512];

	snprintf(name, sizeof(name), "%s-rank%d", tp_sess.cfg.name,
		 tp_sess.cfg.rank);
	if (flight_pf()) {
		/* A dump: the chunks that follow clear the incremental
		 * state themselves; the tracks they use are declared. */
		tp_enc_perfetto_tracks(tp_tev_sink, b);
		tp_trailer_process_name(b);
		return 0;
	}
	if (tp_sess.cfg.format == TP_FORMAT_PERFETTO)
		return pf_begin(b, name);
	tp_buf_lit(b, "{\"schemaVersion\": 1,\n\"traceName\": ");
	tp_json_str(b, name);
	tp_buf_lit(b, ",\n\"displayTimeUnit\": \"ms\",\n"
		   "\"baseTimeNanoseconds\": ");
	tp_json_i64(b, tp_sess.base_ns);
	tp_buf_lit(b, ",\n\"traceEvents\": [\n");
	tp_trailer_process_name(b);
	return 0;
}

/* The names and closing keys: JSON's last members, or Perfetto's
 * metadata event. */
static void put_trailer(struct tp_buf *b, const struct tp_trailer_info *info)
{
	struct tp_buf j = { 0 };

	tp_trailer_put_meta(b, info);
	if (tp_sess.cfg.format != TP_FORMAT_PERFETTO) {
		tp_buf_lit(b, "\n],\n");
		tp_trailer_put_json(b, info);
		tp_buf_lit(b, "}\n");
		return;
	}
	tp_trailer_put_json(&j, info);
	if (j.oom)
		b->oom = 1;
	else
		tp_enc_trailer(tp_tev_sink, j.p, j.len);
	tp_enc_end(tp_tev_sink);
	take_enc_out(b);
	tp_buf_free(&j);
}

/* The trace file (or a flight dump) named name, its header written;
 * 0, or -1 with errno. A fork child never takes the rank's own name. */
static int open_named(const char *name)
{
	tp_output_suffix = tp_sess.cfg.format == TP_FORMAT_PERFETTO ?
		".pftrace.gz" : ".trace.json.gz";
	if (tp_output_open(&W.out, &W.gz, tp_sess.cfg.dir, name,
			   tp_sess.cfg.rank, tp_sess.cfg.world_size,
			   tp_sess.run_id, tp_sess.pid, !tp_sess.forked,
			   tp_sess.cfg.gzip_level) < 0)
		return -1;
	tp_fd_own(&W.own, W.gz.fd);
	W.opened = 1;
	if (put_header(&W.buf) < 0) {
		mark_failed("cannot start", errno);
		return 0;	/* said: failed */
	}
	flush_buf(1);
	return 0;
}

int tp_writer_open(void)
{
	if (open_named(tp_sess.cfg.name) == 0) {
		/* The rings file names its .tmp, and the names registered
		 * before it existed; a first sync covers the header. */
		tp_rf_set_trace(W.out.tmp);
		tp_sym_note_all_to_ringfile();
		sync_now();
	}
	if (!W.opened) {
		W.failed = 1;
		tp_rf_remove();
		__atomic_store_n(&tp_recording, 0, __ATOMIC_RELAXED);
		tp_error("cannot create a trace file in TPROF_OUTPUT_DIR='%s': "
			 "%s; tracing is off for this process (%s)",
			 tp_sess.cfg.dir, strerror(errno), tp_fix_for(errno));
		return -1;
	}
	return W.failed ? -1 : 0;
}

/* Calls counted before this file began (a failed exec). */
static uint64_t no_ring_base;

/* Calls of threads that got no ring count as dropped. */
static void add_no_ring_stats(void)
{
	unsigned threads;

	W.stats.no_ring = tp_thread_unrecorded(&threads) - no_ring_base;
	W.stats.dropped += W.stats.no_ring;
}

/* Flight recorder: a dump file of its own (the second and later ones
 * named <name>-dump<N>), the window's chunks written into it. */
static void write_chunk(const char *p, size_t len)
{
	if (!W.failed && trace_fd_ok() && tp_gz_write(&W.gz, p, len) < 0)
		mark_failed("cannot write", W.gz.err);
}

static int flight_open(void)
{
	char name[300];

	W.dumping = 1;
	W.dumps++;
	if (W.dumps == 1) {
		if (tp_writer_open() == 0)
			return 0;
		W.dumping = 0;
		return -1;
	}
	snprintf(name, sizeof(name), "%s-dump%u", tp_sess.cfg.name, W.dumps);
	if (open_named(name) < 0) {
		tp_error("cannot create a flight recorder dump in "
			 "TPROF_OUTPUT_DIR='%s': %s (%s)", tp_sess.cfg.dir,
			 strerror(errno), tp_fix_for(errno));
		W.dumping = 0;
		return -1;
	}
	return W.failed ? -1 : 0;
}

/* The final stop: the window goes into the trace, which tp_writer_finish
 * then completes as usual; without a trigger (a normal exit), nothing is
 * written. 1: go on, 0: nothing to write, -1: failed. */
static int flight_final(void)
{
	uint64_t at;
	const char *why = tp_flight_exit_reason(&at);

	calibrate(1);
	drain(1);
	if (!why) {
		tp_info("flight recorder: normal exit, nothing written "
			"(TPROF_FLIGHT_DUMP_AT_EXIT=1 writes the last "
			"seconds at exit)");
		return 0;
	}
	tp_flight_dumping(why, at);
	if (flight_open() < 0)
		return -1;
	W.events = tp_flight_each(write_chunk);
	pf_chunk_start();	/* what follows needs no chunk before it */
	return 1;
}

/* Mid-run (a dump signal, `tprof dump`, a hang): the window into a file
 * of its own, completed and renamed, while recording goes on. Thread
 * counts are those since the start; the events are the window's. */
static const char *flight_dump(const char *why, uint64_t at)
{
	static char path[sizeof(W.out.final)];
	struct tp_thread_stats st = { 0 };
	struct tp_trailer_info info;
	uint64_t saved = W.events;
	struct tp_thread *t;
	unsigned i;

	flush_buf(1);
	tp_flight_dumping(why, at);
	if (flight_open() < 0)
		return NULL;
	W.events = tp_flight_each(write_chunk);
	pf_chunk_start();
	W.events += tp_hang_put_open_calls(&W.buf);
	for (i = 0; i < W.stats.n; i++)
		tp_thread_stats_add(&st, W.stats.v[i].tid, W.stats.v[i].name,
				    W.stats.v[i].events, W.stats.v[i].dropped);
	for (t = tp_thread_list(); t; t = t->next)
		tp_thread_stats_add(&st, t->tid, t->name, t->written,
				    tp_ring_dropped(&t->ring));
	memset(&info, 0, sizeof(info));
	info.events = W.events;
	info.end = tp_clock_sample();
	info.map = &tp_tl.map;
	info.stats = &st;
	info.gpu = W.gpu;
	info.ext = W.ext;
	info.n_ext = W.n_ext;
	info.compressor = tp_gz_codec_name(&W.gz);
	put_trailer(&W.buf, &info);
	flush_buf(1);
	tp_thread_stats_free(&st);
	path[0] = '\0';
	if (!W.failed && trace_fd_ok() && tp_gz_finish(&W.gz) == 0 &&
	    tp_fd_close(&W.own) == 0 && rename(W.out.tmp, W.out.final) == 0)
		snprintf(path, sizeof(path), "%s", W.out.final);
	else if (!W.failed)
		mark_failed("cannot complete", errno);
	if (path[0])
		tp_log(TP_LOG_WARN, "", "flight recorder (%s): wrote %s (%llu "
		       "events of the last %.1f s, %.1f KiB)", why, path,
		       (unsigned long long)W.events,
		       (double)tp_sess.cfg.fl.flight_ns / 1e9,
		       (double)W.gz.out_bytes / 1024.0);
	W.opened = 0;
	W.dumping = 0;
	W.events = saved;
	W.flushed_events = saved;
	tp_flight_dumping(NULL, 0);
	W.buf.len = 0;
	pf_chunk_start();	/* the next chunk */
	return path[0] ? path : NULL;
}

/* Each cycle: a call stuck past TPROF_HANG, or a dump asked for, dumps
 * the window (flight recorder) and the hang state (TPROF_HANG). */
static void watch(void)
{
	int hang = tp_hang_check();
	int req = __atomic_exchange_n(&W.dump_req, 0, __ATOMIC_ACQ_REL);
	const char *trace = NULL;

	if ((!hang && !req) || W.failed || !tp_tl.ready)
		return;
	if (tp_flight_on() && tp_thread_list())
		trace = flight_dump(hang ? "hang" : "signal", hang ? tp_ticks() :
				    __atomic_load_n(&W.dump_at,
						    __ATOMIC_RELAXED));
	if (tp_hang_on)
		tp_hang_write(hang ? "hang" : "signal", trace);
}

/* Async-signal-safe: the next cycle dumps. */
void tp_writer_request_dump(void)
{
	__atomic_store_n(&W.dump_at, tp_ticks(), __ATOMIC_RELAXED);
	__atomic_store_n(&W.dump_req, 1, __ATOMIC_RELEASE);
	tp_writer_wake();
}

static void add_live_thread_stats(void)
{
	struct tp_thread *t;

	for (t = tp_thread_list(); t; t = t->next) {
		thread_end(t);
		tp_thread_read_name(t);
		tp_thread_stats_add(&W.stats, t->tid, t->name, t->written,
				    thread_dropped(t));
		tp_psum_thread_drops(t, &tp_tl.map);
	}
}

/* Why calls were dropped without a ring, for the exit line. */
static void no_ring_note(char *s, size_t n)
{
	unsigned threads;

	s[0] = '\0';
	if (!W.stats.no_ring)
		return;
	tp_thread_unrecorded(&threads);
	snprintf(s, n, " (%llu of them from %u thread%s that got no ring: "
		 "the address-space limit, ulimit -v, left no room; raise it "
		 "or lower TPROF_BUFFER_MB)",
		 (unsigned long long)W.stats.no_ring, threads,
		 threads == 1 ? "" : "s");
}

void tp_writer_note_unrecorded(void)
{
	unsigned threads;
	uint64_t n = tp_thread_unrecorded(&threads) - no_ring_base;

	if (!n || W.said_no_ring)
		return;
	tp_warn("%llu calls from %u thread%s were not recorded: no ring could "
		"be mapped for them (the address-space limit, ulimit -v, left "
		"no room); raise it or lower TPROF_BUFFER_MB",
		(unsigned long long)n, threads, threads == 1 ? "" : "s");
}

int tp_writer_finish(void)
{
	struct tp_trailer_info info;
	char note[256], why[256];

	if (tp_flight_on() && !W.opened && !W.failed &&
	    flight_final() <= 0)
		return -1;
	if (!W.opened || W.failed)
		return -1;
	calibrate(1);
	drain(1);
	W.events += tp_hang_put_open_calls(&W.buf);
	add_live_thread_stats();
	add_no_ring_stats();
	if (tp_sess.cfg.bt_on)
		tp_perfmap_warn_missing();
	info.events = W.events;
	info.end = tp_clock_sample();
	info.map = &tp_tl.map;
	info.stats = &W.stats;
	info.gpu = W.gpu;
	info.ext = W.ext;
	info.n_ext = W.n_ext;
	info.compressor = tp_gz_codec_name(&W.gz);
	put_trailer(&W.buf, &info);
	flush_buf(1);
	if (W.failed)
		return -1;
	if (!trace_fd_ok())
		return -1;
	if (tp_gz_finish(&W.gz) < 0) {
		mark_failed("cannot complete", W.gz.err);
		return -1;
	}
	if (tp_fd_close(&W.own) < 0 || rename(W.out.tmp, W.out.final) < 0) {
		mark_failed("cannot complete", errno);
		return -1;
	}
	W.opened = 0;
	tp_rf_remove();	/* the trace is whole: nothing to recover */
	note[0] = '\0';
	if (W.gpu)
		W.gpu->exit_note(note, sizeof(note));
	no_ring_note(why, sizeof(why));
	W.said_no_ring = 1;
	tp_log(TP_LOG_WARN, "", "wrote %s (%llu events, %llu dropped%s, "
	       "%.1f KiB%s)", W.out.final, (unsigned long long)W.events,
	       (unsigned long long)W.stats.dropped, why,
	       (double)W.gz.out_bytes / 1024.0, note);
	tp_psum_finish(W.out.final, W.events, W.stats.no_ring +
		       (W.gpu && W.gpu->dropped ? W.gpu->dropped() : 0));
	return 0;
}

struct tp_writer_stats tp_writer_stats(void)
{
	struct tp_writer_stats s = {
		.events = W.events,
		.dropped = W.stats.dropped,
		.raw_bytes = W.gz.in_bytes,
		.file_bytes = W.gz.out_bytes,
		.compressor = tp_gz_codec_name(&W.gz),
	};

	return s;
}

/* The file is made once a thread has something to record: a writer
 * started at load for the capture's clock leaves no file behind in
 * processes that never trace (a shell, a compiler). */
static int opened(void)
{
	if (tp_flight_on() && !W.dumping)	/* a file only at a dump */
		return !W.failed && tp_thread_list();
	if (!W.opened && !W.failed && tp_thread_list())
		tp_writer_open();
	return W.opened && !W.failed;
}

/* Sleeps until a wake-up or the next cycle. sleeping is set before
 * wake_seq is read and a waker bumps wake_seq before reading sleeping
 * (both sequentially consistent), so no wake-up is lost and a busy writer
 * costs its wakers no system call. */
static void wait_cycle(uint32_t *seen)
{
	uint32_t seq;

	__atomic_store_n(&W.sleeping, 1, __ATOMIC_SEQ_CST);
	seq = __atomic_load_n(&W.wake_seq, __ATOMIC_SEQ_CST);
	if (seq == *seen && !__atomic_load_n(&W.stop, __ATOMIC_ACQUIRE))
		tp_futex_wait(&W.wake_seq, seq, CYCLE_MS);
	__atomic_store_n(&W.sleeping, 0, __ATOMIC_RELAXED);
	*seen = __atomic_load_n(&W.wake_seq, __ATOMIC_SEQ_CST);
}

static uint64_t mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* A ring of the rings file holding slots already read (and written). */
static int held_any(void)
{
	struct tp_thread *t;

	for (t = tp_thread_list(); t; t = t->next)
		if (t->ring.hold && t->ring.rd !=
		    __atomic_load_n(&t->ring.tail, __ATOMIC_RELAXED))
			return 1;
	return 0;
}

/* Once per SYNC_NS, and only when something was written since the last
 * one: a sync flush costs a few bytes of output and a write. And at the
 * end of any cycle that read from a ring of the rings file: the writer
 * has caught up, so the producers get all their slots back before it
 * sleeps (otherwise up to a quarter ring stays held for up to SYNC_NS:
 * a burst had less room than in an in-memory ring, and the writer was
 * woken at the half mark sooner, in the middle of the program's work). */
static void sync_due(void)
{
	uint64_t now = mono_ns();

	if (now - W.synced_at < SYNC_NS && !held_any())
		return;
	W.synced_at = now;
	sync_now();
}

static void *writer_main(void *arg)
{
	uint32_t seen = 0;

	(void)arg;
	tp_self = tp_thread_internal();
	opened();
	while (!__atomic_load_n(&W.stop, __ATOMIC_ACQUIRE)) {
		uint64_t req;

		wait_cycle(&seen);
		tp_capture_poll();
		/* Before the drain: a request made during it waits for the
		 * next cycle, whose take follows its flush. */
		req = __atomic_load_n(&W.gpu_req, __ATOMIC_ACQUIRE);
		if (opened()) {
			tp_writer_drain();
			sync_due();
		}
		__atomic_store_n(&W.gpu_done, req, __ATOMIC_RELEASE);
		watch();
	}
	__atomic_store_n(&tp_recording, 0, __ATOMIC_RELAXED);
	if (opened())
		tp_writer_finish();
	__atomic_store_n(&W.done, 1, __ATOMIC_SEQ_CST);
	tp_futex_wake_all(&W.done);
	return NULL;
}

/* Under an address-space limit the writer's stack is 1 MiB, not the
 * default 8 (RLIMIT_STACK): the program's own threads need the room. */
#define LIMITED_STACK (1u << 20)

static const struct tp_writer_ext flight_ext = {
	.put_stats = tp_flight_put_stats,
};

void tp_writer_start(void)
{
	pthread_attr_t attr;
	sigset_t all, old;
	int rc;

	if (tp_flight_on() || tp_sess.cfg.fl.hang_ns)
		tp_writer_add_ext(&flight_ext);

	/* At load (for the capture's clock) or on the first attach. */
	if (__atomic_exchange_n(&W.claimed, 1, __ATOMIC_ACQ_REL))
		return;
	/* Signals go to the program's threads, never to the writer: a
	 * handler waiting for the writer must not run on the writer. */
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	pthread_attr_init(&attr);
	if (tp_as_limited())
		pthread_attr_setstacksize(&attr, LIMITED_STACK);
	rc = pthread_create(&W.thread, &attr, writer_main, NULL);
	pthread_attr_destroy(&attr);
	if (rc) {
		tp_error("cannot start the writer thread; tracing is off for "
			 "this process");
		__atomic_store_n(&tp_recording, 0, __ATOMIC_RELAXED);
	} else {
		__atomic_store_n(&W.started, 1, __ATOMIC_RELEASE);
		pthread_setname_np(W.thread, "tprof-writer");
		__atomic_store_n(&tp_ring_wake_fn, tp_writer_wake,
				 __ATOMIC_RELEASE);
		tp_thread_on_exits(tp_writer_wake);
	}
	pthread_sigmask(SIG_SETMASK, &old, NULL);
}

/* Waits for the writer to complete the file for as long as it keeps
 * writing (the time is bounded by what was recorded, since recording has
 * stopped), and gives up only after stall_ms without progress: a writer
 * stuck on a lock the dying program holds. 0 done, -1 given up. */
static int wait_done(int stall_ms)
{
	uint64_t last = __atomic_load_n(&W.progress, __ATOMIC_RELAXED);
	int still = 0;

	while (!__atomic_load_n(&W.done, __ATOMIC_SEQ_CST)) {
		uint64_t now;

		tp_futex_wait(&W.done, 0, 100);
		now = __atomic_load_n(&W.progress, __ATOMIC_RELAXED);
		if (now != last) {
			last = now;
			still = 0;
		} else if ((still += 100) >= stall_ms) {
			return -1;
		}
	}
	return 0;
}

/* Async-signal-safe: an atomic bump, and a system call only when the
 * writer sleeps. */
void tp_writer_wake(void)
{
	int saved = errno;

	if (!__atomic_load_n(&W.started, __ATOMIC_ACQUIRE))
		return;
	__atomic_add_fetch(&W.wake_seq, 1, __ATOMIC_SEQ_CST);
	if (__atomic_load_n(&W.sleeping, __ATOMIC_SEQ_CST))
		tp_futex_wake_all(&W.wake_seq);
	errno = saved;
}

static void gpu_now(int how, int timeout_ms)
{
	struct timespec ms = { 0, 1000000 };
	uint64_t ticket;
	int i;

	if (!__atomic_load_n(&W.started, __ATOMIC_ACQUIRE))
		return;
	/* gpu_now before the count: a writer that sees the count sees it. */
	__atomic_store_n(&W.gpu_now, how, __ATOMIC_RELEASE);
	ticket = __atomic_add_fetch(&W.gpu_req, 1, __ATOMIC_ACQ_REL);
	tp_writer_wake();
	for (i = 0; i < timeout_ms; i++) {
		if (__atomic_load_n(&W.gpu_done, __ATOMIC_ACQUIRE) >= ticket)
			return;
		nanosleep(&ms, NULL);
	}
}

void tp_writer_gpu_final(int timeout_ms)
{
	gpu_now(1, timeout_ms);
}

void tp_writer_gpu_convert(int timeout_ms)
{
	gpu_now(2, timeout_ms);
}

/* One line, with only async-signal-safe calls. */
static void say_abandoned(int stall_ms)
{
	char msg[TP_PATH_MAX + 200];
	int n;

	n = snprintf(msg, sizeof(msg), "tprof: error: the trace writer made "
		     "no progress for %d ms after the stop; %s is incomplete "
		     "and was not renamed (the program may hold a lock the "
		     "writer needs)\n", stall_ms, W.out.tmp);
	if (n > 0 && write(2, msg, (size_t)n < sizeof(msg) ? (size_t)n :
			   sizeof(msg) - 1) < 0)
		return;
}

int tp_writer_stop_from_signal(int stall_ms)
{
	int saved = errno, rc = 0;

	if (!__atomic_load_n(&W.started, __ATOMIC_ACQUIRE))
		return -1;
	__atomic_store_n(&tp_recording, 0, __ATOMIC_RELAXED);
	__atomic_store_n(&W.stop, 1, __ATOMIC_RELEASE);
	tp_writer_wake();
	if (wait_done(stall_ms) < 0) {
		rc = -1;
		if (!__atomic_exchange_n(&W.said_abandoned, 1,
					 __ATOMIC_ACQ_REL))
			say_abandoned(stall_ms);
	}
	errno = saved;
	return rc;
}

void tp_writer_stop(int stall_ms)
{
	if (!__atomic_load_n(&W.started, __ATOMIC_ACQUIRE))
		return;
	tp_writer_stop_from_signal(stall_ms);
	if (__atomic_load_n(&W.done, __ATOMIC_ACQUIRE))
		pthread_join(W.thread, NULL);
	W.started = 0;
}

/* Ended threads still waiting for a sync: freed (a restart), or only
 * unmapped in a fork child, whose regions are the parent's. */
static void forget_ended(int child)
{
	struct tp_thread *t, *next;

	for (t = W.ended; t; t = next) {
		next = t->next;
		if (child)
			tp_rf_thread_forget(t);
		else
			tp_thread_free(t);
	}
	W.ended = NULL;
}

/* After a failed exec the program goes on in the same image: the file
 * the stop completed stays as it is, and a new writer (with a new file,
 * the next -exec<N> name) takes over the live threads' rings where the
 * old one stopped. Their counts start again, so each file's totals are
 * its own. Not while the old writer may still run (it made no progress
 * and was given up on). */
int tp_writer_restart(void)
{
	const struct tp_writer_ext *ext[TP_WRITER_MAX_EXT];
	const struct tp_gpu_source *gpu = W.gpu;
	unsigned n_ext = W.n_ext;
	int was_claimed = W.claimed;
	struct tp_thread *t;
	unsigned threads;

	if (W.claimed && !__atomic_load_n(&W.done, __ATOMIC_ACQUIRE))
		return -1;
	memcpy(ext, W.ext, sizeof(ext));
	forget_ended(0);
	for (t = tp_thread_list(); t; t = t->next) {
		t->written = 0;
		t->dropped_base = tp_ring_dropped(&t->ring);
	}
	no_ring_base = tp_thread_unrecorded(&threads);
	tp_buf_free(&W.buf);
	tp_thread_stats_free(&W.stats);
	tp_corr_reset();
	tp_psum_after_fork();
	memset(&W, 0, sizeof(W));
	W.own.fd = -1;
	W.gpu = gpu;
	W.n_ext = n_ext;
	memcpy(W.ext, ext, sizeof(ext));
	if (was_claimed)
		tp_writer_start();
	return 0;
}

/* The parent's writer does not exist here; its file is the parent's. */
void tp_writer_after_fork_child(void)
{
	forget_ended(1);
	if (W.opened) {
		tp_gz_abandon(&W.gz);
		tp_fd_close(&W.own);
	}
	tp_buf_free(&W.buf);
	tp_thread_stats_free(&W.stats);
	tp_corr_reset();
	tp_psum_after_fork();
	tp_flight_after_fork();
	tp_collseq_after_fork();
	memset(&W, 0, sizeof(W));
	W.own.fd = -1;
}
