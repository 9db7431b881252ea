/* The Perfetto reader (pftrace_read.h): its interface, Trace framing and
 * the dispatch of each packet's parts. The
 * semantics are Perfetto's (protos/perfetto/trace/trace_packet.proto and
 * src/trace_processor/importers/proto/proto_trace_reader.cc):
 *
 * - each trusted_packet_sequence_id has its own incremental state:
 *   interned strings and TracePacketDefaults (sequence-scoped clocks,
 *   ids 64-127, are the sequence's too but outlive a clear, as in
 *   trace_processor); SEQ_INCREMENTAL_STATE_CLEARED (or
 *   incremental_state_cleared) empties it; a packet with
 *   SEQ_NEEDS_INCREMENTAL_STATE on a sequence whose state was never
 *   cleared is skipped, as trace_processor does;
 * - previous_packet_dropped says packets of its sequence were lost
 *   before it: the sequence's incremental state is no longer valid
 *   (until cleared again, as in trace_processor), and no slice begun on
 *   that sequence before the loss is paired with an end after it (its
 *   end may be among the lost; an end that comes later would pair with
 *   the wrong slice): those slices are left out and counted;
 * - a packet's timestamp is on timestamp_clock_id, else its sequence's
 *   default, else the trace clock (primary_trace_clock, else BOOTTIME);
 *   an incremental clock's timestamps are deltas from its last value,
 *   starting at its ClockSnapshot value; ClockSnapshots relate clocks, and
 *   every timestamp is turned into REALTIME when a snapshot relates its
 *   clock to it (else into the trace clock), so traces from different
 *   hosts line up.
 *
 * Calls pftrace_event.c, pftrace_tracks.c, pftrace_clock.c and
 * pftrace_seq.c (and encode/json.h). */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pftrace_int.h"

#define BUILTIN_BOOTTIME 6

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


void tp_pfr_free(struct tp_pfr *r)
{
	uint32_t i;

	if (!r)
		return;
	for (i = 0; i < r->nseqs; i++) {
		pfr_seq_clear(r, &r->seqs[i]);
		tp_buf_free(&r->seqs[i].strs);
	}
	free(r->seqs);
	pfr_tracks_free(r);
	free(r->flows.keys);
	free(r->folded.keys);
	free(r->ended);
	pfr_pend_free(r);
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
		"TrackEvents of a type JSON has no form for, or counter "
		"values on a track that is no counter (skipped)",
		"TrackEvents more than 73 years (2^61 ns) from the trace's "
		"base (skipped)",
		"slices open when packets of their sequence were lost "
		"(previous_packet_dropped): left out, never paired with an "
		"end after the loss",
	};

	if (k < 0 || k >= PFR_NOTE_KINDS || !r->notes[k])
		return 0;
	snprintf(buf, len, "Perfetto: %llu %s",
		 (unsigned long long)r->notes[k], what[k]);
	return 1;
}

/* Output */
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
		pfr_put(&r->out, r->trailer, r->trailer_len);
	}
	tp_buf_lit(&r->out, "}\n");
	r->state = 2;
}

/* Packets */

struct pkt {
	uint64_t ts;
	int has_ts, has_clock;
	uint32_t clock, seq, flags;
	int cleared, lost;
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
		case 42: k->lost |= var && f.v; break;
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
	s = pfr_seq_get(r, k.seq);
	if (!s)
		return -1;
	if (k.lost)
		pfr_seq_lost(r, s);
	if (k.cleared || (k.flags & 1)) {
		pfr_seq_clear(r, s);
		s->valid = 1;
	}
	if ((k.flags & 2) && !s->valid) {
		r->notes[PFR_NOTE_NEEDS_STATE]++;
		return 0;
	}
	if (k.has_defaults && defaults(r, s, k.defaults))
		return -1;
	if (k.has_interned && s->valid && pfr_interned_data(r, s, k.interned))
		return -1;
	if (k.has_snapshot)
		return pfr_clock_snapshot(r, s, k.snapshot);
	if (k.has_descriptor && pfr_descriptor(r, k.descriptor))
		return -1;
	if (!k.has_te)
		return 0;
	cid = k.has_clock ? k.clock :
	      s->has_def_clock ? s->def_clock : r->trace_clock;
	ts = pfr_packet_ts(r, s, cid, k.ts);
	r->cur_seq = s->id;
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
			pfr_put(&r->pkt, (const char *)r->in + r->in_pos,
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
	pfr_copy(buf, r->out.p + r->out_pos, have);
	r->out_pos += have;
	return (ssize_t)have;
}
