/* output/: the background writer: drains the rings into the trace file,
 * with its metadata and trailer; on every folder above. */
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "config/config.h"
#include "record/api.h"
#include "record/spill.h"
#include "session/session.h"
#include "stacks/stacks.h"
#include "session/meta.h"
#include "session/ending.h"
#include "trailer.h"

#define TOP_STACKS 10

void tp_thread_stats_add(struct tp_thread_stats *s, pid_t tid,
			 const char *name, uint64_t events, uint64_t dropped)
{
	struct tp_thread_stat *st;

	s->dropped += dropped;
	if (s->n == s->cap && s->cap < TP_MAX_THREAD_STATS) {
		unsigned cap = s->cap ? s->cap * 2 : 16;
		void *v = realloc(s->v, cap * sizeof(*s->v));

		if (v) {
			s->v = v;
			s->cap = cap;
		}
	}
	if (s->n < s->cap) {
		st = &s->v[s->n++];
		st->tid = tid;
		memcpy(st->name, name, sizeof(st->name));
		st->name[sizeof(st->name) - 1] = '\0';
		st->events = events;
		st->dropped = dropped;
		return;
	}
	if (!s->n)
		return;
	st = &s->v[s->n - 1];
	st->events += events;
	st->dropped += dropped;
}

void tp_thread_stats_free(struct tp_thread_stats *s)
{
	free(s->v);
	memset(s, 0, sizeof(*s));
}

/* A /proc file's content, NUL-terminated; n returns its length. */
static size_t read_proc(const char *path, char *buf, size_t len)
{
	ssize_t n;
	int fd;

	buf[0] = '\0';
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return 0;
	n = read(fd, buf, len - 1);
	close(fd);
	if (n < 0)
		n = 0;
	buf[n] = '\0';
	return (size_t)n;
}

void tp_trailer_process_name(struct tp_buf *b)
{
	char comm[64], name[128];

	read_proc("/proc/self/comm", comm, sizeof(comm));
	comm[strcspn(comm, "\n")] = '\0';
	snprintf(name, sizeof(name), "%s (rank %d, pid %d)", comm,
		 tp_sess.cfg.rank, (int)tp_sess.pid);
	tp_meta_process(b, name, tp_sess.cfg.rank);
}

static void put_command(struct tp_buf *b)
{
	char cmd[8192];
	size_t n = read_proc("/proc/self/cmdline", cmd, sizeof(cmd)), i = 0;

	tp_buf_char(b, '[');
	while (i < n) {
		size_t l = strlen(cmd + i);

		if (i)
			tp_buf_char(b, ',');
		tp_json_strn(b, cmd + i, l);
		i += l + 1;
	}
	tp_buf_char(b, ']');
}

/* What the spill pool took in (record/spill.h). */
static void put_spill(struct tp_buf *b)
{
	struct tp_spill_stats s;

	tp_spill_stats(&s);
	tp_buf_lit(b, ",\n \"spill\": {\"pool_bytes\": ");
	tp_json_u64(b, s.pool_bytes);
	tp_buf_lit(b, ", \"chunks\": ");
	tp_json_u64(b, s.chunks);
	tp_buf_lit(b, ", \"chunk_records\": ");
	tp_json_u64(b, TP_SPILL_SLOTS);
	tp_buf_lit(b, ", \"taken\": ");
	tp_json_u64(b, s.taken);
	tp_buf_lit(b, ", \"peak\": ");
	tp_json_u64(b, s.peak);
	tp_buf_lit(b, ", \"refused\": ");
	tp_json_u64(b, s.refused);
	tp_buf_char(b, '}');
}

static void put_config(struct tp_buf *b)
{
	static const char *const levels[] = { "quiet", "warn", "info",
					      "debug" };
	const struct tp_config *c = &tp_sess.cfg;
	char sources[128];

	tp_config_sources_str(c->sources, sources, sizeof(sources));
	tp_buf_lit(b, "{\"output_dir\": ");
	tp_json_str(b, c->dir);
	tp_buf_lit(b, ", \"name\": ");
	tp_json_str(b, c->name);
	tp_buf_lit(b, ", \"trace\": ");
	tp_json_str(b, sources);
	tp_buf_lit(b, ", \"buffer_mb\": ");
	tp_json_u64(b, c->buffer_mb);
	tp_buf_lit(b, ", \"spill_mb\": ");
	tp_json_u64(b, c->spill_mb);
	tp_buf_lit(b, ", \"cupti_buffer_mb\": ");
	tp_json_u64(b, c->cupti_buffer_mb);
	tp_buf_lit(b, ", \"ring_file\": ");
	tp_json_u64(b, (uint64_t)c->ring_file);
	tp_buf_lit(b, ", \"gzip_level\": ");
	tp_json_u64(b, (uint64_t)c->gzip_level);
	tp_buf_lit(b, ", \"cupti_lib\": ");
	tp_json_str(b, c->cupti_lib);
	tp_buf_lit(b, ", \"log\": ");
	tp_json_str(b, levels[c->log_level & 3]);
	tp_buf_lit(b, ", \"rank_from\": ");
	tp_json_str(b, c->rank_from ? c->rank_from : "default");
	tp_buf_char(b, '}');
}

static void put_threads(struct tp_buf *b, const struct tp_thread_stats *s)
{
	unsigned i;

	tp_buf_char(b, '[');
	for (i = 0; i < s->n; i++) {
		tp_buf_cstr(b, i ? ",\n  {\"tid\": " : "\n  {\"tid\": ");
		tp_json_u64(b, (uint64_t)s->v[i].tid);
		tp_buf_lit(b, ", \"name\": ");
		tp_json_str(b, s->v[i].name);
		tp_buf_lit(b, ", \"events\": ");
		tp_json_u64(b, s->v[i].events);
		tp_buf_lit(b, ", \"dropped\": ");
		tp_json_u64(b, s->v[i].dropped);
		tp_buf_char(b, '}');
	}
	tp_buf_char(b, ']');
}

/* A name a source gave the thread (nvtxNameOsThread) wins over its OS
 * name; the source writes those itself. */
static int named_by_ext(const struct tp_trailer_info *info, pid_t tid)
{
	unsigned i;

	for (i = 0; i < info->n_ext; i++)
		if (info->ext[i]->thread_name && info->ext[i]->thread_name(tid))
			return 1;
	return 0;
}

static void put_thread_names(struct tp_buf *b,
			     const struct tp_trailer_info *info)
{
	const struct tp_thread_stats *s = info->stats;
	unsigned i;

	for (i = 0; i < s->n; i++) {
		if (named_by_ext(info, s->v[i].tid))
			continue;
		tp_meta_thread_name(b, s->v[i].tid, s->v[i].name);
	}
	for (i = 0; i < info->n_ext; i++)
		if (info->ext[i]->put_meta)
			info->ext[i]->put_meta(b);
}

/* The rank from the environment, and the NCCL world once a communicator
 * was created. Written last: a communicator appears mid-run. */
static void put_dist_info(struct tp_buf *b)
{
	struct tp_nccl_world w;

	tp_buf_lit(b, ",\n\"distributedInfo\": {\"rank\": ");
	tp_json_i64(b, tp_sess.cfg.rank);
	tp_buf_lit(b, ", \"world_size\": ");
	tp_json_i64(b, tp_sess.cfg.world_size);
	if (tp_session_nccl(&w)) {
		tp_buf_lit(b, ", \"backend\": \"nccl\", \"nccl_version\": ");
		tp_json_str(b, w.version);
		tp_buf_lit(b, ", \"nccl_rank\": ");
		tp_json_i64(b, w.rank);
		tp_buf_lit(b, ", \"nccl_world_size\": ");
		tp_json_i64(b, w.size);
		tp_buf_lit(b, ", \"nccl_communicators\": ");
		tp_json_u64(b, w.comms);
	}
	tp_buf_char(b, '}');
}

static void put_top(const struct tp_stack_top *t, unsigned i, void *ctx)
{
	struct tp_buf *b = ctx;

	tp_buf_cstr(b, i ? ",\n  {\"calls\": " : "\n  {\"calls\": ");
	tp_json_u64(b, t->st->calls);
	tp_buf_lit(b, ", \"total_us\": ");
	tp_json_us(b, (int64_t)t->st->total_ns);
	tp_buf_lit(b, ", \"max_us\": ");
	tp_json_us(b, (int64_t)t->st->max_ns);
	tp_buf_lit(b, ", \"slowest\": ");
	tp_json_str(b, t->slowest);
	tp_buf_lit(b, ", \"stack\": ");
	tp_buf_put(b, t->json, t->len);
	tp_buf_char(b, '}');
}

/* The stacks behind the most time in calls that were captured. */
static void put_backtraces(struct tp_buf *b)
{
	const struct tp_config *c = &tp_sess.cfg;

	if (!c->bt_on)
		return;
	tp_buf_lit(b, ",\n \"backtraces\": {\"threshold_ns\": ");
	if (c->bt_all_kinds && !c->bt_threshold_ns)
		tp_buf_lit(b, "null");
	else
		tp_json_u64(b, c->bt_threshold_ns);
	tp_buf_lit(b, ", \"depth\": ");
	tp_json_u64(b, c->bt_depth);
	tp_buf_lit(b, ", \"unique_stacks\": ");
	tp_json_u64(b, tp_stacks_count());
	tp_buf_lit(b, ", \"lost\": ");
	tp_json_u64(b, tp_stacks_lost());
	tp_buf_lit(b, ", \"top\": [");
	tp_stacks_each_top(TOP_STACKS, put_top, b);
	tp_buf_lit(b, "]}");
}

/* A trace completed on the way out of a crash or an _exit says so. */
static void put_ended_by(struct tp_buf *b)
{
	static const struct { int sig; const char *name; } names[] = {
		{ SIGSEGV, "SIGSEGV" }, { SIGBUS, "SIGBUS" },
		{ SIGFPE, "SIGFPE" }, { SIGILL, "SIGILL" },
		{ SIGABRT, "SIGABRT" },
	};
	int sig = tp_end_signal();
	unsigned i;

	switch (tp_end_cause()) {
	case TP_END_NORMAL:
		return;
	case TP_END_EXIT:
		tp_buf_lit(b, ", \"ended_by\": \"_exit\"");
		return;
	case TP_END_SIGNAL:
		break;
	}
	tp_buf_lit(b, ", \"ended_by\": ");
	for (i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		if (names[i].sig == sig) {
			tp_json_str(b, names[i].name);
			return;
		}
	tp_json_i64(b, sig);
}

void tp_trailer_put_meta(struct tp_buf *b, const struct tp_trailer_info *info)
{
	put_thread_names(b, info);
	if (info->gpu)
		info->gpu->put_meta(b);
}

void tp_trailer_put_json(struct tp_buf *b, const struct tp_trailer_info *info)
{
	/* Drift of the fixed tick mapping against the wall clock over the
	 * run: how far the last events may be off in Unix time. */
	int64_t drift = (int64_t)(tp_clock_to_unix(info->map, info->end.ticks) -
				  info->end.unix_ns);

	unsigned i;

	tp_buf_lit(b, "\"deviceProperties\": [");
	if (info->gpu)
		info->gpu->put_devices(b);
	tp_buf_char(b, ']');
	put_dist_info(b);
	tp_buf_lit(b, ",\n\"tprof\": "
		   "{\"version\": \"" TP_VERSION "\", \"command\": ");
	put_command(b);
	tp_buf_lit(b, ", \"host\": ");
	tp_json_str(b, tp_sess.host);
	tp_buf_lit(b, ", \"pid\": ");
	tp_json_u64(b, (uint64_t)tp_sess.pid);
	tp_buf_lit(b, ", \"run_id\": ");
	tp_json_str(b, tp_sess.run_id);
	tp_buf_lit(b, ",\n \"config\": ");
	put_config(b);
	tp_buf_lit(b, ",\n \"clock\": {\"source\": ");
	tp_json_str(b, tp_clock_use_tsc ? "tsc" : "CLOCK_MONOTONIC_RAW");
	tp_buf_lit(b, ", \"drift_ns\": ");
	tp_json_i64(b, drift);
	tp_buf_lit(b, "}, \"compressor\": ");
	tp_json_str(b, info->compressor);
	tp_buf_lit(b, ",\n \"start_unix_ns\": ");
	tp_json_u64(b, tp_sess.anchor.unix_ns);
	tp_buf_lit(b, ", \"end_unix_ns\": ");
	tp_json_u64(b, info->end.unix_ns);
	tp_buf_lit(b, ", \"events_written\": ");
	tp_json_u64(b, info->events);
	tp_buf_lit(b, ", \"events_dropped\": ");
	tp_json_u64(b, info->stats->dropped);
	if (info->stats->no_ring) {
		tp_buf_lit(b, ", \"events_dropped_no_ring\": ");
		tp_json_u64(b, info->stats->no_ring);
	}
	put_spill(b);
	put_ended_by(b);
	if (info->gpu)
		info->gpu->put_stats(b);
	for (i = 0; i < info->n_ext; i++)
		if (info->ext[i]->put_stats)
			info->ext[i]->put_stats(b);
	put_backtraces(b);
	tp_buf_lit(b, ",\n \"threads\": ");
	put_threads(b, info->stats);
	tp_buf_char(b, '}');
}
