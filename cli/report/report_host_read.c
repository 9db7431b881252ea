/* tprof report: a summary's "host_activity" member to struct rp_host
 * (docs/reference/summary-format.md). Called by report_summary.c while
 * the summary's JSON tree is alive: what is shown (the part over the
 * GPU's idle intervals, else the whole run's) is copied out, its strings
 * into one block, since the tree is freed once the summary is read. A
 * member of a later version is left alone, as the format says; one of
 * the wrong shape is an error.
 */
#include "report_host.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The flame tree's levels kept (the library writes at most 64). */
#define MAX_DEPTH 64

typedef const struct tp_json_node jnode;

struct hr {
	struct rp_host *h;
	char *err;
	size_t errlen;
};

static int bad(struct hr *p, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

static int bad(struct hr *p, const char *fmt, ...)
{
	va_list ap;
	int n;

	n = snprintf(p->err, p->errlen, "\"host_activity\": ");
	va_start(ap, fmt);
	if (n > 0 && (size_t)n < p->errlen)
		vsnprintf(p->err + n, p->errlen - (size_t)n, fmt, ap);
	va_end(ap);
	return -1;
}

static int is_null(jnode *n)
{
	return !n || n->type == TP_JSON_NULL;
}

/* An integer member; 0 when null or left out. */
static int get_i64(struct hr *p, jnode *obj, const char *key, int64_t *v)
{
	jnode *n = tp_json_get(obj, key);

	*v = 0;
	if (is_null(n))
		return 0;
	return tp_json_int64(n, v) ? 0 : bad(p, "\"%s\" is not an integer",
					      key);
}

/* A string member, pointing into the tree until kept; NULL when null. */
static int get_str(struct hr *p, jnode *obj, const char *key,
		   const char **s)
{
	jnode *n = tp_json_get(obj, key);

	*s = NULL;
	if (is_null(n))
		return 0;
	if (n->type != TP_JSON_STRING)
		return bad(p, "\"%s\" is not a string", key);
	*s = n->str;
	return 0;
}

/* An array member's items (NULL, n 0 when null or left out). */
static int get_arr(struct hr *p, jnode *obj, const char *key, jnode **first,
		   size_t *n)
{
	jnode *a = tp_json_get(obj, key), *x;

	*first = NULL;
	*n = 0;
	if (is_null(a))
		return 0;
	if (a->type != TP_JSON_ARRAY)
		return bad(p, "\"%s\" is not an array", key);
	*first = a->child;
	for (x = a->child; x; x = x->next)
		(*n)++;
	return 0;
}

static int read_fns(struct hr *p, jnode *part, const char *key,
		    struct rp_hfn **out, size_t *nout)
{
	jnode *x;
	size_t n, i = 0;
	struct rp_hfn *v;

	if (get_arr(p, part, key, &x, &n))
		return -1;
	if (!n)
		return 0;
	v = calloc(n, sizeof(*v));
	if (!v)
		return bad(p, "out of memory");
	*out = v;
	for (; x; x = x->next, i++) {
		jnode *py = tp_json_get(x, "python");

		v[i].python = py && py->type == TP_JSON_TRUE;
		if (get_str(p, x, "function", &v[i].function) ||
		    get_str(p, x, "file", &v[i].file) ||
		    get_i64(p, x, "line", &v[i].line) ||
		    get_i64(p, x, v[i].python ? "ns" : "self_ns", &v[i].ns))
			return -1;
		if (!v[i].function)
			return bad(p, "a function without a name");
	}
	*nout = n;
	return 0;
}

static int read_blocking(struct hr *p, jnode *part)
{
	struct rp_host *h = p->h;
	jnode *x;
	size_t n, i = 0;

	if (get_arr(p, part, "blocking", &x, &n))
		return -1;
	if (!n)
		return 0;
	h->blocking = calloc(n, sizeof(*h->blocking));
	if (!h->blocking)
		return bad(p, "out of memory");
	for (; x; x = x->next, i++)
		if (get_str(p, x, "call", &h->blocking[i].call) ||
		    get_str(p, x, "file", &h->blocking[i].file) ||
		    get_i64(p, x, "ns", &h->blocking[i].ns))
			return -1;
		else if (!h->blocking[i].call)
			return bad(p, "a blocking call without a name");
	h->nblocking = n;
	return 0;
}

static size_t count_nodes(jnode *n, unsigned depth)
{
	jnode *kids = tp_json_get(n, "children"), *c;
	size_t k = 1;

	if (depth + 1 >= MAX_DEPTH || !kids || kids->type != TP_JSON_ARRAY)
		return k;
	for (c = kids->child; c; c = c->next)
		k += count_nodes(c, depth + 1);
	return k;
}

/* The tree in preorder, each node with its depth. */
static int flatten(struct hr *p, jnode *n, unsigned depth)
{
	struct rp_host *h = p->h;
	struct rp_hnode *x = &h->flame[h->nflame++];
	jnode *kids, *c;
	size_t nkids;

	x->depth = depth;
	if (n->type != TP_JSON_OBJECT)
		return bad(p, "a flame node is not an object");
	if (get_str(p, n, "name", &x->name) || get_i64(p, n, "ns", &x->ns))
		return -1;
	if (!x->name)
		return bad(p, "a flame node without a name");
	if (depth + 1 >= MAX_DEPTH)
		return 0;
	if (get_arr(p, n, "children", &kids, &nkids))
		return -1;
	for (c = kids; c; c = c->next)
		if (flatten(p, c, depth + 1))
			return -1;
	return 0;
}

static int read_flame(struct hr *p, jnode *part)
{
	jnode *root = tp_json_get(part, "flame");

	if (is_null(root))
		return 0;
	if (root->type != TP_JSON_OBJECT)
		return bad(p, "\"flame\" is not an object");
	p->h->flame = calloc(count_nodes(root, 0), sizeof(*p->h->flame));
	if (!p->h->flame)
		return bad(p, "out of memory");
	return flatten(p, root, 0);
}

/* Every string the member points at, in one order, for sizing and for
 * copying (out NULL: only count). */
static size_t strings(struct rp_host *h, char *out)
{
	size_t i, n = 0;

#define KEEP(ptr) do { \
		if (ptr) { \
			size_t l_ = strlen(ptr) + 1; \
			if (out) { \
				memcpy(out + n, ptr, l_); \
				ptr = out + n; \
			} \
			n += l_; \
		} \
	} while (0)
	for (i = 0; i < h->npython; i++) {
		KEEP(h->python[i].function);
		KEEP(h->python[i].file);
	}
	for (i = 0; i < h->nfunctions; i++) {
		KEEP(h->functions[i].function);
		KEEP(h->functions[i].file);
	}
	for (i = 0; i < h->nblocking; i++) {
		KEEP(h->blocking[i].call);
		KEEP(h->blocking[i].file);
	}
	for (i = 0; i < h->nflame; i++)
		KEEP(h->flame[i].name);
#undef KEEP
	return n;
}

static int keep_strings(struct hr *p)
{
	size_t n = strings(p->h, NULL);

	p->h->strs = malloc(n ? n : 1);
	if (!p->h->strs)
		return bad(p, "out of memory");
	strings(p->h, p->h->strs);
	return 0;
}

int rp_host_read(struct rp_host *h, const struct tp_json_node *member,
		 char *err, size_t errlen)
{
	struct hr p = { h, err, errlen };
	int64_t version;
	jnode *part;

	memset(h, 0, sizeof(*h));
	if (is_null(member))
		return 0;
	if (member->type != TP_JSON_OBJECT)
		return bad(&p, "not an object");
	if (get_i64(&p, member, "version", &version))
		return -1;
	if (version != 1)
		return 0;	/* a later format: left alone */
	part = tp_json_get(member, "idle");
	h->idle = !is_null(part);
	if (!h->idle)
		part = tp_json_get(member, "all");
	if (is_null(part))
		return 0;
	if (part->type != TP_JSON_OBJECT)
		return bad(&p, "\"%s\" is not an object", h->idle ? "idle" :
			   "all");
	if (get_i64(&p, part, "sampled_ns", &h->sampled_ns) ||
	    get_i64(&p, part, "blocking_ns", &h->blocking_ns) ||
	    read_fns(&p, part, "python", &h->python, &h->npython) ||
	    read_fns(&p, part, "functions", &h->functions, &h->nfunctions) ||
	    read_blocking(&p, part) || read_flame(&p, part) ||
	    keep_strings(&p)) {
		rp_host_free(h);
		return -1;
	}
	h->present = 1;
	return 0;
}

void rp_host_free(struct rp_host *h)
{
	free(h->python);
	free(h->functions);
	free(h->blocking);
	free(h->flame);
	free(h->strs);
	memset(h, 0, sizeof(*h));
}
