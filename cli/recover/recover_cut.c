/* Cutting a killed writer's stream after its last whole event.
 *
 * A Perfetto stream (.pftrace.gz) is a run of Trace.packet fields, each
 * written whole: it is cut after its last whole packet (or at the synced
 * length, a packet boundary), and the events counted are its TrackEvent
 * packets but slice ends (a complete slice counts once).
 *
 * The writer's JSON is one object (depth 1) holding the "traceEvents"
 * array (depth 2) of events (depth 3 and deeper), written whole, one per
 * line; strings may hold any bracket or brace. A small state machine
 * follows depth and strings across inflated chunks and remembers where
 * the last whole event ended: everything before it is written out at
 * once, the partial rest is kept until the next chunk. */
#define _GNU_SOURCE
#include <errno.h>
#include <string.h>
#include <unistd.h>
#include <zlib.h>

#include "encode/json.h"
#include "perfetto/pb_read.h"
#include "perfetto/perfetto_ids.h"
#include "recover_cut.h"

#define CHUNK (1 << 16)

struct cutter {
	int depth, in_str, esc, in_events, closed;
	int at_limit;		/* limit reached: read no further */
	int pf;			/* a Perfetto packet stream */
	int has_base;		/* pf: base_ns was read */
	int64_t base_ns;
	uint64_t events;
	uint64_t total, limit;	/* inflated bytes; 0: no limit */
	struct tp_buf pend;	/* inflated, not yet written */
	size_t scanned;		/* of pend */
	size_t last;		/* end of the last whole event in pend */
};

static void scan(struct cutter *c)
{
	const char *p = c->pend.p;
	size_t i;

	for (i = c->scanned; i < c->pend.len && !c->closed; i++) {
		char ch = p[i];

		if (c->in_str) {
			if (c->esc)
				c->esc = 0;
			else if (ch == '\\')
				c->esc = 1;
			else if (ch == '"')
				c->in_str = 0;
			continue;
		}
		if (ch == '"') {
			c->in_str = 1;
		} else if (ch == '{' || ch == '[') {
			if (++c->depth == 2 && ch == '[' && !c->in_events) {
				c->in_events = 1;
				c->last = i + 1;	/* the header */
			}
		} else if (ch == '}' || ch == ']') {
			if (--c->depth == 1 && c->in_events) {
				c->closed = 1;		/* the array ended */
			} else if (c->depth == 2 && c->in_events) {
				c->last = i + 1;
				c->events++;
			}
		}
	}
	c->scanned = c->closed ? c->pend.len : i;
}

/* A packet's body: 1 when it holds a TrackEvent other than a slice's
 * end. */
static int pf_is_event(const unsigned char *p, const unsigned char *e)
{
	const unsigned char *b, *q, *qe, *x;
	uint32_t f;
	unsigned w;
	uint64_t v, y;

	while (p < e && tp_pb_get_field(&p, e, &f, &w, &v, &b) == 0) {
		if (f != PF_PKT_TRACK_EVENT || w != 2)
			continue;
		for (q = b, qe = b + v; q < qe &&
		     tp_pb_get_field(&q, qe, &f, &w, &y, &x) == 0;)
			if (f == PF_TE_TYPE && w == 0)
				return y != PF_TYPE_SLICE_END;
		return 1;
	}
	return 0;
}

/* The trace's base (REALTIME at trace time 0) from the first clock
 * snapshot: the trace clock (65) and REALTIME (1) read together. */
static void pf_base(struct cutter *c, const unsigned char *p,
		    const unsigned char *e)
{
	const unsigned char *b, *q, *qe, *x;
	uint64_t v, y, id, ts, rt = 0, tc = 0;
	int have = 0;
	uint32_t f;
	unsigned w;

	while (p < e && tp_pb_get_field(&p, e, &f, &w, &v, &b) == 0) {
		if (f != PF_PKT_CLOCK_SNAPSHOT || w != 2)
			continue;
		for (p = b, e = b + v; p < e &&
		     tp_pb_get_field(&p, e, &f, &w, &v, &b) == 0;) {
			if (f != PF_CS_CLOCKS || w != 2)
				continue;
			id = ts = 0;
			for (q = b, qe = b + v; q < qe &&
			     tp_pb_get_field(&q, qe, &f, &w, &y, &x) == 0;)
				if (f == PF_CLOCK_ID && w == 0)
					id = y;
				else if (f == PF_CLOCK_TIMESTAMP && w == 0)
					ts = y;
			if (id == PF_BUILTIN_CLOCK_REALTIME)
				rt = ts, have |= 1;
			else if (id == PF_CLOCK_TRACE)
				tc = ts, have |= 2;
		}
		break;
	}
	if (have == 3) {
		c->base_ns = (int64_t)(rt - tc);
		c->has_base = 1;
	}
}

static void scan_pf(struct cutter *c)
{
	const unsigned char *s = (const unsigned char *)c->pend.p;
	const unsigned char *p = s + c->scanned, *e = s + c->pend.len, *b;
	uint32_t f;
	unsigned w;
	uint64_t v;

	while (p < e && tp_pb_get_field(&p, e, &f, &w, &v, &b) == 0) {
		if (f != PF_TRACE_PACKET || w != 2) {
			c->closed = 1;	/* not ours: read no further */
			break;
		}
		c->events += pf_is_event(b, b + v);
		if (!c->has_base)
			pf_base(c, b, b + v);
		c->scanned = (size_t)(p - s);
		c->last = c->scanned;
	}
}

/* Writes what is known whole and keeps the rest. */
static int emit(struct cutter *c, struct tp_gz *out)
{
	if (!c->last)
		return 0;
	if (tp_gz_write(out, c->pend.p, c->last) < 0) {
		errno = out->err ? out->err : EIO;
		return -1;
	}
	memmove(c->pend.p, c->pend.p + c->last, c->pend.len - c->last);
	c->pend.len -= c->last;
	c->scanned -= c->last;
	c->last = 0;
	return 0;
}

/* One chunk of input inflated into pend, scanned and emitted. Returns
 * zlib's last code. */
static int take(struct cutter *c, z_stream *zs, struct tp_gz *out, int *err)
{
	size_t n;
	int rc;

	do {
		if (tp_buf_reserve(&c->pend, CHUNK)) {
			*err = ENOMEM;
			return Z_MEM_ERROR;
		}
		zs->next_out = (Bytef *)c->pend.p + c->pend.len;
		zs->avail_out = CHUNK;
		rc = inflate(zs, Z_SYNC_FLUSH);
		n = CHUNK - zs->avail_out;
		if (c->limit && c->total + n >= c->limit) {
			n = (size_t)(c->limit - c->total);
			c->at_limit = 1;
		}
		c->total += n;
		c->pend.len += n;
		if (c->pf)
			scan_pf(c);
		else
			scan(c);
		if (emit(c, out) < 0) {
			*err = errno;
			return Z_ERRNO;
		}
	} while (rc == Z_OK && zs->avail_out == 0 && !c->at_limit);
	return rc == Z_BUF_ERROR ? Z_OK : rc;	/* Z_BUF_ERROR: more input */
}

int tp_recover_cut(int fd, struct tp_gz *out, struct tp_cut_result *r)
{
	return tp_recover_cut_at(fd, out, 0, r);
}

int tp_recover_cut_at(int fd, struct tp_gz *out, uint64_t limit,
		      struct tp_cut_result *r)
{
	return tp_recover_cut_as(fd, out, limit, 0, r);
}

int tp_recover_cut_as(int fd, struct tp_gz *out, uint64_t limit, int pf,
		      struct tp_cut_result *r)
{
	unsigned char in[CHUNK];
	struct cutter c;
	z_stream zs;
	ssize_t n = 0;
	int rc = Z_OK, err = 0;

	memset(&c, 0, sizeof(c));
	memset(&zs, 0, sizeof(zs));
	c.limit = limit;
	c.pf = pf;
	if (inflateInit2(&zs, 16 + MAX_WBITS) != Z_OK) {
		errno = ENOMEM;
		return -1;
	}
	while (rc == Z_OK && !c.at_limit &&
	       (n = read(fd, in, sizeof(in))) > 0) {
		zs.next_in = in;
		zs.avail_in = (uInt)n;
		rc = take(&c, &zs, out, &err);
	}
	if (n < 0)
		err = errno;
	r->events = c.events;
	r->bytes_cut = c.pend.len;
	r->ended = rc == Z_STREAM_END && !c.at_limit;
	r->base_ns = c.base_ns;
	r->has_base = c.has_base;
	inflateEnd(&zs);
	tp_buf_free(&c.pend);
	if (err) {
		errno = err;
		return -1;
	}
	return 0;
}
