/* output/: the background writer: drains the rings into the trace file,
 * with its metadata and trailer; on every folder above. */
/* The flight recorder's dumps: the window into a file of its own at a
 * trigger (signal, `tprof dump`, a hang) or at the final stop. */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>

#include "record/flightfile.h"
#include "record/inflight.h"
#include "record/ringfile.h"
#include "util/log.h"
#include "session/timeline.h"
#include "flight.h"
#include "hang.h"
#include "trailer.h"
#include "writer_state.h"

static int flight_open(void)
{
	char name[300];

	W.dumping = 1;
	W.dumps++;
	tp_ff_set_dumps(W.dumps);
	if (W.dumps == 1) {
		if (tp_writer_open() == 0)
			return 0;
		W.dumping = 0;
		return -1;
	}
	snprintf(name, sizeof(name), "%s-dump%u", tp_sess.cfg.name, W.dumps);
	if (tp_wr_open_named(name) < 0) {
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
int tp_wr_flight_final(void)
{
	uint64_t at;
	const char *why = tp_flight_exit_reason(&at);

	tp_wr_calibrate(1);
	tp_wr_drain(1);
	if (!why) {
		tp_info("flight recorder: normal exit, nothing written "
			"(TPROF_FLIGHT_DUMP_AT_EXIT=1 writes the last "
			"seconds at exit)");
		/* Nothing to recover either. */
		tp_ff_remove();
		tp_rf_remove();
		return 0;
	}
	tp_flight_dumping(why, at);
	if (flight_open() < 0)
		return -1;
	W.events = tp_flight_each(tp_wr_write_chunk);
	tp_wr_chunk_start();	/* what follows needs no chunk before it */
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

	tp_wr_flush(1);
	tp_flight_dumping(why, at);
	if (flight_open() < 0)
		return NULL;
	W.events = tp_flight_each(tp_wr_write_chunk);
	tp_wr_chunk_start();
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
	tp_wr_put_trailer(&W.buf, &info);
	tp_wr_flush(1);
	tp_thread_stats_free(&st);
	path[0] = '\0';
	if (!W.failed && tp_wr_fd_ok() && tp_gz_finish(&W.gz) == 0 &&
	    tp_fd_close(&W.own) == 0 && rename(W.out.tmp, W.out.final) == 0)
		snprintf(path, sizeof(path), "%s", W.out.final);
	else if (!W.failed)
		tp_wr_mark_failed("cannot complete", errno);
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
	tp_wr_chunk_start();	/* the next chunk */
	return path[0] ? path : NULL;
}

/* Each cycle: a call stuck past TPROF_HANG, a dump asked for, or another
 * rank's hang dumps the window (flight recorder) and the hang state
 * (TPROF_HANG). */
void tp_wr_watch(void)
{
	int hang = tp_hang_check();
	int req = __atomic_exchange_n(&W.dump_req, 0, __ATOMIC_ACQ_REL);
	int peer = !hang && tp_hang_peer_check();
	const char *trace = NULL, *why;

	if ((!hang && !req && !peer) || W.failed || !tp_tl.ready)
		return;
	why = hang ? "hang" : peer ? "peer" : "signal";
	if (tp_flight_on() && tp_thread_list())
		trace = flight_dump(why, hang || peer ? tp_ticks() :
				    __atomic_load_n(&W.dump_at,
						    __ATOMIC_RELAXED));
	if (tp_hang_on)
		tp_hang_write(why, trace);
}
