/* The Perfetto reader (pftrace_read.h): Trace framing, packets,
 * sequences with their interned data and defaults, and clocks. The
 * semantics are Perfetto's (protos/perfetto/trace/trace_packet.proto and
 * src/trace_processor/importers/proto/proto_trace_reader.cc):
 *
 * - each trusted_packet_sequence_id has its own incremental state:
 *   interned strings, TracePacketDefaults and sequence-scoped clocks
 *   (ids 64-127); SEQ_INCREMENTAL_STATE_CLEARED (or
 *   incremental_state_cleared) empties it; a packet with
 *   SEQ_NEEDS_INCREMENTAL_STATE on a sequence whose state was never
 *   cleared is skipped, as trace_processor does;
 * - a packet's timestamp is on timestamp_clock_id, else its sequence's
 *   default, else the trace clock (primary_trace_clock, else BOOTTIME);
 *   an incremental clock's timestamps are deltas from its last value,
 *   starting at its ClockSnapshot value; ClockSnapshots relate clocks, and
 *   every timestamp is turned into REALTIME when a snapshot relates its
 *   clock to it (else into the trace clock), so traces from different
 *   hosts line up.
 *
 * Calls pftrace_tracks.c and pftrace_event.c (and trace/json.h). */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pftrace_int.h"

#define BUILTIN_REALTIME 1
#define BUILTIN_BOOTTIME 6

int pfr_fail(struct tp_pfr *r, const uint8_t *at, const char *fmt, ...)
{
	uint64_t off = r->pkt_off;
	va_list ap;
	int n;

	if (r->failed)
		return -1;
	if (at && r->pkt.p && at >= (const uint8_t *)r->pkt.p &&
	    at <= (const uint8_t *)r->pkt.p + r->pkt.len)
		off += (uint64_t)(at - (const uint8_t *)r->pkt.p);
	n = snprintf(r->err, sizeof(r->err), "offset %llu: ",
		     (unsigned long long)off);
	va_start(ap, fmt);
	vsnprintf(r->err + n, sizeof(r->err) - (size_t)n, fmt, ap);
	va_end(ap);
	r->failed = 1;
	return -1;
}

int tp_pfr_sniff(const void *head, size_t n)
{
	const unsigned char *p = head;
	size_t i;

	if (!n || p[0] != 0x0a)
		return 0;
	for (i = 0; i < n; i++) {
		if (p[i] == ' ' || p[i] == '\t' || p[i] == '\r' ||
		    p[i] == '\n')
			continue;
		return p[i] != '{' && p[i] != '[';
	}
	return 0;
}

struct tp_pfr *tp_pfr_new(tp_pfr_read_fn read, void *ctx)
{
	struct tp_pfr *r = calloc(1, sizeof(*r));

	if (!r)
		return NULL;
	r->read = read;
	r->ctx = ctx;
	r->trace_clock = BUILTIN_BOOTTIME;
	r->out_clock = PFR_OUT_CLOCK_NONE;
	return r;
}

static void seq_clear(struct tp_pfr *r, struct pfr_seq *s)
{
	r->interned -= s->n;
	r->intern_bytes -= s->strs.len;
	free(s->tab);
	s->tab = NULL;
	s->cap = s->n = 0;
	s->strs.len = 0;
	s->has_def_clock = s->has_def_track = 0;
	/* Its clocks are not incremental state: trace_processor keeps
	 * sequence-scoped clocks in its clock tracker across clears. */
}

void tp_pfr_free(struct tp_pfr *r)
{
	uint32_t i;

	if (!r)
		return;
	for (i = 0; i < r->nseqs; i++) {
		seq_clear(r, &r->seqs[i]);
		tp_buf_free(&r->seqs[i].strs);
	}
	free(r->seqs);
	pfr_tracks_free(r);
	free(r->flows);
	free(r->trailer);
	tp_buf_free(&r->pkt);
	tp_buf_free(&r->out);
	tp_buf_free(&r->scratch);
	tp_buf_free(&r->head);
	tp_buf_free(&r->jcopy);
	free(r);
}

const char *tp_pfr_error(const struct tp_pfr *r)
{
	return r->failed && r->err[0] ? r->err : NULL;
}

int tp_pfr_note(const struct tp_pfr *r, int k, char *buf, size_t len)
{
	static const char *const what[PFR_NOTE_KINDS] = {
		"SLICE_END events with no slice open on their track "
		"(left out)",
		"SLICE_BEGIN events never ended (written as \"B\" events)",
		"packets needing incremental state on a sequence that never "
		"cleared it (skipped, as Perfetto does)",
		"interned ids never defined on their sequence (names left "
		"empty)",
		"timestamps on a clock no ClockSnapshot relates to the trace "
		"clock (taken as they are)",
		"TrackEvents of a type JSON has no form for (skipped)",
	};

	if (k < 0 || k >= PFR_NOTE_KINDS || !r->notes[k])
		return 0;
	snprintf(buf, len, "Perfetto: %llu %s",
		 (unsigned long long)r->notes[k], what[k]);
	return 1;
}

/* Sequences */

static struct pfr_seq *seq_get(struct tp_pfr *r, uint32_t id)
{
	struct pfr_seq *ns;
	uint32_t i;

	for (i = 0; i < r->nseqs; i++)
		if (r->seqs[i].id == id)
			return &r->seqs[i];
	if (r->nseqs == PFR_SEQS_MAX) {
		pfr_fail(r, NULL, "more than %u packet sequences (the "
			 "reader's bound)", PFR_SEQS_MAX);
		return NULL;
	}
	if (r->nseqs == r->capseqs) {
		uint32_t cap = r->capseqs ? r->capseqs * 2 : 8;

		ns = realloc(r->seqs, cap * sizeof(*ns));
		if (!ns) {
			pfr_fail(r, NULL, "out of memory");
			return NULL;
		}
		r->seqs = ns;
		r->capseqs = cap;
	}
	ns = &r->seqs[r->nseqs++];
	memset(ns, 0, sizeof(*ns));
	ns->id = id;
	return ns;
}

static uint64_t ikey(int kind, uint64_t iid)
{
	return iid << 2 | (uint64_t)kind;
}

static uint32_t ihash(uint64_t k, uint32_t cap)
{
	k *= 0x9e3779b97f4a7c15ull;
	return (uint32_t)(k >> 32) & (cap - 1);
}

static int intern_grow(struct tp_pfr *r, struct pfr_seq *s)
{
	uint32_t cap = s->cap ? s->cap * 2 : 64, i, h;
	struct pfr_ient *t = calloc(cap, sizeof(*t));

	if (!t)
		return pfr_fail(r, NULL, "out of memory");
	for (i = 0; i < s->cap; i++) {
		if (!s->tab[i].key)
			continue;
		for (h = ihash(s->tab[i].key, cap); t[h].key;
		     h = (h + 1) & (cap - 1))
			;
		t[h] = s->tab[i];
	}
	free(s->tab);
	s->tab = t;
	s->cap = cap;
	return 0;
}

/* Defines (or redefines) an interned string of the sequence. */
static int intern_put(struct tp_pfr *r, struct pfr_seq *s, int kind,
		      uint64_t iid, const uint8_t *str, size_t len)
{
	uint64_t k = ikey(kind, iid);
	uint32_t h;

	if (!iid || iid >> 60)
		return 0;	/* iid 0 means "none": never looked up */
	if (r->interned >= PFR_INTERN_MAX ||
	    r->intern_bytes + len > PFR_INTERN_BYTES)
		return pfr_fail(r, str, "more than %u interned strings or "
				"%u MiB of them (the reader's bound)",
				PFR_INTERN_MAX, PFR_INTERN_BYTES >> 20);
	if ((s->n + 1) * 2 > s->cap && intern_grow(r, s))
		return -1;
	for (h = ihash(k, s->cap); s->tab[h].key && s->tab[h].key != k;
	     h = (h + 1) & (s->cap - 1))
		;
	if (!s->tab[h].key) {
		s->n++;
		r->interned++;
	}
	s->tab[h].key = k;
	s->tab[h].off = (uint32_t)s->strs.len;
	s->tab[h].len = (uint32_t)len;
	tp_buf_put(&s->strs, (const char *)str, len);
	r->intern_bytes += len;
	if (s->strs.oom)
		return pfr_fail(r, NULL, "out of memory");
	return 0;
}

int pfr_intern_get(struct tp_pfr *r, struct pfr_seq *s, int kind,
		   uint64_t iid, const char **str, size_t *len)
{
	uint64_t k = ikey(kind, iid);
	uint32_t h;

	if (s && s->cap && iid && !(iid >> 60)) {
		for (h = ihash(k, s->cap); s->tab[h].key;
		     h = (h + 1) & (s->cap - 1)) {
			if (s->tab[h].key != k)
				continue;
			*str = s->strs.p + s->tab[h].off;
			*len = s->tab[h].len;
			return 0;
		}
	}
	r->notes[PFR_NOTE_BAD_IID]++;
	*str = "";
	*len = 0;
	return -1;
}

/* InternedData: EventCategory/EventName/DebugAnnotationName (iid 1,
 * name 2) and InternedString (iid 1, str 2) entries. */
static int interned_data(struct tp_pfr *r, struct pfr_seq *s, struct pbr c)
{
	static const int kinds[] = {
		[1] = PI_CAT + 1, [2] = PI_NAME + 1, [3] = PI_ANAME + 1,
		[29] = PI_STR + 1,
	};
	struct pbr_field f, g;
	const char *why;
	int rc;

	while ((rc = pbr_next(&c, &f, &why)) > 0) {
		uint64_t iid = 0;
		const uint8_t *str = NULL;
		size_t len = 0;
		int kind;

		if (f.num >= sizeof(kinds) / sizeof(kinds[0]) ||
		    !kinds[f.num] || f.wt != PBR_LEN)
			continue;
		kind = kinds[f.num] - 1;
		while ((rc = pbr_next(&f.sub, &g, &why)) > 0) {
			if (g.num == 1 && g.wt == PBR_VARINT)
				iid = g.v;
			else if (g.num == 2 && g.wt == PBR_LEN) {
				str = g.sub.p;
				len = (size_t)(g.sub.end - g.sub.p);
			}
		}
		if (rc < 0)
			return pfr_fail(r, f.sub.p, "interned data: %s", why);
		if (intern_put(r, s, kind, iid, str ? str : (const uint8_t *)"",
			       len))
			return -1;
	}
	return rc < 0 ? pfr_fail(r, c.p, "interned data: %s", why) : 0;
}

/* Clocks */

static struct pfr_clock *clock_get(struct tp_pfr *r, struct pfr_seq *s,
				   uint32_t id, int make)
{
	struct pfr_clock *c;
	uint32_t i;

	if (id < PFR_GLOBAL_CLOCKS) {
		c = &r->gclk[id];
		c->id = id;
		return c;
	}
	if (id >= 128)		/* a global clock past the builtins */
		return NULL;
	for (i = 0; i < s->nclk; i++)
		if (s->clk[i].id == id)
			return &s->clk[i];
	if (!make || s->nclk == PFR_SEQ_CLOCKS)
		return NULL;
	c = &s->clk[s->nclk++];
	memset(c, 0, sizeof(*c));
	c->id = id;
	return c;
}

struct snap_clock {
	uint32_t id;
	int inc;
	uint64_t ts, mult;
};

#define SNAP_MAX 32

static int snap_read(struct tp_pfr *r, struct pbr c, struct snap_clock *k,
		     int *n, uint32_t *primary)
{
	struct pbr_field f, g;
	const char *why;
	int rc;

	*n = 0;
	while ((rc = pbr_next(&c, &f, &why)) > 0) {
		if (f.num == 2 && f.wt == PBR_VARINT)
			*primary = (uint32_t)f.v;
		if (f.num != 1 || f.wt != PBR_LEN || *n == SNAP_MAX)
			continue;
		memset(&k[*n], 0, sizeof(k[*n]));
		k[*n].mult = 1;
		while ((rc = pbr_next(&f.sub, &g, &why)) > 0) {
			if (g.wt != PBR_VARINT)
				continue;
			if (g.num == 1)
				k[*n].id = (uint32_t)g.v;
			else if (g.num == 2)
				k[*n].ts = g.v;
			else if (g.num == 3)
				k[*n].inc = g.v != 0;
			else if (g.num == 4 && g.v)
				k[*n].mult = g.v;
		}
		if (rc < 0)
			break;
		(*n)++;
	}
	return rc < 0 ? pfr_fail(r, c.p, "clock snapshot: %s", why) : 0;
}

/* The output clock and the JSON's base time, from the first snapshot:
 * REALTIME when it has it. The base keeps the trace's own origin when the
 * snapshot also holds an absolute sequence clock (tprof's trace clock:
 * REALTIME = base + its value), else it is REALTIME floored to 10^14 ns,
 * as tprof's traces' are. */
static void first_snapshot(struct tp_pfr *r, const struct snap_clock *k,
			   int n)
{
	int i, rt = -1, seq = -1;

	for (i = 0; i < n; i++) {
		if (k[i].id == BUILTIN_REALTIME)
			rt = i;
		else if (k[i].id >= 64 && k[i].id < 128 && !k[i].inc &&
			 seq < 0)
			seq = i;
	}
	if (rt < 0) {
		r->out_clock = r->trace_clock;
		return;
	}
	r->out_clock = BUILTIN_REALTIME;
	if (r->have_base || r->state)	/* events already written */
		return;
	r->have_base = 1;
	if (seq >= 0 && k[rt].ts >= k[seq].ts * k[seq].mult)
		r->base = (int64_t)(k[rt].ts - k[seq].ts * k[seq].mult);
	else
		r->base = (int64_t)(k[rt].ts / 100000000000000ull *
				    100000000000000ull);
}

static int clock_snapshot(struct tp_pfr *r, struct pfr_seq *s, struct pbr c)
{
	struct snap_clock k[SNAP_MAX];
	uint32_t primary = 0;
	int n, i, o = -1;

	if (snap_read(r, c, k, &n, &primary))
		return -1;
	if (primary)
		r->trace_clock = primary;
	if (r->out_clock == PFR_OUT_CLOCK_NONE)
		first_snapshot(r, k, n);
	for (i = 0; i < n; i++)
		if (k[i].id == r->out_clock)
			o = i;
	for (i = 0; i < n; i++) {
		struct pfr_clock *cl = clock_get(r, s, k[i].id, 1);
		int64_t v = (int64_t)(k[i].ts * k[i].mult);

		if (!cl)
			continue;
		cl->incremental = k[i].inc;
		cl->mult = k[i].mult;
		cl->last = v;
		if (o >= 0) {
			cl->has_ref = 1;
			cl->ref_c = v;
			cl->ref_out = (int64_t)(k[o].ts * k[o].mult);
		}
	}
	return 0;
}

/* A packet's timestamp in the output clock's ns. */
static int64_t packet_ts(struct tp_pfr *r, struct pfr_seq *s, uint32_t cid,
			 uint64_t raw)
{
	struct pfr_clock *c = clock_get(r, s, cid, 0);
	int64_t v;

	if (!c) {
		r->notes[PFR_NOTE_NO_CLOCK]++;
		return (int64_t)raw;
	}
	v = (int64_t)(raw * (c->mult ? c->mult : 1));
	if (c->incremental) {
		v += c->last;
		c->last = v;
	}
	if (cid == r->out_clock)
		return v;
	if (!c->has_ref) {
		if (cid != r->trace_clock ||
		    r->out_clock != PFR_OUT_CLOCK_NONE)
			r->notes[PFR_NOTE_NO_CLOCK]++;
		return v;
	}
	return c->ref_out + (v - c->ref_c);
}

int64_t pfr_json_ts(const struct tp_pfr *r, int64_t t)
{
	return t - r->base;
}

/* Output */

void pfr_begin_event(struct tp_pfr *r)
{
	if (!r->state) {
		tp_buf_lit(&r->out, "{\"schemaVersion\": 1, "
			   "\"displayTimeUnit\": \"ms\", "
			   "\"baseTimeNanoseconds\": ");
		tp_json_i64(&r->out, r->base);
		tp_buf_lit(&r->out, ",\n\"traceEvents\": [\n");
		r->state = 1;
	}
	if (r->nevents++)
		tp_buf_lit(&r->out, ",\n");
}

static void finish(struct tp_pfr *r)
{
	pfr_close_open(r);
	pfr_names(r);
	if (!r->state) {
		pfr_begin_event(r);
		r->nevents = 0;
	}
	tp_buf_lit(&r->out, "\n]");
	if (r->trailer_len) {
		tp_buf_lit(&r->out, ",\n");
		tp_buf_put(&r->out, r->trailer, r->trailer_len);
	}
	tp_buf_lit(&r->out, "}\n");
	r->state = 2;
}

/* Packets */

struct pkt {
	uint64_t ts;
	int has_ts, has_clock;
	uint32_t clock, seq, flags;
	int cleared;
	struct pbr te, defaults, interned, snapshot, descriptor;
	int has_te, has_defaults, has_interned, has_snapshot, has_descriptor;
};

static int pkt_scan(struct tp_pfr *r, struct pbr c, struct pkt *k)
{
	struct pbr_field f;
	const char *why;
	int rc;

	memset(k, 0, sizeof(*k));
	while ((rc = pbr_next(&c, &f, &why)) > 0) {
		int len = f.wt == PBR_LEN, var = f.wt == PBR_VARINT;

		switch (f.num) {
		case 8: k->ts = f.v; k->has_ts = var; break;
		case 58: k->clock = (uint32_t)f.v; k->has_clock = var; break;
		case 10: k->seq = (uint32_t)f.v; break;
		case 13: k->flags = (uint32_t)f.v; break;
		case 41: k->cleared |= var && f.v; break;
		case 11: k->te = f.sub; k->has_te = len; break;
		case 59: k->defaults = f.sub; k->has_defaults = len; break;
		case 12: k->interned = f.sub; k->has_interned = len; break;
		case 6: k->snapshot = f.sub; k->has_snapshot = len; break;
		case 60: k->descriptor = f.sub; k->has_descriptor = len; break;
		}
	}
	return rc < 0 ? pfr_fail(r, c.p, "TracePacket: %s", why) : 0;
}

static int defaults(struct tp_pfr *r, struct pfr_seq *s, struct pbr c)
{
	struct pbr_field f, g;
	const char *why;
	int rc;

	while ((rc = pbr_next(&c, &f, &why)) > 0) {
		if (f.num == 58 && f.wt == PBR_VARINT) {
			s->has_def_clock = 1;
			s->def_clock = (uint32_t)f.v;
		}
		if (f.num != 11 || f.wt != PBR_LEN)
			continue;
		while ((rc = pbr_next(&f.sub, &g, &why)) > 0)
			if (g.num == 11 && g.wt == PBR_VARINT) {
				s->has_def_track = 1;
				s->def_track = g.v;
			}
		if (rc < 0)
			break;
	}
	return rc < 0 ? pfr_fail(r, c.p, "TracePacketDefaults: %s", why) : 0;
}

static int packet(struct tp_pfr *r)
{
	struct pbr c = pbr_make(r->pkt.p, r->pkt.len);
	struct pfr_seq *s;
	struct pkt k;
	uint32_t cid;
	int64_t ts;

	if (pkt_scan(r, c, &k))
		return -1;
	s = seq_get(r, k.seq);
	if (!s)
		return -1;
	if (k.cleared || (k.flags & 1)) {
		seq_clear(r, s);
		s->valid = 1;
	}
	if ((k.flags & 2) && !s->valid) {
		r->notes[PFR_NOTE_NEEDS_STATE]++;
		return 0;
	}
	if (k.has_defaults && defaults(r, s, k.defaults))
		return -1;
	if (k.has_interned && s->valid && interned_data(r, s, k.interned))
		return -1;
	if (k.has_snapshot)
		return clock_snapshot(r, s, k.snapshot);
	if (k.has_descriptor && pfr_descriptor(r, k.descriptor))
		return -1;
	if (!k.has_te)
		return 0;
	cid = k.has_clock ? k.clock :
	      s->has_def_clock ? s->def_clock : r->trace_clock;
	ts = packet_ts(r, s, cid, k.ts);
	return pfr_track_event(r, s, k.te, ts);
}

/* Framing: Trace's field 1 (a TracePacket) by length; other top-level
 * fields are skipped by their wire type. */

static int in_byte(struct tp_pfr *r)
{
	ssize_t n;

	if (r->in_pos == r->in_len) {
		if (r->in_eof)
			return -1;
		n = r->read(r->ctx, r->in, sizeof(r->in));
		if (n < 0) {
			r->failed = 1;	/* the reader's error */
			r->err[0] = 0;
			return -2;
		}
		if (n == 0) {
			r->in_eof = 1;
			return -1;
		}
		r->in_pos = 0;
		r->in_len = (size_t)n;
	}
	r->off++;
	return r->in[r->in_pos++];
}

/* 0, 1 at a clean end (only before the first byte), -1 on error. */
static int in_varint(struct tp_pfr *r, uint64_t *v, int first)
{
	int shift, b;

	*v = 0;
	for (shift = 0; shift < 70; shift += 7) {
		b = in_byte(r);
		if (b == -2)
			return -1;
		if (b < 0) {
			if (first && !shift)
				return 1;
			return pfr_fail(r, NULL, "truncated varint at the "
					"end of the file");
		}
		*v |= (uint64_t)(b & 0x7f) << (shift < 64 ? shift : 63);
		if (!(b & 0x80))
			return 0;
	}
	return pfr_fail(r, NULL, "varint longer than 10 bytes");
}

/* n bytes into r->pkt (or dropped when keep is 0). */
static int in_bytes(struct tp_pfr *r, uint64_t n, int keep)
{
	size_t take;

	r->pkt.len = 0;
	while (n) {
		if (r->in_pos == r->in_len) {
			int b = in_byte(r);

			if (b == -2)
				return -1;
			if (b < 0)
				return pfr_fail(r, NULL, "truncated packet: "
						"%llu bytes missing at the end "
						"of the file",
						(unsigned long long)n);
			r->in_pos--;
			r->off--;
		}
		take = r->in_len - r->in_pos;
		if (take > n)
			take = (size_t)n;
		if (keep) {
			tp_buf_put(&r->pkt, (const char *)r->in + r->in_pos,
				   take);
			if (r->pkt.oom)
				return pfr_fail(r, NULL, "out of memory");
		}
		r->in_pos += take;
		r->off += take;
		n -= take;
	}
	return 0;
}

/* The next packet into r->pkt: 0, 1 at the end, -1 on error. */
static int next_packet(struct tp_pfr *r)
{
	uint64_t tag, v, start;
	int rc;

	for (;;) {
		start = r->off;
		r->pkt_off = start;
		rc = in_varint(r, &tag, 1);
		if (rc)
			return rc;
		r->pkt.len = 0;	/* errors name the field's offset */
		if (!(tag >> 3) || tag >> 32)
			return pfr_fail(r, NULL, "bad field number in the "
					"Trace message");
		switch (tag & 7) {
		case PBR_VARINT:
			if (in_varint(r, &v, 0))
				return -1;
			continue;
		case PBR_I64:
		case PBR_I32:
			if (in_bytes(r, (tag & 7) == PBR_I64 ? 8 : 4, 0))
				return -1;
			continue;
		case PBR_LEN:
			break;
		default:
			return pfr_fail(r, NULL, "unsupported wire type %d in "
					"the Trace message", (int)(tag & 7));
		}
		if (in_varint(r, &v, 0))
			return -1;
		if ((tag >> 3) != 1) {
			if (in_bytes(r, v, 0))
				return -1;
			continue;
		}
		if (v > PFR_PACKET_MAX)
			return pfr_fail(r, NULL, "a TracePacket of %llu bytes "
					"(more than the reader's bound, %u "
					"MiB)", (unsigned long long)v,
					PFR_PACKET_MAX >> 20);
		if (in_bytes(r, v, 1))
			return -1;
		r->pkt_off = r->off - v;
		return 0;
	}
}

ssize_t tp_pfr_read(struct tp_pfr *r, void *buf, size_t len)
{
	size_t have;
	int rc;

	while (r->out_pos == r->out.len) {
		r->out.len = r->out_pos = 0;
		if (r->failed)
			return -1;
		if (r->state == 2)
			return 0;
		rc = next_packet(r);
		if (rc < 0)
			return -1;
		if (rc > 0)
			finish(r);
		else if (packet(r))
			return -1;
		if (r->out.oom) {
			pfr_fail(r, NULL, "out of memory");
			return -1;
		}
	}
	have = r->out.len - r->out_pos;
	if (have > len)
		have = len;
	memcpy(buf, r->out.p + r->out_pos, have);
	r->out_pos += have;
	return (ssize_t)have;
}
