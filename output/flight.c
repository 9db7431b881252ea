/* output/: the background writer: drains the rings into the trace file,
 * with its metadata and trailer; on every folder above. */
/* The flight recorder's window: a list of chunks of the trace's text
 * (JSON, or Perfetto packets that need nothing before them but the track
 * descriptors: see the writer's flight_pf), oldest first,
 * each deflated on its own (zlib, level 1, raw), touched only by the
 * writer thread (tp_flight_trigger excepted, one atomic store). Deflated,
 * a launch event takes about 17 bytes instead of 370 of JSON: the window
 * costs that per event, the writer one deflate per event more, and a dump
 * inflates the chunks once. Calls trace/ only. */
#define _GNU_SOURCE
#include <stdlib.h>
#include <string.h>

#include <zlib.h>

#include "config/config_capture.h"
#include "record/flightfile.h"
#include "encode/json.h"
#include "util/log.h"
#include "session/session.h"
#include "encode/tev.h"
#include "session/timeline.h"
#include "flight.h"

struct chunk {
	struct chunk *next;
	uint64_t ff_seq;	/* its number in the flight file, 0: none */
	uint64_t tick;		/* every event in it ended before this */
	uint64_t events;
	size_t len;		/* of the JSON */
	size_t zlen;		/* of p, deflated */
	unsigned char p[];
};

static struct {
	struct chunk *head, *tail;
	z_stream def;
	int def_ok;		/* 1: def is set up, -1: it cannot be */
	size_t bytes;		/* deflated, in the window */
	size_t json;		/* the same as JSON */
	uint64_t events;	/* in the window now */
	uint64_t aged;		/* events freed for being older than the window */
	uint64_t capped;	/* freed early to keep under TPROF_FLIGHT_MB */
	uint64_t oom;		/* events lost to a failed allocation */
	const char *why;	/* tp_flight_trigger's reason */
	uint64_t why_at;	/* and its tick */
	const char *dumping;	/* the dump being written's reason */
	int64_t cut_ns;		/* its window starts here (trace time) */
	uint64_t cut_events;	/* X events it left out of chunks kept */
	int said_cap;
} F;

int tp_flight_on(void)
{
	return tp_sess.cfg.fl.flight_ns != 0;
}

static void drop_head(uint64_t *count)
{
	struct chunk *c = F.head;

	F.head = c->next;
	if (!F.head)
		F.tail = NULL;
	F.bytes -= c->zlen;
	F.json -= c->len;
	F.events -= c->events;
	*count += c->events;
	if (c->ff_seq)
		tp_ff_forget_until(c->ff_seq);
	free(c);
}

void tp_flight_evict(uint64_t now)
{
	int64_t cut;

	if (!tp_tl.ready)
		return;
	cut = tp_trace_ns(now) - (int64_t)tp_sess.cfg.fl.flight_ns;
	while (F.head && tp_trace_ns(F.head->tick) < cut)
		drop_head(&F.aged);
}

/* The chunk of p deflated, or NULL (no memory). */
static struct chunk *deflated(const char *p, size_t len)
{
	struct chunk *c;
	uLong bound;

	if (!F.def_ok)
		F.def_ok = deflateInit2(&F.def, 1, Z_DEFLATED, -15, 8,
					Z_DEFAULT_STRATEGY) == Z_OK ? 1 : -1;
	if (F.def_ok < 0 || len > UINT32_MAX)
		return NULL;
	bound = deflateBound(&F.def, (uLong)len);
	c = malloc(sizeof(*c) + bound);
	if (!c)
		return NULL;
	deflateReset(&F.def);
	F.def.next_in = (Bytef *)p;
	F.def.avail_in = (uInt)len;
	F.def.next_out = c->p;
	F.def.avail_out = (uInt)bound;
	if (deflate(&F.def, Z_FINISH) != Z_STREAM_END) {
		free(c);
		return NULL;
	}
	c->zlen = bound - F.def.avail_out;
	/* Give back what the bound over-asked. */
	return realloc(c, sizeof(*c) + c->zlen) ?: c;
}

void tp_flight_put(const char *p, size_t len, uint64_t n, uint64_t now)
{
	size_t cap = (size_t)tp_sess.cfg.fl.flight_mb << 20;
	struct chunk *c;

	if (!len)
		return;
	c = deflated(p, len);
	if (!c) {
		if (!F.oom && n)
			tp_warn("flight recorder: no memory for its window: "
				"%llu events are not kept (lower TPROF_FLIGHT "
				"or TPROF_FLIGHT_MB); the trace's "
				"flight.lost_no_memory counts them",
				(unsigned long long)n);
		F.oom += n;
		return;
	}
	c->len = len;
	c->events = n;
	c->tick = now;
	c->next = NULL;
	/* On disk too: a SIGKILL leaves it to tprof recover. */
	c->ff_seq = tp_ff_put(c->p, (uint32_t)c->zlen, len, n,
			      tp_tl.ready ? tp_trace_ns(now) : 0);
	if (F.tail)
		F.tail->next = c;
	else
		F.head = c;
	F.tail = c;
	F.bytes += c->zlen;
	F.json += len;
	F.events += n;
	tp_flight_evict(now);
	while (F.bytes > cap && F.head != F.tail)
		drop_head(&F.capped);
	if (F.capped && !F.said_cap) {
		F.said_cap = 1;
		tp_warn("the flight recorder's window passed TPROF_FLIGHT_MB="
			"%u MiB: it keeps less than TPROF_FLIGHT seconds "
			"(raise TPROF_FLIGHT_MB or lower TPROF_FLIGHT)",
			tp_sess.cfg.fl.flight_mb);
	}
}

/* c's JSON into out (c->len bytes): 0, or -1. */
static int inflated(z_stream *z, const struct chunk *c, char *out)
{
	inflateReset(z);
	z->next_in = (Bytef *)c->p;
	z->avail_in = (uInt)c->zlen;
	z->next_out = (Bytef *)out;
	z->avail_out = (uInt)c->len;
	return inflate(z, Z_FINISH) == Z_STREAM_END && !z->avail_out ? 0 : -1;
}

uint64_t tp_flight_each(void (*fn)(const char *p, size_t len))
{
	z_stream z = { 0 };
	struct chunk *c;
	size_t max = 0;
	uint64_t n = 0;
	char *buf;

	for (c = F.head; c; c = c->next)
		if (c->len > max)
			max = c->len;
	buf = malloc(max ? max : 1);
	if (!buf || inflateInit2(&z, -15) != Z_OK) {
		free(buf);
		tp_error("no memory to write the flight recorder's window: the "
			 "dump holds no event");
		return 0;
	}
	F.cut_events = 0;
	for (c = F.head; c; c = c->next) {
		uint64_t left = 0;
		size_t len;

		if (inflated(&z, c, buf) < 0)
			continue;	/* cannot be: our own deflate */
		len = tp_sess.cfg.format == TP_FORMAT_PERFETTO ?
		      tp_pf_trim(buf, c->len, F.cut_ns, &left) :
		      tp_json_trim(buf, c->len, F.cut_ns, &left);
		fn(buf, len);
		n += c->events - left;
		F.cut_events += left;
	}
	inflateEnd(&z);
	free(buf);
	return n;
}

static void put_hang(struct tp_buf *b)
{
	tp_buf_lit(b, ",\n \"hang\": ");
	if (!tp_sess.cfg.fl.hang_ns) {
		tp_buf_lit(b, "null");
		return;
	}
	tp_buf_lit(b, "{\"seconds\": ");
	tp_json_double(b, (double)tp_sess.cfg.fl.hang_ns / 1e9);
	tp_buf_lit(b, ", \"dump_signal\": ");
	if (tp_sess.cfg.fl.dump_signal)
		tp_json_str(b, tp_signal_name(tp_sess.cfg.fl.dump_signal));
	else
		tp_buf_lit(b, "null");
	tp_buf_char(b, '}');
}

void tp_flight_put_stats(struct tp_buf *b)
{
	put_hang(b);
	if (!tp_flight_on()) {
		tp_buf_lit(b, ",\n \"flight\": null");
		return;
	}
	tp_buf_lit(b, ",\n \"flight\": {\"seconds\": ");
	tp_json_double(b, (double)tp_sess.cfg.fl.flight_ns / 1e9);
	tp_buf_lit(b, ", \"cap_mb\": ");
	tp_json_u64(b, tp_sess.cfg.fl.flight_mb);
	tp_buf_lit(b, ", \"window_events\": ");
	tp_json_u64(b, F.dumping ? F.events - F.cut_events : F.events);
	tp_buf_lit(b, ", \"window_bytes\": ");
	tp_json_u64(b, F.bytes);
	tp_buf_lit(b, ", \"window_json_bytes\": ");
	tp_json_u64(b, F.json);
	tp_buf_lit(b, ", \"aged_out\": ");
	tp_json_u64(b, F.aged);
	tp_buf_lit(b, ", \"capped_out\": ");
	tp_json_u64(b, F.capped);
	tp_buf_lit(b, ", \"lost_no_memory\": ");
	tp_json_u64(b, F.oom);
	tp_buf_lit(b, ", \"left_out\": ");
	tp_json_u64(b, F.cut_events);
	tp_buf_lit(b, ", \"window_start_us\": ");
	tp_json_us(b, F.cut_ns);
	tp_buf_lit(b, ", \"trigger\": ");
	if (F.dumping)
		tp_json_str(b, F.dumping);
	else
		tp_buf_lit(b, "null");
	tp_buf_char(b, '}');
}

void tp_flight_trigger(const char *why)
{
	__atomic_store_n(&F.why_at, tp_ticks(), __ATOMIC_RELAXED);
	__atomic_store_n(&F.why, why, __ATOMIC_RELEASE);
}

const char *tp_flight_exit_reason(uint64_t *at)
{
	const char *why = __atomic_load_n(&F.why, __ATOMIC_ACQUIRE);

	*at = __atomic_load_n(&F.why_at, __ATOMIC_RELAXED);
	if (!why && tp_sess.cfg.fl.at_exit) {
		why = "exit";
		*at = tp_ticks();
	}
	return why;
}

void tp_flight_dumping(const char *why, uint64_t at)
{
	F.dumping = why;
	if (!why || !tp_tl.ready)
		return;
	tp_flight_evict(at);
	F.cut_ns = tp_trace_ns(at) - (int64_t)tp_sess.cfg.fl.flight_ns;
}

void tp_flight_after_fork(void)
{
	struct chunk *c, *next;

	for (c = F.head; c; c = next) {
		next = c->next;
		free(c);
	}
	if (F.def_ok > 0)
		deflateEnd(&F.def);
	memset(&F, 0, sizeof(F));
	tp_ff_after_fork();
}

uint64_t tp_flight_synced_seq(void)
{
	return F.tail ? F.tail->ff_seq : 0;
}
