/* The Perfetto reader's clocks (pftrace_int.h), as trace_processor
 * reads them (src/trace_processor/importers/proto/proto_trace_reader.cc,
 * importers/common/clock_tracker.h): ClockSnapshots relate clocks;
 * sequence-scoped clocks (ids 64-127) belong to their sequence and are
 * not reset when it clears its incremental state; an incremental
 * clock's timestamps are deltas from its last value, which its snapshot
 * sets; unit_multiplier_ns scales them. JSON's time is REALTIME when the
 * first snapshot has it, else the trace clock (primary_trace_clock, else
 * BOOTTIME). Calls pftrace_seq.c. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pftrace_int.h"

#define BUILTIN_REALTIME 1

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

int pfr_clock_snapshot(struct tp_pfr *r, struct pfr_seq *s, struct pbr c)
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
int64_t pfr_packet_ts(struct tp_pfr *r, struct pfr_seq *s, uint32_t cid,
			 uint64_t raw)
{
	struct pfr_clock *c = clock_get(r, s, cid, 0);
	int64_t v;

	if (!c) {
		r->notes[PFR_NOTE_NO_CLOCK]++;
		return (int64_t)raw;
	}
	/* Wrapping sums: a corrupt trace's deltas may pass 2^63 (signed
	 * overflow is undefined; found by fuzz_pftrace). */
	v = (int64_t)(raw * (c->mult ? c->mult : 1));
	if (c->incremental) {
		v = (int64_t)((uint64_t)v + (uint64_t)c->last);
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
	return (int64_t)((uint64_t)c->ref_out +
			 ((uint64_t)v - (uint64_t)c->ref_c));
}
