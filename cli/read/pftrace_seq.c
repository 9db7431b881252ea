/* The Perfetto reader's base (pftrace_int.h): its error, packet
 * sequences with their interned strings (InternedData per
 * trusted_packet_sequence_id, emptied when the sequence clears its
 * incremental state, within PFR_INTERN_MAX strings and PFR_INTERN_BYTES
 * bytes in all), and the start of each JSON event. Calls only
 * encode/json.h: every other file of the reader calls down into it. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pftrace_int.h"

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

void pfr_seq_clear(struct tp_pfr *r, struct pfr_seq *s)
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

/* Sequences */

struct pfr_seq *pfr_seq_get(struct tp_pfr *r, uint32_t id)
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
	pfr_put(&s->strs, (const char *)str, len);
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
int pfr_interned_data(struct tp_pfr *r, struct pfr_seq *s, struct pbr c)
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

/* Wrapping: a corrupt trace's times may be anywhere (signed overflow
 * is undefined; found by fuzz_pftrace). */
int64_t pfr_json_ts(const struct tp_pfr *r, int64_t t)
{
	return (int64_t)((uint64_t)t - (uint64_t)r->base);
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
