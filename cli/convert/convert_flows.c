/* JSON's flows that fan out, as Perfetto flows.
 *
 * A JSON flow start ("s") links to every end ("f") of its id: a graph
 * launch's "s" to each of the graph's kernels. A Perfetto flow has one
 * start and one end, so the importer would link the first end alone. As
 * the library does for its own launches, the k-th end after the first
 * ends a flow of its own (encode/flow_ids.h), begun by an instant at the
 * start's place and time (the importer sorts it there).
 *
 * JSON matches a flow's events by id, category and name (Perfetto's
 * JSON importer too: FlowTracker::GetFlowIdForV1Event); Perfetto's
 * flow ids are ids alone. Kineto's "fwdbwd" ids (sequence numbers) and
 * "ac2g" ids (correlation ids) share small numbers, so a flow of any
 * category but "ac2g" carries a 16-bit tag of its category and name in
 * its id's top bits (a JSON id below 2^48); read back, such ids keep the
 * tag (they only pair a flow's events).
 *
 * Bounded: a direct-mapped table of starts. A start pushed out by
 * another id of the same slot leaves its later ends on the base id, as
 * before this (the importer links the first). */
#include <stdlib.h>
#include <string.h>

#include "convert_flows.h"
#include "encode/flow_ids.h"
#include "util/fnv.h"

#define SLOTS (1u << 16)

struct slot {
	uint64_t id;
	struct tp_tev_track track;
	int64_t ts_ns;
	uint32_t ends;
	int used;
};

struct tp_conv_flows {
	struct slot s[SLOTS];
};

struct tp_conv_flows *tp_conv_flows_new(void)
{
	return calloc(1, sizeof(struct tp_conv_flows));
}

void tp_conv_flows_free(struct tp_conv_flows *f)
{
	free(f);
}

static uint64_t tag_of(const struct tp_tev *ev)
{
	static const unsigned char sep = 0xff;	/* cat "ab" name "c" != "a" "bc" */
	uint32_t h = tp_fnv1a(TP_FNV1A_INIT, ev->cat, ev->catlen);

	h = tp_fnv1a(h, &sep, 1);
	h = tp_fnv1a(h, ev->name, ev->namelen);
	return (uint64_t)((h ^ h >> 16) % 0xffffu + 1) << TP_FLOW_TAG_SHIFT;
}

/* The Perfetto id of a JSON flow event's (id, category, name). */
static void tag(struct tp_tev *ev)
{
	static const char ac2g[] = "ac2g";

	if (ev->flow_id >> TP_FLOW_TAG_SHIFT || (ev->cat && ev->catlen == 4 &&
				  !memcmp(ev->cat, ac2g, 4)))
		return;
	ev->flow_id |= tag_of(ev);
}

static struct slot *slot_of(struct tp_conv_flows *f, uint64_t id)
{
	return &f->s[(id * 0x9e3779b97f4a7c15ull) >> 48 & (SLOTS - 1)];
}

int tp_conv_flows_see(struct tp_conv_flows *f, struct tp_tev *ev,
		      struct tp_tev *start)
{
	struct slot *s;
	uint32_t k;

	if (!f || (ev->phase != TP_TEV_FLOW_START &&
		   ev->phase != TP_TEV_FLOW_END))
		return 0;
	tag(ev);
	s = slot_of(f, ev->flow_id);
	if (ev->phase == TP_TEV_FLOW_START) {
		s->id = ev->flow_id;
		s->track = ev->track;
		s->ts_ns = ev->ts_ns;
		s->ends = 0;
		s->used = 1;
		return 0;
	}
	if (!s->used || s->id != ev->flow_id)
		return 0;
	k = s->ends;
	if (s->ends < UINT32_MAX)
		s->ends++;
	if (tp_flow_fanout(ev->flow_id, k) == ev->flow_id)
		return 0;	/* the first end, or no room for k */
	*start = *ev;
	start->phase = TP_TEV_COMPLETE;
	start->track = s->track;
	start->ts_ns = s->ts_ns;
	start->dur_ns = 0;
	start->flow_binds_enclosing = 0;
	start->args = NULL;
	start->nargs = 0;
	ev->flow_id = tp_flow_fanout(ev->flow_id, k);
	start->flow_out = ev->flow_id;
	start->flow_in = 0;
	start->flow_id = 0;
	return 1;
}
