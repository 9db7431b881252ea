/* output/: the background writer: drains the rings into the trace file,
 * with its metadata and trailer; on every folder above. */
/* The writer thread: started on the first event, woken by producers,
 * stopped at exit (or from a signal handler), restarted after a failed
 * exec, forgotten in a fork child; the trace completed at the end. */
#define _GNU_SOURCE
#include <errno.h>
#include <signal.h>
#include <stdio.h>

#include "capture/capture.h"
#include "record/collseq.h"
#include "record/corrmap.h"
#include "record/futex.h"
#include "util/log.h"
#include "record/ring_budget.h"
#include "record/flightfile.h"
#include "record/ringfile.h"
#include "record/spill.h"
#include "stacks/perfmap.h"
#include "summary/proc_summary.h"
#include "session/timeline.h"
#include "flight.h"
#include "hang.h"
#include "trailer.h"
#include "writer_state.h"

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

/* Calls counted before this file began (a failed exec). */
static uint64_t no_ring_base;

/* Calls of threads that got no ring count as dropped. */
static void add_no_ring_stats(void)
{
	unsigned threads;

	W.stats.no_ring = tp_thread_unrecorded(&threads) - no_ring_base;
	W.stats.dropped += W.stats.no_ring;
}

/* Async-signal-safe: the next cycle dumps. */
void tp_writer_request_dump(void)
{
	__atomic_store_n(&W.dump_at, tp_ticks(), __ATOMIC_RELAXED);
	__atomic_store_n(&W.dump_req, 1, __ATOMIC_RELEASE);
	tp_writer_wake();
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
	char note[512], why[256];

	/* A process that dies within its first 100 ms has its clock only
	 * now: the last state's times need it. */
	tp_wr_calibrate(1);
	tp_hang_final();
	if (tp_flight_on() && !W.opened && !W.failed &&
	    tp_wr_flight_final() <= 0)
		return -1;
	if (!W.opened || W.failed)
		return -1;
	tp_wr_calibrate(1);
	tp_wr_drain(1);
	W.events += tp_hang_put_open_calls(&W.buf);
	tp_wr_add_live_thread_stats();
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
	tp_wr_put_trailer(&W.buf, &info);
	tp_wr_flush(1);
	if (W.failed)
		return -1;
	if (!tp_wr_fd_ok())
		return -1;
	if (tp_gz_finish(&W.gz) < 0) {
		tp_wr_mark_failed("cannot complete", W.gz.err);
		return -1;
	}
	if (tp_fd_close(&W.own) < 0 || rename(W.out.tmp, W.out.final) < 0) {
		tp_wr_mark_failed("cannot complete", errno);
		return -1;
	}
	W.opened = 0;
	tp_rf_remove();	/* the trace is whole: nothing to recover */
	tp_ff_remove();
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
	tp_wr_sync_now();
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
		tp_spill_upkeep();
		__atomic_store_n(&W.gpu_done, req, __ATOMIC_RELEASE);
		tp_wr_watch();
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
	if (tp_sess.cfg.sources & (TP_SRC_CPU | TP_SRC_OSRT))
		tp_writer_add_ext(&tp_wr_host_ext);

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
	tp_buf_free(&W.ff_tracks);
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

/* The parent's writer does not exist here; its file is the parent's.
 * The extensions stay: they were registered once, at load, and the
 * child's trace needs their events and trailer keys too. */
void tp_writer_after_fork_child(void)
{
	const struct tp_writer_ext *ext[TP_WRITER_MAX_EXT];
	unsigned n_ext = W.n_ext;

	memcpy(ext, W.ext, sizeof(ext));
	forget_ended(1);
	if (W.opened) {
		tp_gz_abandon(&W.gz);
		tp_fd_close(&W.own);
	}
	tp_buf_free(&W.buf);
	tp_buf_free(&W.ff_tracks);
	tp_thread_stats_free(&W.stats);
	tp_corr_reset();
	tp_psum_after_fork();
	tp_flight_after_fork();
	tp_collseq_after_fork();
	tp_wr_host_after_fork();
	memset(&W, 0, sizeof(W));
	W.own.fd = -1;
	W.n_ext = n_ext;
	memcpy(W.ext, ext, sizeof(ext));
}
