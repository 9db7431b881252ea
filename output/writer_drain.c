/* output/: the background writer: drains the rings into the trace file,
 * with its metadata and trailer; on every folder above. */
/* One cycle of the writer: the tick rate calibrated, every ring
 * drained up to what was published, GPU records taken and converted,
 * ended threads' rings given back. */
#define _GNU_SOURCE

#include "capture/capture.h"
#include "record/ringfile.h"
#include "record/spill.h"
#include "summary/proc_summary.h"
#include "session/timeline.h"
#include "flight.h"
#include "trailer.h"
#include "writer_state.h"

/* The end of the trace, for what is still open when it ends. */
static int64_t end_ns(void)
{
	return tp_trace_ns(tp_ticks());
}

/* Events an extension writes for a thread that is going away (exited, or
 * the trace ends). */
void tp_wr_thread_end(struct tp_thread *t)
{
	unsigned i;

	for (i = 0; i < W.n_ext; i++)
		if (W.ext[i]->thread_end && !W.failed)
			W.events += W.ext[i]->thread_end(&W.buf, t, end_ns());
}

void tp_wr_calibrate(int final)
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

/* What the thread's ring dropped since this file began. */
static uint64_t thread_dropped(struct tp_thread *t)
{
	return tp_ring_dropped(&t->ring) - t->dropped_base;
}

/* A ring of the rings file read a quarter of its size past the last
 * sync: the producer gets its slots back only at a sync. */
static void sync_if_held(struct tp_ring *r)
{
	if (r->hold && r->rd - __atomic_load_n(&r->tail, __ATOMIC_RELAXED) >=
	    (r->mask + 1) / 4)
		tp_wr_sync_now();
}

/* Ended threads of the rings file, once a sync covers them: each one's
 * drop count is noted in the file (the trailer that would hold it may
 * never be written), and its region goes back. */
static void free_ended(void)
{
	struct tp_thread *t, *next;

	if (!W.ended)
		return;
	tp_wr_sync_now();
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
	/* After head: the chunks queued before it was published. */
	int spill = tp_spill_pending(&t->ring);
	const struct tp_event *e;
	unsigned batch = 0, n;

	tp_capture_sync();
	while (pos != head) {
		e = tp_ring_next(&t->ring, &pos, head, spill, &n, W.scratch);
		if (!e)
			break;
		if (!W.failed)
			tp_wr_put_event(&W.buf, t, e);
		t->written++;
		pos += n;
		if (++batch == POP_BATCH) {
			tp_ring_release(&t->ring, pos);
			sync_if_held(&t->ring);
			tp_spill_prefault();
			batch = 0;
		}
		tp_wr_flush(0);
	}
	tp_ring_release(&t->ring, pos);
	sync_if_held(&t->ring);
	__atomic_add_fetch(&W.progress, 1, __ATOMIC_RELAXED);
	if (!exited)
		return;
	tp_wr_thread_end(t);
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

void tp_wr_drain(int final)
{
	struct tp_thread *t, *next;
	int gpu_final = final, teardown = 0;
	unsigned i;

	if (tp_wr_flight_pf() && !W.pf_live && !W.failed && tp_wr_pf_live_start() < 0)
		return;

	for (t = tp_thread_list(); t; t = t->next)
		prefault(t);
	tp_spill_prefault();
	int now = __atomic_load_n(&W.gpu_req, __ATOMIC_ACQUIRE) != W.gpu_done ?
		  __atomic_load_n(&W.gpu_now, __ATOMIC_ACQUIRE) : 0;

	if (now == 1)
		gpu_final = 1;
	if (!final)
		tp_wr_host_cycle();
	tp_wr_calibrate(gpu_final || now);
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
	tp_wr_host_drain(final);
	if (!W.failed)
		W.events += tp_capture_put_steps(&W.buf);
	if (W.gpu && !W.failed)
		W.events += W.gpu->convert(&W.buf, &tp_tl.map, tp_wr_flush_some,
					   gpu_final || now == 2);
	for (i = 0; i < W.n_ext; i++)
		if (W.ext[i]->cycle && !W.failed)
			W.events += W.ext[i]->cycle(&W.buf);
	if (teardown) {
		W.gpu->teardown();
		W.torn_down = 1;
	}
	free_ended();
	/* Flight recorder: a chunk per cycle at least, so the window is
	 * trimmed to the cycle. */
	tp_wr_flush(tp_flight_on() && !W.dumping);
}

void tp_writer_drain(void)
{
	tp_wr_drain(0);
}

void tp_wr_add_live_thread_stats(void)
{
	struct tp_thread *t;
	unsigned i;

	for (t = tp_thread_list(); t; t = t->next) {
		tp_wr_thread_end(t);
		tp_thread_read_name(t);
		tp_thread_stats_add(&W.stats, t->tid, t->name, t->written,
				    thread_dropped(t));
		tp_psum_thread_drops(t, &tp_tl.map);
	}
	tp_wr_host_thread_stats();
	for (i = 0; i < W.n_ext; i++)
		if (W.ext[i]->trace_end && !W.failed)
			W.events += W.ext[i]->trace_end(&W.buf, end_ns());
}
