/* perfetto/: the Perfetto protobuf encoder of typed events: packets,
 * interning, tracks, annotations; on encode/ and below. */
/* The Perfetto encoder's interning (perfetto_int.h): event names,
 * categories, debug-annotation names and string values to iids of the
 * packet sequence, new entries collected for the packet being written. */
#include <string.h>

#include "perfetto_int.h"

static const uint32_t intern_field[] = {
	[IK_NAME] = PF_ID_EVENT_NAMES,
	[IK_CAT] = PF_ID_EVENT_CATEGORIES,
	[IK_ANAME] = PF_ID_DEBUG_ANNOTATION_NAMES,
	[IK_STR] = PF_ID_DEBUG_ANNOTATION_STRINGS,
};

/* The iid of s, interning it (into the packet's interned data) if new;
 * 0 when it must be written inline (too long, or the table is full: the
 * state is cleared before the next event). */
static struct tp_pf_slot *intern(struct pf_enc *p, int kind, const char *s,
				 size_t n)
{
	struct tp_pf_slot *sl;
	struct tp_buf *b;
	size_t m;

	if (n > INTERN_LEN_MAX)
		return NULL;
	sl = tp_pf_tab_get(&p->intern, kind, 0, 0, s, n);
	if (sl)
		return sl;
	sl = tp_pf_tab_put(&p->intern, kind, 0, 0, s, n, p->next_iid);
	if (!sl)
		return NULL;
	p->next_iid++;
	b = &p->in[kind];
	p->in_any = 1;
	m = tp_pb_open(b, intern_field[kind]);
	tp_pb_u64(b, PF_INTERNED_IID, sl->val);
	tp_pb_bytes(b, PF_INTERNED_NAME, s, n);
	tp_pb_close(b, m);
	return sl;
}

uint64_t pf_intern(struct pf_enc *p, int kind, const char *s, size_t n)
{
	struct tp_pf_slot *sl = intern(p, kind, s, n);

	return sl ? sl->val : 0;
}

uint64_t pf_intern_miss(struct pf_enc *p, int kind, const char *s, size_t n,
			struct pf_pc *c)
{
	struct tp_pf_slot *sl = intern(p, kind, s, n);

	if (!sl)
		return 0;
	c->s = s;
	c->n = (uint32_t)n;
	c->kind = (uint32_t)kind;
	c->gen = p->gen;
	c->off = sl->off;
	c->iid = sl->val;
	return sl->val;
}
