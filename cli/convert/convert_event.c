/* tprof convert: Kineto JSON events (DOM nodes) to typed events. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "convert_event.h"

int tp_conv_us_to_ns(const struct tp_json_node *n, int64_t *ns)
{
	const char *s;
	int64_t whole = 0, frac = 0;
	int neg = 0, digits = 0;

	if (!n || n->type != TP_JSON_NUMBER)
		return -1;
	s = n->str;
	if (strpbrk(s, "eE")) {
		/* Exponent: rare; the double is exact enough. */
		*ns = (int64_t)llround(n->num * 1000.0);
		return 0;
	}
	if (*s == '-') {
		neg = 1;
		s++;
	}
	for (; *s >= '0' && *s <= '9'; s++) {
		if (whole > INT64_MAX / 10 / 1000)
			return -1;
		whole = whole * 10 + (*s - '0');
	}
	if (*s == '.')
		s++;
	for (; *s >= '0' && *s <= '9'; s++, digits++) {
		if (digits < 3)
			frac = frac * 10 + (*s - '0');
		else if (digits == 3 && *s >= '5')
			frac++;
	}
	for (; digits < 3; digits++)
		frac *= 10;
	*ns = whole * 1000 + frac;
	if (neg)
		*ns = -*ns;
	return 0;
}

static void put_value(struct tp_targs *w, const struct tp_json_node *n,
		      const char *key, size_t keylen);

static void put_number(struct tp_targs *w, const struct tp_json_node *n,
		       const char *key, size_t keylen)
{
	struct tp_targ *a;
	int64_t i;

	if (tp_json_int64(n, &i)) {
		a = tp_targs_add(w, key, keylen, TP_TARG_INT);
		if (a)
			a->v.i = i;
		return;
	}
	if (!strpbrk(n->str, ".eE-")) {
		/* A whole number past int64: unsigned, as FLOPs are. */
		unsigned __int128 v = 0;
		const char *s;

		for (s = n->str; *s; s++)
			v = v * 10 + (unsigned)(*s - '0');
		a = tp_targs_add(w, key, keylen,
				 v <= UINT64_MAX ? TP_TARG_UINT : TP_TARG_U128);
		if (a && a->type == TP_TARG_UINT)
			a->v.u = (uint64_t)v;
		else if (a)
			a->v.u128 = v;
		return;
	}
	a = tp_targs_add(w, key, keylen, TP_TARG_DOUBLE);
	if (a)
		a->v.d = n->num;
}

static void put_value(struct tp_targs *w, const struct tp_json_node *n,
		      const char *key, size_t keylen)
{
	const struct tp_json_node *c;
	struct tp_targ *a;

	switch (n->type) {
	case TP_JSON_NULL:
		tp_targs_add(w, key, keylen, TP_TARG_NULL);
		return;
	case TP_JSON_TRUE:
	case TP_JSON_FALSE:
		a = tp_targs_add(w, key, keylen, TP_TARG_BOOL);
		if (a)
			a->v.i = n->type == TP_JSON_TRUE;
		return;
	case TP_JSON_NUMBER:
		put_number(w, n, key, keylen);
		return;
	case TP_JSON_STRING:
		a = tp_targs_add(w, key, keylen, TP_TARG_STRING);
		if (a) {
			a->v.str.s = n->str;
			a->v.str.len = n->len;
		}
		return;
	}
	/* Arrays and objects: the key is set after opening. */
	tp_targs_open(w, NULL, n->type == TP_JSON_OBJECT);
	if (w->depth && w->depth <= 8 && w->open[w->depth - 1] != UINT32_MAX) {
		w->a[w->open[w->depth - 1]].key = key;
		w->a[w->open[w->depth - 1]].keylen = (uint32_t)keylen;
	}
	for (c = n->child; c; c = c->next)
		put_value(w, c, c->key, c->keylen);
	tp_targs_close(w);
}

static int int_member(const struct tp_json_node *n, const char *key,
		      int64_t *out)
{
	const struct tp_json_node *v = tp_json_get(n, key);

	if (!v)
		return 0;
	if (v->type == TP_JSON_STRING) {
		/* Ids written as "0x1f" strings. */
		char *end;

		*out = (int64_t)strtoull(v->str, &end, 0);
		return *end == 0 && v->len > 0;
	}
	return tp_json_int64(v, out);
}

static void str_member(const struct tp_json_node *n, const char *key,
		       const char **s, size_t *len)
{
	const struct tp_json_node *v = tp_json_get(n, key);

	*s = NULL;
	*len = 0;
	if (v && v->type == TP_JSON_STRING) {
		*s = v->str;
		*len = v->len;
	}
}

/* process_name, thread_name, process_sort_index. */
static int meta(const struct tp_json_node *n, struct tp_tev *ev)
{
	const struct tp_json_node *args = tp_json_get(n, "args");
	int64_t idx;

	if (!ev->name || !args)
		return 0;
	if (!strcmp(ev->name, "process_sort_index")) {
		if (!int_member(args, "sort_index", &idx))
			return 0;
		ev->phase = TP_TEV_SORT_INDEX;
		ev->flow_id = (uint64_t)idx;
		return 1;
	}
	if (!strcmp(ev->name, "process_name"))
		ev->phase = TP_TEV_PROCESS_NAME;
	else if (!strcmp(ev->name, "thread_name"))
		ev->phase = TP_TEV_THREAD_NAME;
	else
		return 0;
	str_member(args, "name", &ev->name, &ev->namelen);
	return ev->name ? 1 : 0;
}

static int phase_of(const char *ph, enum tp_tev_phase *out)
{
	static const struct {
		char c;
		enum tp_tev_phase p;
	} map[] = {
		{ 'X', TP_TEV_COMPLETE }, { 'i', TP_TEV_INSTANT },
		{ 'I', TP_TEV_INSTANT }, { 'C', TP_TEV_COUNTER_SET },
		{ 'b', TP_TEV_ASYNC_BEGIN }, { 'e', TP_TEV_ASYNC_END },
		{ 's', TP_TEV_FLOW_START }, { 't', TP_TEV_FLOW_START },
		{ 'f', TP_TEV_FLOW_END }, { 'M', TP_TEV_PROCESS_NAME },
	};
	size_t i;

	if (!ph || !ph[0] || ph[1])
		return -1;
	for (i = 0; i < sizeof(map) / sizeof(map[0]); i++) {
		if (map[i].c == ph[0]) {
			*out = map[i].p;
			return 0;
		}
	}
	return -1;
}

int tp_conv_event(const struct tp_json_node *n, struct tp_tev *ev,
		  struct tp_targs *w)
{
	const struct tp_json_node *args, *c;
	const char *ph, *bp;
	size_t len;
	int64_t id = 0;
	int dev;

	memset(ev, 0, sizeof(*ev));
	tp_targs_reset(w);
	if (n->type != TP_JSON_OBJECT)
		return -1;
	str_member(n, "ph", &ph, &len);
	if (phase_of(ph, &ev->phase))
		return 0;
	str_member(n, "name", &ev->name, &ev->namelen);
	str_member(n, "cat", &ev->cat, &ev->catlen);
	if (!int_member(n, "pid", &ev->track.pid))
		return 0;
	int_member(n, "tid", &ev->track.tid);
	dev = ev->track.pid >= 0 && ev->track.pid < TP_CONV_MAX_DEVICE;
	ev->track.kind = dev ? TP_TEV_GPU_STREAM : TP_TEV_THREAD;
	if (ev->phase == TP_TEV_PROCESS_NAME)
		return meta(n, ev);
	if (tp_conv_us_to_ns(tp_json_get(n, "ts"), &ev->ts_ns))
		return -1;
	if (ev->phase == TP_TEV_COMPLETE &&
	    tp_conv_us_to_ns(tp_json_get(n, "dur"), &ev->dur_ns))
		return -1;
	if (ev->phase >= TP_TEV_ASYNC_BEGIN && !int_member(n, "id", &id))
		return -1;
	if (ev->phase == TP_TEV_ASYNC_BEGIN || ev->phase == TP_TEV_ASYNC_END) {
		ev->track.kind = TP_TEV_ASYNC;
		ev->track.id = (uint64_t)id;
	} else {
		ev->flow_id = (uint64_t)id;
	}
	str_member(n, "bp", &bp, &len);
	ev->flow_binds_enclosing = bp && !strcmp(bp, "e");
	if (ev->phase == TP_TEV_COUNTER_SET) {
		ev->track.kind = TP_TEV_COUNTER;
		ev->track.tid = dev ? -1 : 0;
	}
	args = tp_json_get(n, "args");
	if (args && args->type == TP_JSON_OBJECT)
		for (c = args->child; c; c = c->next)
			put_value(w, c, c->key, c->keylen);
	ev->args = w->a;
	ev->nargs = w->n;
	return 1;
}
