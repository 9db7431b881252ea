/* perfetto/: the Perfetto protobuf encoder of typed events: packets,
 * interning, tracks, annotations; on encode/ and below. */
/* The flight recorder's trim of a Perfetto chunk (tev.h: tp_pf_trim):
 * the complete slices that ended before the window are left out, as the
 * JSON window leaves out its X events. The chunk comes from the encoder
 * with absolute timestamps (tp_enc_meta.absolute_ts), so leaving a packet
 * out moves no other packet's time; a complete slice is its SLICE_BEGIN
 * followed at once by its SLICE_END on the same track (perfetto_enc.c);
 * a packet left out that carried interned data is replaced by a packet
 * holding only that data, its sequence and its flags, since later
 * packets of the chunk name those strings by id. */
#include <string.h>

#include "pb.h"
#include "pb_read.h"
#include "perfetto_ids.h"
#include "encode/tev.h"

struct pkt {
	const unsigned char *p, *e;	/* the whole packet, its tag too */
	const unsigned char *body, *idata;
	uint64_t bodylen, idatalen;
	uint64_t ts, seq, type, track;
	int has_ts, is_event;
};

static void track_event(struct pkt *k, const unsigned char *p,
			const unsigned char *e)
{
	const unsigned char *b;
	uint32_t f;
	unsigned w;
	uint64_t v;

	k->is_event = 1;
	while (p < e && tp_pb_get_field(&p, e, &f, &w, &v, &b) == 0) {
		if (f == PF_TE_TYPE && w == TP_PB_VARINT)
			k->type = v;
		else if (f == PF_TE_TRACK_UUID && w == TP_PB_VARINT)
			k->track = v;
	}
}

/* The packet at *p (a Trace.packet field); 0, or -1 at the end. */
static int next_pkt(const unsigned char **p, const unsigned char *e,
		    struct pkt *k)
{
	const unsigned char *q, *b;
	uint32_t f;
	unsigned w;
	uint64_t v;

	memset(k, 0, sizeof(*k));
	k->p = *p;
	if (tp_pb_get_field(p, e, &f, &w, &k->bodylen, &k->body) < 0 ||
	    f != PF_TRACE_PACKET || w != TP_PB_LEN)
		return -1;
	k->e = *p;
	q = k->body;
	while (q < k->e && tp_pb_get_field(&q, k->e, &f, &w, &v, &b) == 0) {
		if (f == PF_PKT_TIMESTAMP && w == TP_PB_VARINT) {
			k->ts = v;
			k->has_ts = 1;
		} else if (f == PF_PKT_SEQ_ID && w == TP_PB_VARINT) {
			k->seq = v;
		} else if (f == PF_PKT_INTERNED_DATA && w == TP_PB_LEN) {
			k->idata = b;
			k->idatalen = v;
		} else if (f == PF_PKT_TRACK_EVENT && w == TP_PB_LEN) {
			track_event(k, b, b + v);
		}
	}
	return 0;
}

/* What is left of a packet left out: its interned data, if any, written
 * at out (never past the packet itself: it is shorter). */
static size_t keep_interned(unsigned char *out, const struct pkt *k)
{
	unsigned char tmp[64];
	size_t n = 0, body;

	if (!k->idata)
		return 0;
	body = 1 + tp_pb_varint_len(k->seq) + 1 +
	       tp_pb_varint_len(k->idatalen) + k->idatalen + 2;
	tmp[n++] = PF_TRACE_PACKET << 3 | TP_PB_LEN;
	n += tp_pb_varint_at(tmp + n, body);
	tmp[n++] = PF_PKT_SEQ_ID << 3 | TP_PB_VARINT;
	n += tp_pb_varint_at(tmp + n, k->seq);
	tmp[n++] = PF_PKT_INTERNED_DATA << 3 | TP_PB_LEN;
	n += tp_pb_varint_at(tmp + n, k->idatalen);
	memcpy(out, tmp, n);
	memmove(out + n, k->idata, k->idatalen);
	n += k->idatalen;
	out[n++] = PF_PKT_SEQUENCE_FLAGS << 3 | TP_PB_VARINT;
	out[n++] = PF_SEQ_NEEDS_INCREMENTAL_STATE;
	return n;
}

size_t tp_pf_trim(char *buf, size_t len, int64_t cut_ns, uint64_t *left)
{
	unsigned char *base = (unsigned char *)buf, *out = base;
	const unsigned char *p = base, *e = base + len;
	struct pkt a, b;
	int have_a;

	have_a = next_pkt(&p, e, &a) == 0;
	while (have_a) {
		int have_b = next_pkt(&p, e, &b) == 0;

		if (have_b && a.is_event && b.is_event &&
		    a.type == PF_TYPE_SLICE_BEGIN &&
		    b.type == PF_TYPE_SLICE_END && a.track == b.track &&
		    b.has_ts && (int64_t)b.ts < cut_ns) {
			(*left)++;
			out += keep_interned(out, &a);
			out += keep_interned(out, &b);
			have_a = next_pkt(&p, e, &a) == 0;
			continue;
		}
		memmove(out, a.p, (size_t)(a.e - a.p));
		out += a.e - a.p;
		a = b;
		have_a = have_b;
	}
	/* a cut packet cannot be: the writer puts whole ones */
	return (size_t)(out - base);
}
