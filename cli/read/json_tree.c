/* The JSON parser's tree: values built into an arena from the token
 * stream (json.c), and lookups on them; see json.h. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "json_int.h"

#define TP_JSON_CHUNK (64 * 1024)

struct tp_json_chunk {
	struct tp_json_chunk *next;
	size_t used, size;
	max_align_t data[];
};

static void *arena_alloc(struct tp_json_arena *a, size_t n)
{
	struct tp_json_chunk *c = a->head;
	size_t size;
	void *p;

	n = (n + 15) & ~(size_t)15;
	if (c && c->size - c->used >= n)
		goto out;
	size = n > TP_JSON_CHUNK / 4 ? n : TP_JSON_CHUNK;
	c = malloc(sizeof(*c) + size);
	if (!c)
		return NULL;
	c->size = size;
	c->used = 0;
	/* A big string gets a chunk of its own behind the head, so the head
	 * keeps serving small nodes and is the one reset keeps. */
	if (size > TP_JSON_CHUNK && a->head) {
		c->next = a->head->next;
		a->head->next = c;
	} else {
		c->next = a->head;
		a->head = c;
	}
out:
	p = (char *)c->data + c->used;
	c->used += n;
	return p;
}

void tp_json_arena_reset(struct tp_json_arena *a)
{
	struct tp_json_chunk *c, *next;

	if (!a->head)
		return;
	for (c = a->head->next; c; c = next) {
		next = c->next;
		free(c);
	}
	a->head->next = NULL;
	a->head->used = 0;
}

void tp_json_arena_free(struct tp_json_arena *a)
{
	tp_json_arena_reset(a);
	free(a->head);
	a->head = NULL;
}

static char *arena_text(struct tp_json_arena *a, const char *s, size_t n)
{
	char *d = arena_alloc(a, n + 1);

	if (d) {
		memcpy(d, s, n);
		d[n] = 0;
	}
	return d;
}

static struct tp_json_node *new_node(struct tp_json *j, int tok,
				     struct tp_json_arena *a)
{
	struct tp_json_node *n = arena_alloc(a, sizeof(*n));

	if (!n)
		return NULL;
	memset(n, 0, sizeof(*n));
	n->type = tok;
	n->line = j->tok_line;
	if (tok != TP_JSON_STRING && tok != TP_JSON_NUMBER)
		return n;
	n->str = arena_text(a, j->tok ? j->tok : "", j->toklen);
	n->len = (uint32_t)j->toklen;
	n->num = j->num;
	return n->str ? n : NULL;
}

static void append(struct tp_json_node *parent, struct tp_json_node *n)
{
	n->parent = parent;
	if (parent->last)
		parent->last->next = n;
	else
		parent->child = n;
	parent->last = n;
	parent->len++;
}

/* Iterative, so nesting depth costs no C stack. */
int tp_json_build(struct tp_json *j, int tok, struct tp_json_arena *a,
		  struct tp_json_node **out)
{
	struct tp_json_node *root = NULL, *cur = NULL, *n;
	const char *key = NULL;
	size_t keylen = 0;

	*out = NULL;
	for (;; tok = tp_json_next(j)) {
		if (tok == TP_JSON_ERROR)
			return -1;
		if (tok == TP_JSON_EOF || (!cur && tok > TP_JSON_OBJECT))
			return fail(j, "expected a value");
		if (tok == TP_JSON_ARRAY_END || tok == TP_JSON_OBJECT_END) {
			cur = cur->parent;
			if (!cur)
				break;
			continue;
		}
		if (tok == TP_JSON_KEY) {
			key = arena_text(a, j->tok, j->toklen);
			keylen = j->toklen;
			if (!key)
				return fail(j, "out of memory");
			continue;
		}
		n = new_node(j, tok, a);
		if (!n)
			return fail(j, "out of memory");
		n->key = key;
		n->keylen = (uint32_t)keylen;
		key = NULL;
		if (cur)
			append(cur, n);
		else
			root = n;
		if (tok == TP_JSON_ARRAY || tok == TP_JSON_OBJECT)
			cur = n;
		else if (!cur)
			break;
	}
	*out = root;
	return 0;
}

int tp_json_parse_value(struct tp_json *j, struct tp_json_arena *a,
			struct tp_json_node **out)
{
	return tp_json_build(j, tp_json_next(j), a, out);
}

int tp_json_parse_mem(const void *buf, size_t len, struct tp_json_arena *a,
		      struct tp_json_node **out, struct tp_json_err *err)
{
	struct tp_json *j = tp_json_open_mem(buf, len);
	int ret = -1;

	*out = NULL;
	if (!j) {
		if (err)
			snprintf(err->msg, sizeof(err->msg), "out of memory");
		return -1;
	}
	if (tp_json_parse_value(j, a, out) == 0 &&
	    tp_json_next(j) == TP_JSON_EOF)
		ret = 0;
	if (ret)
		*out = NULL;
	if (err)
		*err = j->err;
	tp_json_close(j);
	return ret;
}

const struct tp_json_node *tp_json_get(const struct tp_json_node *obj,
				       const char *key)
{
	const struct tp_json_node *n;
	size_t len = strlen(key);

	if (!obj || obj->type != TP_JSON_OBJECT)
		return NULL;
	for (n = obj->child; n; n = n->next)
		if (n->keylen == len && !memcmp(n->key, key, len))
			return n;
	return NULL;
}

int tp_json_int64(const struct tp_json_node *n, int64_t *out)
{
	const char *s;
	uint64_t v = 0, lim;
	int neg;

	if (!n || n->type != TP_JSON_NUMBER)
		return 0;
	s = n->str;
	neg = *s == '-';
	s += neg;
	lim = neg ? (uint64_t)INT64_MAX + 1 : (uint64_t)INT64_MAX;
	for (; *s >= '0' && *s <= '9'; s++) {
		if (v > (lim - (uint64_t)(*s - '0')) / 10)
			return 0;
		v = v * 10 + (uint64_t)(*s - '0');
	}
	if (*s)
		return 0;
	*out = neg ? (int64_t)(0 - v) : (int64_t)v;
	return 1;
}
