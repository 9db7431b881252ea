/* summary/: the summary aggregator: per-name statistics, histograms, steps,
 * groups, memory, and its JSON/markdown output; on util/ .. session/ and
 * stacks/. */
/* The host side's tables (host.h): functions, stacks of functions,
 * blocking calls by (call, file), and what the sweep says fell in the
 * GPU's idle intervals. host_out.c writes them. */
#include <stdlib.h>
#include <string.h>

#include "gpu_intern.h"
#include "host_int.h"

struct tp_host *tp_host_new(void)
{
	return calloc(1, sizeof(struct tp_host));
}

void tp_host_free(struct tp_host *h)
{
	size_t i;

	if (!h)
		return;
	for (i = 0; i < h->nstk; i++)
		free(h->stk[i].fns);
	free(h->stk);
	free(h->stk_slots);
	tp_intern_free(&h->names);
	free(h->fn);
	for (i = 0; i < h->nblk; i++) {
		free(h->blk[i].name);
		free(h->blk[i].target);
	}
	free(h->blk);
	free(h->pend);
	free(h->touched);
	free(h->open);
	free(h->feeders);
	free(h->mechanism);
	free(h);
}

static uint64_t fnv(const void *p, size_t n, uint64_t h)
{
	const unsigned char *s = p;

	while (n--)
		h = (h ^ *s++) * 0x100000001b3ull;
	return h;
}

/* The function of a frame: "f+0x1c (lib)" is "f (lib)", "lib+0x1c" is
 * "lib", an address alone "[unknown]"; a Python frame as it is. */
static size_t fold(const char *f, size_t n, char *out, size_t cap)
{
	size_t i, k = 0;

	if (n >= 2 && f[0] == '0' && f[1] == 'x') {
		memcpy(out, "[unknown]", 9);
		return 9;
	}
	if (n >= 4 && !memcmp(f, "py::", 4)) {
		k = n < cap ? n : cap;
		memcpy(out, f, k);
		return k;
	}
	for (i = 0; i < n && k < cap; i++) {
		if (f[i] == '+' && i + 2 < n && f[i + 1] == '0' &&
		    f[i + 2] == 'x') {
			for (i += 3; i < n && f[i] != ' '; i++)
				;
			if (i == n)
				break;
		}
		out[k++] = f[i];
	}
	return k;
}

static int fn_room(struct tp_host *h, size_t id)
{
	size_t cap;
	struct host_fn *v;

	if (id < h->capfn)
		return 0;
	cap = h->capfn ? h->capfn * 2 : 256;
	while (cap <= id)
		cap *= 2;
	v = realloc(h->fn, cap * sizeof(*v));
	if (!v)
		return -1;
	memset(v + h->capfn, 0, (cap - h->capfn) * sizeof(*v));
	h->fn = v;
	h->capfn = cap;
	return 0;
}

/* The id of the function of frame text f (n bytes, unescaped). */
static int64_t fn_id(struct tp_host *h, const char *f, size_t n)
{
	char buf[1024];
	size_t k = fold(f, n, buf, sizeof(buf) - 1);
	int64_t id;

	buf[k] = '\0';
	id = tp_intern(&h->names, buf);
	if (id < 0 || fn_room(h, (size_t)id) < 0)
		return -1;
	h->fn[id].python = !strncmp(buf, "py::", 4);
	return id;
}

/* One JSON string at p (its opening quote), unescaped into out: the
 * frames tprof writes escape only quotes, backslashes and control
 * characters. Returns the position after it, or NULL. */
static const char *read_str(const char *p, const char *end, char *out,
			    size_t cap, size_t *len)
{
	size_t k = 0;

	if (p >= end || *p != '"')
		return NULL;
	for (p++; p < end && *p != '"'; p++) {
		char c = *p;

		if (c == '\\') {
			if (++p >= end)
				return NULL;
			c = *p == 'n' ? '\n' : *p == 't' ? '\t' : *p;
			if (*p == 'u') {	/* kept as '?' */
				p += 4;
				c = '?';
			}
		}
		if (k < cap)
			out[k++] = c;
	}
	if (p >= end)
		return NULL;
	*len = k;
	return p + 1;
}

static const char *skip_ws(const char *p, const char *end)
{
	while (p < end && (*p == ' ' || *p == '\n' || *p == '\t' ||
			   *p == '\r' || *p == ','))
		p++;
	return p;
}

/* The stack's frames as function ids into ids (at most max). */
static int parse(struct tp_host *h, const char *s, size_t len, uint32_t *ids,
		 unsigned max)
{
	const char *p = s, *end = s + len;
	char frame[1024];
	unsigned n = 0;
	size_t flen;

	p = skip_ws(p, end);
	if (p >= end || *p != '[')
		return -1;
	for (p = skip_ws(p + 1, end); p < end && *p != ']';
	     p = skip_ws(p, end)) {
		int64_t id;

		p = read_str(p, end, frame, sizeof(frame), &flen);
		if (!p)
			return -1;
		if (n == max)
			continue;
		id = fn_id(h, frame, flen);
		if (id < 0)
			return -1;
		ids[n++] = (uint32_t)id;
	}
	return (int)n;
}

static int stk_eq(const struct host_stk *k, const uint32_t *ids, unsigned n,
		  uint64_t hash)
{
	return k->hash == hash && k->n == n &&
	       !memcmp(k->fns, ids, n * sizeof(*ids));
}

static int stk_grow(struct tp_host *h)
{
	size_t cap = h->capstk ? h->capstk * 2 : 256, i, ns = cap * 2;
	struct host_stk *v = realloc(h->stk, cap * sizeof(*v));
	uint32_t *slots;

	if (!v)
		return -1;
	h->stk = v;
	h->capstk = cap;
	slots = calloc(ns, sizeof(*slots));
	if (!slots)
		return -1;
	for (i = 0; i < h->nstk; i++) {
		size_t j = h->stk[i].hash & (ns - 1);

		while (slots[j])
			j = (j + 1) & (ns - 1);
		slots[j] = (uint32_t)i + 1;
	}
	free(h->stk_slots);
	h->stk_slots = slots;
	h->nslots = ns;
	return 0;
}

static int64_t stk_id(struct tp_host *h, const uint32_t *ids, unsigned n)
{
	uint64_t hash = fnv(ids, n * sizeof(*ids), 0xcbf29ce484222325ull);
	struct host_stk *k;
	size_t j;

	if (h->nstk + 1 > h->capstk && stk_grow(h) < 0)
		return -1;
	for (j = hash & (h->nslots - 1); h->stk_slots[j];
	     j = (j + 1) & (h->nslots - 1))
		if (stk_eq(&h->stk[h->stk_slots[j] - 1], ids, n, hash))
			return h->stk_slots[j] - 1;
	k = &h->stk[h->nstk];
	memset(k, 0, sizeof(*k));
	k->fns = malloc((n ? n : 1) * sizeof(*ids));
	if (!k->fns)
		return -1;
	memcpy(k->fns, ids, n * sizeof(*ids));
	k->n = n;
	k->hash = hash;
	h->stk_slots[j] = (uint32_t)h->nstk + 1;
	return (int64_t)h->nstk++;
}

/* A text seen before (the same frames, offsets and all) skips the
 * parse: two hashes of it name its stack in a small direct-mapped
 * cache. */
static int64_t cached(struct tp_host *h, const char *s, size_t len,
		      uint64_t *a, uint64_t *b)
{
	struct host_tcache *c;

	*a = fnv(s, len, 0xcbf29ce484222325ull);
	*b = fnv(s, len, 0x84222325cbf29ce4ull) ^ len;
	c = &h->tcache[*a & (HOST_TCACHE - 1)];
	return c->a == *a && c->b == *b && c->id ? (int64_t)c->id - 1 : -1;
}

int64_t tp_host_sample(struct tp_host *h, const char *stack, size_t len,
		       int64_t weight_ns, int64_t tid)
{
	uint32_t ids[HOST_MAX_DEPTH];
	uint64_t a, b;
	int64_t id;
	int n;

	(void)tid;
	if (!h || weight_ns < 0)
		return -1;
	id = cached(h, stack, len, &a, &b);
	if (id < 0) {
		n = parse(h, stack, len, ids, HOST_MAX_DEPTH);
		id = n < 0 ? -1 : stk_id(h, ids, (unsigned)n);
		if (id < 0) {
			h->unread++;
			return -1;
		}
		h->tcache[a & (HOST_TCACHE - 1)] = (struct host_tcache){
			a, b, (uint32_t)id + 1 };
	}
	h->stk[id].all_ns += weight_ns;
	h->stk[id].all_n++;
	h->samples++;
	h->sampled_ns += weight_ns;
	return id;
}

int64_t tp_host_osrt(struct tp_host *h, const char *name, const char *target,
		     int64_t dur_ns, int64_t tid)
{
	struct host_blk *k;
	size_t i;

	if (!h)
		return -1;
	h->blocking++;
	h->blocking_ns += dur_ns;
	for (i = 0; i < h->nblk; i++) {
		k = &h->blk[i];
		if (k->tid == tid && !strcmp(k->name, name) &&
		    (k->target ? target && !strcmp(k->target, target) :
		     !target))
			goto found;
	}
	if (h->nblk >= HOST_MAX_BLOCKING) {
		h->blocking_other_ns += dur_ns;
		return -1;
	}
	if (h->nblk == h->capblk) {
		size_t cap = h->capblk ? h->capblk * 2 : 32;
		struct host_blk *v = realloc(h->blk, cap * sizeof(*v));

		if (!v)
			return -1;
		h->blk = v;
		h->capblk = cap;
	}
	k = &h->blk[h->nblk];
	memset(k, 0, sizeof(*k));
	k->name = strdup(name);
	k->target = target ? strdup(target) : NULL;
	k->tid = tid;
	if (!k->name || (target && !k->target)) {
		free(k->name);
		free(k->target);
		return -1;
	}
	i = h->nblk++;
found:
	k->calls++;
	k->all_ns += dur_ns;
	return (int64_t)i;
}

int tp_host_feeder(struct tp_host *h, int64_t tid)
{
	size_t i;

	if (!h)
		return -1;
	for (i = 0; i < h->nfeeders; i++)
		if (h->feeders[i] == tid)
			return 0;
	if (h->nfeeders == h->capfeeders) {
		size_t cap = h->capfeeders ? h->capfeeders * 2 : 16;
		int64_t *v = realloc(h->feeders, cap * sizeof(*v));

		if (!v)
			return -1;
		h->feeders = v;
		h->capfeeders = cap;
	}
	h->feeders[h->nfeeders++] = tid;
	return 0;
}

int tp_host_feeds(const struct tp_host *h, int64_t tid)
{
	size_t i;

	if (!h->nfeeders)
		return 1;
	for (i = 0; i < h->nfeeders; i++)
		if (h->feeders[i] == tid)
			return 1;
	return 0;
}

void tp_host_set_sampler(struct tp_host *h, const char *mechanism,
			 unsigned hz)
{
	if (!h)
		return;
	free(h->mechanism);
	h->mechanism = mechanism ? strdup(mechanism) : NULL;
	h->hz = hz;
}

int tp_host_any(const struct tp_host *h)
{
	return h && (h->samples || h->blocking || h->mechanism);
}
