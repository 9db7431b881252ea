/* trace/: the recording core: records, per-thread rings, threads, clock and
 * timeline, configuration, JSON and gzip, file naming; calls no other
 * folder. */
/* Typed args as the Perfetto encoder's DebugAnnotations (perfetto_int.h):
 * names interned, string values interned when short, arrays and dicts
 * nested, integers past 64 bits as legacy JSON. */
#include <string.h>

#include "trace/perfetto_int.h"

static uint32_t put_annotation(struct pf_enc *p, const struct tp_targ *a,
			       uint32_t n, uint32_t i, int named);

/* A value the writer had as JSON text: a string without escapes (a
 * kernel name, nearly always) is a string again, interned; anything else
 * stays JSON. */
static void put_json(struct pf_enc *p, const char *s, size_t len)
{
	struct tp_buf *b = &p->e.out;
	uint64_t iid;

	if (len >= 2 && s[0] == '"' && s[len - 1] == '"' &&
	    !memchr(s + 1, '\\', len - 2)) {
		iid = pf_intern_at(p, IK_STR, s + 1, len - 2, 0);
		if (iid)
			tp_pb_u64(b, PF_DA_STRING_IID, iid);
		else
			tp_pb_bytes(b, PF_DA_STRING, s + 1, len - 2);
		return;
	}
	tp_pb_bytes(b, PF_DA_LEGACY_JSON, s, len);
}

static uint32_t put_children(struct pf_enc *p, const struct tp_targ *a,
			     uint32_t n, uint32_t i)
{
	uint32_t j = i + 1, k, f;
	int dict = a[i].type == TP_TARG_DICT;
	size_t m;

	f = dict ? PF_DA_DICT_ENTRIES : PF_DA_ARRAY_VALUES;
	for (k = 0; k < a[i].v.n && j < n; k++) {
		m = tp_pb_open(&p->e.out, f);
		j = put_annotation(p, a, n, j, dict);
		tp_pb_close(&p->e.out, m);
	}
	return j;
}

/* The body of one DebugAnnotation for a[i]; returns the next index. */
static uint32_t put_annotation(struct pf_enc *p, const struct tp_targ *a,
			       uint32_t n, uint32_t i, int named)
{
	const struct tp_targ *t = &a[i];
	struct tp_buf *b = &p->e.out;
	uint64_t iid;
	char u128[64];

	if (named) {
		iid = pf_intern_at(p, IK_ANAME, t->key, t->keylen,
				   p->static_keys);
		if (iid)
			tp_pb_u64(b, PF_DA_NAME_IID, iid);
		else
			tp_pb_bytes(b, PF_DA_NAME, t->key, t->keylen);
	}
	switch (t->type) {
	case TP_TARG_NULL:
		tp_pb_bytes(b, PF_DA_LEGACY_JSON, "null", 4);
		break;
	case TP_TARG_BOOL:
		tp_pb_u64(b, PF_DA_BOOL, (uint64_t)t->v.i);
		break;
	case TP_TARG_INT:
		tp_pb_i64(b, PF_DA_INT, t->v.i);
		break;
	case TP_TARG_UINT:
		tp_pb_u64(b, PF_DA_UINT, t->v.u);
		break;
	case TP_TARG_U128:
		if (t->v.u128 <= UINT64_MAX) {
			tp_pb_u64(b, PF_DA_UINT, (uint64_t)t->v.u128);
			break;
		}
		/* Past 64 bits: the exact decimal, as JSON writes it. */
		{
			unsigned __int128 v = t->v.u128;
			int k = sizeof(u128);

			while (v) {
				u128[--k] = (char)('0' + (int)(v % 10));
				v /= 10;
			}
			tp_pb_bytes(b, PF_DA_LEGACY_JSON, u128 + k,
				    sizeof(u128) - (size_t)k);
		}
		break;
	case TP_TARG_DOUBLE:
		tp_pb_double(b, PF_DA_DOUBLE, t->v.d);
		break;
	case TP_TARG_STRING:
		iid = pf_intern_at(p, IK_STR, t->v.str.s, t->v.str.len, 0);
		if (iid)
			tp_pb_u64(b, PF_DA_STRING_IID, iid);
		else
			tp_pb_bytes(b, PF_DA_STRING, t->v.str.s, t->v.str.len);
		break;
	case TP_TARG_POINTER:
		tp_pb_u64(b, PF_DA_POINTER, t->v.u);
		break;
	case TP_TARG_JSON:
		put_json(p, t->v.str.s, t->v.str.len);
		break;
	case TP_TARG_MILLI:
		tp_pb_double(b, PF_DA_DOUBLE, (double)t->v.i / 1000.0);
		break;
	case TP_TARG_ARRAY:
	case TP_TARG_DICT:
		return put_children(p, a, n, i);
	}
	return i + 1;
}

void pf_put_annotations(struct pf_enc *p, const struct tp_targ *a,
			    uint32_t n)
{
	uint32_t i = 0;
	size_t m;

	while (i < n) {
		m = tp_pb_open(&p->e.out, PF_TE_DEBUG_ANNOTATIONS);
		i = put_annotation(p, a, n, i, 1);
		tp_pb_close(&p->e.out, m);
	}
}
