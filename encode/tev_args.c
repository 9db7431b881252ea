/* encode/: the typed event model (tev.h) and the JSON encoder; on
 * util/ and gzip/. */
/* The args-writer of the typed event model (tev.h): a flat, fixed array
 * of typed values, nested arrays and dicts stored depth-first. */
#include <string.h>

#include "tev.h"

struct tp_targ *tp_targs_add_slow(struct tp_targs *w, const char *key,
				  size_t keylen, enum tp_targ_type type)
{
	struct tp_targ *a;
	uint32_t max_depth = sizeof(w->open) / sizeof(w->open[0]);

	/* Inside a container that was dropped: dropped too. */
	if (w->depth > max_depth ||
	    (w->depth && w->open[w->depth - 1] == UINT32_MAX)) {
		w->overflow = 1;
		return NULL;
	}
	if (w->n >= TP_TARGS_MAX) {
		w->overflow = 1;
		return NULL;
	}
	a = &w->a[w->n++];
	a->type = type;
	a->key = key;
	a->keylen = (uint32_t)keylen;
	/* The open container counts its direct children only. */
	if (w->depth)
		w->a[w->open[w->depth - 1]].v.n++;
	return a;
}

struct tp_enc *tp_tev_sink;

int tp_enc_event_into(struct tp_enc *e, struct tp_buf *b,
		      const struct tp_tev *ev)
{
	struct tp_buf own = e->out;
	int rc;

	e->out = *b;
	rc = tp_enc_event(e, ev);
	*b = e->out;
	e->out = own;
	return rc;
}

void tp_targs_openk(struct tp_targs *w, const char *key, size_t keylen,
		    int dict)
{
	struct tp_targ *a;

	/* Too deep: the container is dropped with everything in it, so
	 * closing it must not pop a parent. */
	if (w->depth >= sizeof(w->open) / sizeof(w->open[0])) {
		w->overflow = 1;
		w->depth++;
		return;
	}
	a = tp_targs_add(w, key, keylen, dict ? TP_TARG_DICT : TP_TARG_ARRAY);
	if (!a) {
		w->depth++;
		w->open[w->depth - 1] = UINT32_MAX;
		return;
	}
	a->v.n = 0;
	if (w->json) {
		tp_targs_jkey(w, key, keylen);
		tp_buf_char(w->json, dict ? '{' : '[');
	}
	w->open[w->depth++] = (uint32_t)(a - w->a);
	w->jseen &= ~(1u << w->depth);
	if (dict)
		w->jarr &= ~(1u << w->depth);
	else
		w->jarr |= 1u << w->depth;
}

void tp_targs_close(struct tp_targs *w)
{
	uint32_t d = w->depth;

	if (!d)
		return;
	w->depth--;
	/* A dropped container was never opened in the JSON. */
	if (!w->json || d > sizeof(w->open) / sizeof(w->open[0]) ||
	    w->open[d - 1] == UINT32_MAX)
		return;
	tp_buf_char(w->json,
		    w->a[w->open[d - 1]].type == TP_TARG_DICT ? '}' : ']');
}

uint32_t tp_targ_span(const struct tp_targ *a, uint32_t n, uint32_t i)
{
	uint32_t j = i + 1, k;

	if (a[i].type != TP_TARG_ARRAY && a[i].type != TP_TARG_DICT)
		return 1;
	for (k = 0; k < a[i].v.n && j < n; k++)
		j += tp_targ_span(a, n, j);
	return j - i;
}

/* tp_targs_uint3 inside a container or near the end: the general way. */
void tp_targs_uint3k(struct tp_targs *w, const char *key, size_t keylen,
		     const uint32_t *d)
{
	int k;

	tp_targs_openk(w, key, keylen, 0);
	for (k = 0; k < 3; k++)
		tp_targs_uint(w, NULL, d[k]);
	tp_targs_close(w);
}

/* tp_targs_uint3 at the top level with room: the four entries, and the
 * JSON after the key tp_targs_uint3 wrote. */
void tp_targs_uint3_fill(struct tp_targs *w, const char *key,
			 size_t keylen, const uint32_t *d)
{
	struct tp_targ *a = &w->a[w->n];
	struct tp_buf *b = w->json;
	char *p;
	int k;

	w->n += 4;
	a[0].type = TP_TARG_ARRAY;
	a[0].key = key;
	a[0].keylen = (uint32_t)keylen;
	a[0].v.n = 3;
	for (k = 1; k < 4; k++) {
		a[k].type = TP_TARG_UINT;
		a[k].key = NULL;
		a[k].keylen = 0;
		a[k].v.u = d[k - 1];
	}
	/* [x,y,z]: room for three 20-digit numbers (tp_json_u64_at). */
	if (!b || tp_buf_reserve(b, 3 * 20 + 4))
		return;
	p = b->p + b->len;
	*p++ = '[';
	p = tp_json_u64_at4(p, d[0]);
	*p++ = ',';
	p = tp_json_u64_at4(p, d[1]);
	*p++ = ',';
	p = tp_json_u64_at4(p, d[2]);
	*p++ = ']';
	b->len = (size_t)(p - b->p);
}

/* tp_targs_int3's general way: inside a container, near the end or a
 * negative value. */
void tp_targs_int3k(struct tp_targs *w, const char *key, size_t keylen,
		    int32_t x, int32_t y, int32_t z)
{
	tp_targs_openk(w, key, keylen, 0);
	tp_targs_int(w, NULL, x);
	tp_targs_int(w, NULL, y);
	tp_targs_int(w, NULL, z);
	tp_targs_close(w);
}

/* tp_targs_int3 of three values >= 0: tp_targs_uint3_fill's entries and
 * digits, the elements typed signed. */
void tp_targs_int3_fill(struct tp_targs *w, const char *key, size_t keylen,
			int32_t x, int32_t y, int32_t z)
{
	const uint32_t d[3] = { (uint32_t)x, (uint32_t)y, (uint32_t)z };
	struct tp_targ *a = &w->a[w->n];

	tp_targs_uint3_fill(w, key, keylen, d);
	a[1].type = TP_TARG_INT;
	a[2].type = TP_TARG_INT;
	a[3].type = TP_TARG_INT;
}
