/* perfetto/: the Perfetto protobuf encoder of typed events: packets,
 * interning, tracks, annotations; on encode/ and below. */
/* Typed args as the Perfetto encoder's DebugAnnotations (perfetto_int.h):
 * names interned, string values interned when short, arrays and dicts
 * nested, integers past 64 bits as legacy JSON strings of their digits. */
#include <string.h>

#include "perfetto_int.h"

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
	if (len == 4 && !memcmp(s, "null", 4))
		return;		/* no value: see TP_TARG_NULL */
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
		/* No value: Perfetto (v43, v58) adds no arg for it, and
		 * tprof's reader reads null back. Not legacy JSON "null":
		 * v58's importer aborts on it (json_args.cc InsertLeaf,
		 * "Unreachable"), so the trace would not open. */
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
		/* Past 64 bits: the exact decimal as a legacy JSON string,
		 * which tprof's reader reads back as the number. Not the bare
		 * number: Perfetto v58 drops a legacy JSON number that ends
		 * its text (json_parser.h: "incomplete input") and reads one
		 * past 19 digits as garbage (its int64 digit sum overflows);
		 * a string it keeps, every digit. */
		{
			unsigned __int128 v = t->v.u128;
			int k = sizeof(u128) - 1;

			u128[k] = '"';
			while (v) {
				u128[--k] = (char)('0' + (int)(v % 10));
				v /= 10;
			}
			u128[--k] = '"';
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
		/* Empty: as JSON, or it would read back as null. */
		if (!t->v.n) {
			tp_pb_bytes(b, PF_DA_LEGACY_JSON,
				    t->type == TP_TARG_ARRAY ? "[]" : "{}", 2);
			return i + 1;
		}
		return put_children(p, a, n, i);
	}
	return i + 1;
}

/* The wire tag of a varint field of a DebugAnnotation value, or 0 for a
 * type the fast path leaves to put_annotation. */
static unsigned char fast_tag(enum tp_targ_type t)
{
	switch (t) {
	case TP_TARG_BOOL:
		return PF_DA_BOOL << 3 | TP_PB_VARINT;
	case TP_TARG_INT:
		return PF_DA_INT << 3 | TP_PB_VARINT;
	case TP_TARG_UINT:
		return PF_DA_UINT << 3 | TP_PB_VARINT;
	case TP_TARG_POINTER:
		return PF_DA_POINTER << 3 | TP_PB_VARINT;
	default:
		return 0;
	}
}

#define FAST_ELEMS 8

/* The common annotations in one step, bytes written in place: an
 * interned name (iid under 128) with a varint value, or with an array of
 * at most FAST_ELEMS varints (a dim3). The bytes are put_annotation's:
 * DebugAnnotation{name_iid, value} or {name_iid, array_values: [{value},
 * ...]}, every length under 128 (4 + 8 * 13 bytes at most). Returns the
 * next index, or i when a[i] is not such an annotation. */
static uint32_t put_fast(struct pf_enc *p, const struct tp_targ *a,
			 uint32_t n, uint32_t i)
{
	const struct tp_targ *t = &a[i];
	struct tp_buf *b = &p->e.out;
	unsigned char *q, *len, *el, tag = fast_tag(t->type);
	uint32_t k, cnt = 0;
	uint64_t iid;

	if (t->type == TP_TARG_ARRAY) {
		cnt = t->v.n;
		if (!cnt || cnt > FAST_ELEMS || cnt > n - i - 1)
			return i;	/* empty: put_annotation's "[]" */
		for (k = 1; k <= cnt; k++)
			if (!fast_tag(t[k].type))
				return i;
	} else if (!tag) {
		return i;
	}
	iid = pf_intern_at(p, IK_ANAME, t->key, t->keylen, p->static_keys);
	if (!iid || iid >= 128 || tp_buf_reserve(b, 128))
		return i;
	q = (unsigned char *)b->p + b->len;
	*q++ = PF_TE_DEBUG_ANNOTATIONS << 3 | TP_PB_LEN;
	len = q++;
	*q++ = PF_DA_NAME_IID << 3 | TP_PB_VARINT;
	*q++ = (unsigned char)iid;
	if (!cnt && t->type != TP_TARG_ARRAY) {
		*q++ = tag;
		q += tp_pb_varint_at(q, t->v.u);
	}
	for (k = 1; k <= cnt; k++) {
		*q++ = PF_DA_ARRAY_VALUES << 3 | TP_PB_LEN;
		el = q++;
		*q++ = fast_tag(t[k].type);
		q += tp_pb_varint_at(q, t[k].v.u);
		*el = (unsigned char)(q - el - 1);
	}
	*len = (unsigned char)(q - len - 1);
	b->len = (size_t)(q - (unsigned char *)b->p);
	return i + 1 + cnt;
}

void pf_put_annotations(struct pf_enc *p, const struct tp_targ *a,
			    uint32_t n)
{
	uint32_t i = 0, j;
	size_t m;

	while (i < n) {
		j = put_fast(p, a, n, i);
		if (j != i) {
			i = j;
			continue;
		}
		m = tp_pb_open(&p->e.out, PF_TE_DEBUG_ANNOTATIONS);
		i = put_annotation(p, a, n, i, 1);
		tp_pb_close(&p->e.out, m);
	}
}
