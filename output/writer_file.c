/* output/: the background writer: drains the rings into the trace file,
 * with its metadata and trailer; on every folder above. */
/* The trace file: made and named, its header, the flushes of the
 * formatted text through gzip, the sync points the rings file and
 * `tprof recover` rely on, the trailer; and the writer's state. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>

#include "util/log.h"
#include "record/flightfile.h"
#include "record/ringfile.h"
#include "stacks/symbols.h"
#include "session/timeline.h"
#include "flight.h"
#include "trailer.h"
#include "writer_state.h"

struct tp_writer_state tp_wr = { .own = { .fd = -1 } };

void tp_wr_mark_failed(const char *what, int err)
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

int tp_wr_fd_ok(void)
{
	if (tp_fd_is_ours(&W.own) || reopen_trace() == 0)
		return 1;
	W.own.fd = -1;
	tp_wr_mark_failed("cannot write", EBADF);
	return 0;
}

/* The flight recorder with TPROF_FORMAT=perfetto: one encoder for the
 * whole window (its track uuids stay the same across dumps), writing
 * absolute timestamps (a dump may leave packets out) and clearing its
 * incremental state at the start of every chunk, so a chunk needs
 * nothing older than itself but the track descriptors, which each dump
 * declares again first. */
int tp_wr_flight_pf(void)
{
	return tp_flight_on() && tp_sess.cfg.format == TP_FORMAT_PERFETTO;
}

/* A chunk starts here: the encoder's state cleared into W.buf. */
void tp_wr_chunk_start(void)
{
	if (!tp_wr_flight_pf() || !W.pf_live)
		return;
	tp_enc_perfetto_restart(tp_tev_sink, &W.buf);
	W.pf_restart_len = W.buf.len;
}

static int put_header(struct tp_buf *b);

/* The flight file's copy of the trace's header, for tprof recover: once,
 * before its first chunk. */
static void flight_file_head(void)
{
	struct tp_buf h = { 0 };

	W.ff_head = 1;
	tp_ff_set_base(tp_sess.base_ns);
	if (tp_wr_flight_pf()) {
		/* No text: the process's named descriptor goes into the
		 * log of tracks (flight_file_tracks), the rest comes with
		 * the chunks. */
		tp_trailer_process_name(&h);
		tp_buf_free(&h);
		tp_ff_set_head("", 0, tp_sess.cfg.rank,
			       tp_sess.cfg.world_size, tp_sess.run_id,
			       tp_sess.cfg.name);
		return;
	}
	if (put_header(&h) < 0 || h.oom) {
		tp_buf_free(&h);
		return;
	}
	tp_ff_set_head(h.p, h.len, tp_sess.cfg.rank, tp_sess.cfg.world_size,
		       tp_sess.run_id, tp_sess.cfg.name);
	tp_buf_free(&h);
}

/* flight_pf: the descriptors written since the last chunk, into the
 * flight file before the chunk that may use them. */
static void flight_file_tracks(void)
{
	if (!W.ff_tracks.len && !W.ff_tracks.oom)
		return;
	if (W.ff_tracks.oom) {
		tp_warn("flight recorder: no memory to keep its tracks on "
			"disk: its window stays in memory only, and a SIGKILL "
			"loses it (lower TPROF_FLIGHT_MB)");
		tp_ff_remove();
	} else {
		tp_ff_add_tracks(W.ff_tracks.p, W.ff_tracks.len);
	}
	W.ff_tracks.len = 0;
	W.ff_tracks.oom = 0;
}

void tp_wr_flush(int force)
{
	if (W.buf.len < FLUSH_BYTES && !force)
		return;
	if (tp_flight_on() && !W.dumping) {
		if (!W.ff_head)
			flight_file_head();
		/* Flight recorder: the text goes to the window, not a file. */
		if (tp_wr_flight_pf() && W.buf.len <= W.pf_restart_len &&
		    !W.buf.oom)
			return;		/* nothing since the restart */
		if (tp_wr_flight_pf())
			flight_file_tracks();
		if (!W.buf.oom)
			tp_flight_put(W.buf.p, W.buf.len,
				      W.events - W.flushed_events, tp_ticks());
		W.flushed_events = W.events;
		__atomic_add_fetch(&W.progress, 1, __ATOMIC_RELAXED);
		W.buf.len = 0;
		W.buf.oom = 0;
		tp_wr_chunk_start();
		return;
	}
	if (!W.failed && W.buf.oom)
		tp_wr_mark_failed("out of memory formatting", ENOMEM);
	if (!W.failed && tp_wr_fd_ok() &&
	    tp_gz_write(&W.gz, W.buf.p, W.buf.len) < 0)
		tp_wr_mark_failed("cannot write", W.gz.err);
	__atomic_add_fetch(&W.progress, 1, __ATOMIC_RELAXED);
	W.buf.len = 0;
	W.buf.oom = 0;
}

void tp_wr_flush_some(void)
{
	tp_wr_flush(0);
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
/* The flight recorder's sync point: what was formatted goes into the
 * window (and the flight file) as a chunk, then the rings file records
 * the chunk's number and where each ring was read up to, and the slots
 * read go back. After a kill every record is in a chunk up to that
 * number or still in its ring. */
static void flight_sync(void)
{
	uint64_t g;

	if (W.buf.len > (tp_wr_flight_pf() ? W.pf_restart_len : 0))
		tp_wr_flush(1);
	if (!tp_rf_active())
		return;
	if (!tp_ff_name()[0])
		return;
	/* Named again each time: a dump's trace took the name meanwhile. */
	tp_rf_set_trace(tp_ff_name());
	if (!W.ff_noted) {
		W.ff_noted = 1;
		tp_sym_note_all_to_ringfile();
	}
	g = tp_rf_sync_begin();
	publish_list(tp_thread_list(), g);
	publish_list(W.ended, g);
	tp_rf_sync_end(g, tp_flight_synced_seq());
	release_list(tp_thread_list());
	release_list(W.ended);
}

void tp_wr_sync_now(void)
{
	uint64_t g;

	if (!W.failed && tp_flight_on() && !W.dumping) {
		flight_sync();
		return;
	}
	if (!W.opened || W.failed)
		return;
	if (W.gz.in_bytes + W.buf.len != W.synced_in) {
		tp_wr_flush(1);
		if (W.failed || !tp_wr_fd_ok())
			return;
		if (tp_gz_sync(&W.gz) < 0) {
			tp_wr_mark_failed("cannot write", W.gz.err);
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
int tp_wr_pf_live_start(void)
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
	/* Before its first descriptor: the flight file keeps them all. */
	tp_enc_perfetto_log_tracks(tp_tev_sink, &W.ff_tracks);
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
	if (tp_wr_flight_pf()) {
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
void tp_wr_put_trailer(struct tp_buf *b, const struct tp_trailer_info *info)
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
int tp_wr_open_named(const char *name)
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
		tp_wr_mark_failed("cannot start", errno);
		return 0;	/* said: failed */
	}
	tp_wr_flush(1);
	return 0;
}

int tp_writer_open(void)
{
	if (tp_wr_open_named(tp_sess.cfg.name) == 0) {
		/* The rings file names its .tmp, and the names registered
		 * before it existed; a first sync covers the header. */
		tp_rf_set_trace(W.out.tmp);
		tp_sym_note_all_to_ringfile();
		tp_wr_sync_now();
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

/* Flight recorder: a dump file of its own (the second and later ones
 * named <name>-dump<N>), the window's chunks written into it. */
void tp_wr_write_chunk(const char *p, size_t len)
{
	if (!W.failed && tp_wr_fd_ok() && tp_gz_write(&W.gz, p, len) < 0)
		tp_wr_mark_failed("cannot write", W.gz.err);
}
