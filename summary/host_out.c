/* summary/: the summary aggregator: per-name statistics, histograms, steps,
 * groups, memory, and its JSON/markdown output; on util/ .. session/ and
 * stacks/. */
/* The summary's "host_activity" member (docs/reference/summary-format.md) and its
 * markdown section: top functions by CPU time (self: the innermost
 * frame; total: anywhere in the stack), top Python functions (the
 * innermost Python frame), blocking calls by time, and the stacks as a
 * tree for a flame graph; over the whole run and over the GPU's idle
 * intervals. Calls host.c's tables (the sweep is done by then). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "host_int.h"
#include "summary.h"

#define TOP 20			/* rows per list */
#define FLAME_DEPTH 64
#define FLAME_CHILDREN 24
#define FLAME_MIN_PER_MILLE 5	/* nodes under 0.5 % of the root left out */

enum { ALL, IDLE };

static const char *fn_name(const struct tp_host *h, uint32_t id)
{
	return h->names.s[id];
}

static int64_t stk_ns(const struct host_stk *k, int which)
{
	return which == IDLE ? k->idle_ns : k->all_ns;
}

/* Self, total and Python time of every function over `which`. */
static void fold(struct tp_host *h, int which)
{
	uint32_t stamp = 0;
	size_t i, j;

	for (i = 0; i < h->names.n; i++) {
		h->fn[i].self_ns[which] = 0;
		h->fn[i].total_ns[which] = 0;
		h->fn[i].py_ns[which] = 0;
		h->fn[i].mark = 0;
	}
	for (i = 0; i < h->nstk; i++) {
		const struct host_stk *k = &h->stk[i];
		int64_t w = stk_ns(k, which);
		int py = 0;

		if (!w || !k->n)
			continue;
		stamp++;
		h->fn[k->fns[0]].self_ns[which] += w;
		for (j = 0; j < k->n; j++) {
			struct host_fn *f = &h->fn[k->fns[j]];

			if (f->python && !py) {
				f->py_ns[which] += w;
				py = 1;
			}
			if (f->mark != stamp) {
				f->mark = stamp;
				f->total_ns[which] += w;
			}
		}
	}
}

struct by {
	const struct tp_host *h;
	int which, py;
};

static int64_t key_of(const struct by *c, uint32_t id)
{
	const struct host_fn *f = &c->h->fn[id];

	return c->py ? f->py_ns[c->which] : f->self_ns[c->which];
}

/* The top `max` ids by key, largest first (ties by name). */
static size_t top(const struct by *c, uint32_t *out, size_t max)
{
	size_t n = 0, i, j;

	for (i = 0; i < c->h->names.n; i++) {
		int64_t k = key_of(c, (uint32_t)i);

		if (k <= 0)
			continue;
		for (j = n; j > 0; j--) {
			int64_t p = key_of(c, out[j - 1]);

			if (p > k || (p == k && strcmp(fn_name(c->h, out[j - 1]),
						       fn_name(c->h, (uint32_t)i)) < 0))
				break;
			if (j < max)
				out[j] = out[j - 1];
		}
		if (j < max) {
			out[j] = (uint32_t)i;
			if (n < max)
				n++;
		}
	}
	return n;
}

/* "py::QUALNAME:FILE[:LINE]": its parts. */
static void py_parts(const char *s, const char **q, size_t *qn,
		     const char **file, size_t *fn, long *line)
{
	const char *c, *last;

	*q = s + 4;
	c = strchr(*q, ':');
	*qn = c ? (size_t)(c - *q) : strlen(*q);
	*file = c ? c + 1 : "";
	*fn = strlen(*file);
	*line = 0;
	last = strrchr(*file, ':');
	if (last && last[1] && strspn(last + 1, "0123456789") ==
	    strlen(last + 1)) {
		*line = strtol(last + 1, NULL, 10);
		*fn = (size_t)(last - *file);
	}
}

static void put_fn(struct tp_buf *b, const struct tp_host *h, uint32_t id,
		   int which, int py)
{
	const char *s = fn_name(h, id), *q, *file;
	size_t qn, fl;
	long line;

	tp_buf_lit(b, "{\"function\": ");
	if (h->fn[id].python) {
		py_parts(s, &q, &qn, &file, &fl, &line);
		tp_json_strn(b, q, qn);
		tp_buf_lit(b, ", \"python\": true, \"file\": ");
		tp_json_strn(b, file, fl);
		tp_buf_lit(b, ", \"line\": ");
		if (line)
			tp_json_i64(b, line);
		else
			tp_buf_lit(b, "null");
	} else {
		tp_json_str(b, s);
		tp_buf_lit(b, ", \"python\": false");
	}
	tp_buf_cstr(b, py ? ", \"ns\": " : ", \"self_ns\": ");
	tp_json_i64(b, py ? h->fn[id].py_ns[which] : h->fn[id].self_ns[which]);
	tp_buf_lit(b, ", \"total_ns\": ");
	tp_json_i64(b, h->fn[id].total_ns[which]);
	tp_buf_char(b, '}');
}

static void put_fns(struct tp_buf *b, struct tp_host *h, int which, int py)
{
	struct by c = { h, which, py };
	uint32_t ids[TOP];
	size_t n = top(&c, ids, TOP), i;

	tp_buf_char(b, '[');
	for (i = 0; i < n; i++) {
		tp_buf_cstr(b, i ? ",\n   " : "\n   ");
		put_fn(b, h, ids[i], which, py);
	}
	tp_buf_char(b, ']');
}

static int64_t blk_ns(const struct host_blk *k, int which)
{
	return which == IDLE ? k->idle_ns : k->all_ns;
}

/* The blocking calls shown, merged by (call, file) over the threads that
 * feed the GPU (all threads when none made a CUDA call). */
struct merged {
	const char *name, *target;
	uint64_t calls;
	int64_t ns;
};

static int same_blk(const struct host_blk *k, const struct merged *m)
{
	return !strcmp(k->name, m->name) &&
	       (k->target ? m->target && !strcmp(k->target, m->target) :
		!m->target);
}

/* Into v (h->nblk entries), largest first; returns how many, and the
 * time of the calls of the other threads in *other. */
static size_t merge_blk(const struct tp_host *h, int which, struct merged *v,
			int64_t *other)
{
	size_t n = 0, i, j;

	*other = 0;
	for (i = 0; i < h->nblk; i++) {
		const struct host_blk *k = &h->blk[i];
		int64_t ns = blk_ns(k, which);

		if (ns <= 0)
			continue;
		if (!tp_host_feeds(h, k->tid)) {
			*other += ns;
			continue;
		}
		for (j = 0; j < n && !same_blk(k, &v[j]); j++)
			;
		if (j == n)
			v[n++] = (struct merged){ k->name, k->target, 0, 0 };
		v[j].calls += which == IDLE ? k->idle_calls : k->calls;
		v[j].ns += ns;
	}
	for (i = 1; i < n; i++)		/* few: insertion sort */
		for (j = i; j > 0 && v[j - 1].ns < v[j].ns; j--) {
			struct merged t = v[j];

			v[j] = v[j - 1];
			v[j - 1] = t;
		}
	return n;
}

static int64_t shown_ns(const struct merged *v, size_t n)
{
	int64_t s = 0;
	size_t i;

	for (i = 0; i < n; i++)
		s += v[i].ns;
	return s;
}

static void put_blocking(struct tp_buf *b, const struct merged *v, size_t n)
{
	size_t i;

	tp_buf_char(b, '[');
	for (i = 0; i < n && i < TOP; i++) {
		tp_buf_cstr(b, i ? ",\n   {\"call\": " : "\n   {\"call\": ");
		tp_json_str(b, v[i].name);
		tp_buf_lit(b, ", \"file\": ");
		if (v[i].target)
			tp_json_str(b, v[i].target);
		else
			tp_buf_lit(b, "null");
		tp_buf_lit(b, ", \"calls\": ");
		tp_json_u64(b, v[i].calls);
		tp_buf_lit(b, ", \"ns\": ");
		tp_json_i64(b, v[i].ns);
		tp_buf_char(b, '}');
	}
	tp_buf_char(b, ']');
}

/* The stacks as a tree, outermost frame first: each node's time is what
 * the stacks through it stand for. */
struct node {
	uint32_t fn;
	uint32_t child, next;	/* index + 1, 0: none */
	int64_t ns;
};

struct tree {
	struct node *v;
	size_t n, cap;
	int oom;
};

static uint32_t add_node(struct tree *t, uint32_t fn)
{
	if (t->n == t->cap) {
		size_t cap = t->cap ? t->cap * 2 : 1024;
		struct node *v = realloc(t->v, cap * sizeof(*v));

		if (!v) {
			t->oom = 1;
			return 0;
		}
		t->v = v;
		t->cap = cap;
	}
	t->v[t->n] = (struct node){ fn, 0, 0, 0 };
	return (uint32_t)++t->n;
}

static uint32_t child_of(struct tree *t, uint32_t at, uint32_t fn)
{
	uint32_t c;

	for (c = t->v[at - 1].child; c; c = t->v[c - 1].next)
		if (t->v[c - 1].fn == fn)
			return c;
	c = add_node(t, fn);
	if (!c)
		return 0;
	t->v[c - 1].next = t->v[at - 1].child;
	t->v[at - 1].child = c;
	return c;
}

static void grow_tree(struct tree *t, const struct tp_host *h, int which)
{
	size_t i;
	unsigned j;

	if (!add_node(t, UINT32_MAX))
		return;
	for (i = 0; i < h->nstk && !t->oom; i++) {
		const struct host_stk *k = &h->stk[i];
		int64_t w = stk_ns(k, which);
		uint32_t at = 1;

		if (!w)
			continue;
		t->v[0].ns += w;
		for (j = k->n; j-- > 0 && at;) {
			at = child_of(t, at, k->fns[j]);
			if (at)
				t->v[at - 1].ns += w;
		}
	}
}

static void put_node(struct tp_buf *b, const struct tree *t,
		     const struct tp_host *h, uint32_t at, int64_t min,
		     unsigned depth)
{
	const struct node *n = &t->v[at - 1];
	uint32_t kids[FLAME_CHILDREN], c;
	size_t nk = 0, i, j;

	tp_buf_lit(b, "{\"name\": ");
	if (n->fn == UINT32_MAX)
		tp_buf_lit(b, "\"all\"");
	else
		tp_json_str(b, fn_name(h, n->fn));
	tp_buf_lit(b, ", \"ns\": ");
	tp_json_i64(b, n->ns);
	for (c = n->child; c && depth < FLAME_DEPTH; c = t->v[c - 1].next) {
		int64_t ns = t->v[c - 1].ns;

		if (ns < min)
			continue;
		for (j = nk; j > 0 && t->v[kids[j - 1] - 1].ns < ns; j--)
			if (j < FLAME_CHILDREN)
				kids[j] = kids[j - 1];
		if (j < FLAME_CHILDREN) {
			kids[j] = c;
			if (nk < FLAME_CHILDREN)
				nk++;
		}
	}
	if (nk) {
		tp_buf_lit(b, ", \"children\": [");
		for (i = 0; i < nk; i++) {
			if (i)
				tp_buf_char(b, ',');
			put_node(b, t, h, kids[i], min, depth + 1);
		}
		tp_buf_char(b, ']');
	}
	tp_buf_char(b, '}');
}

static void put_flame(struct tp_buf *b, const struct tp_host *h, int which)
{
	struct tree t = { 0 };

	grow_tree(&t, h, which);
	if (t.oom || !t.n) {
		tp_buf_lit(b, "null");
	} else {
		put_node(b, &t, h, 1, t.v[0].ns * FLAME_MIN_PER_MILLE / 1000,
			 0);
	}
	free(t.v);
}

static void put_part(struct tp_buf *b, struct tp_host *h, int which)
{
	struct merged *v = malloc((h->nblk ? h->nblk : 1) * sizeof(*v));
	int64_t other = 0;
	size_t n = v ? merge_blk(h, which, v, &other) : 0;

	fold(h, which);
	tp_buf_lit(b, "{\"samples\": ");
	tp_json_u64(b, which == IDLE ? h->idle_samples : h->samples);
	tp_buf_lit(b, ", \"sampled_ns\": ");
	tp_json_i64(b, which == IDLE ? h->idle_ns : h->sampled_ns);
	tp_buf_lit(b, ", \"blocking_ns\": ");
	tp_json_i64(b, shown_ns(v, n));
	tp_buf_lit(b, ", \"blocking_other_threads_ns\": ");
	tp_json_i64(b, other);
	tp_buf_lit(b, ",\n  \"functions\": ");
	put_fns(b, h, which, 0);
	tp_buf_lit(b, ",\n  \"python\": ");
	put_fns(b, h, which, 1);
	tp_buf_lit(b, ",\n  \"blocking\": ");
	put_blocking(b, v, n);
	tp_buf_lit(b, ",\n  \"flame\": ");
	put_flame(b, h, which);
	tp_buf_char(b, '}');
	free(v);
}

void tp_host_write_json(struct tp_host *h, struct tp_buf *b,
			int64_t gpu_idle_ns)
{
	tp_buf_lit(b, ",\n\"host_activity\": {\"version\": ");
	tp_json_u64(b, TP_HOST_SUMMARY_VERSION);
	tp_buf_lit(b, ", \"sampler\": ");
	if (h->mechanism)
		tp_json_str(b, h->mechanism);
	else
		tp_buf_lit(b, "null");
	tp_buf_lit(b, ", \"sample_hz\": ");
	if (h->hz)
		tp_json_u64(b, h->hz);
	else
		tp_buf_lit(b, "null");
	tp_buf_lit(b, ", \"samples\": ");
	tp_json_u64(b, h->samples);
	tp_buf_lit(b, ", \"sampled_ns\": ");
	tp_json_i64(b, h->sampled_ns);
	tp_buf_lit(b, ", \"samples_unread\": ");
	tp_json_u64(b, h->unread);
	tp_buf_lit(b, ", \"blocking_calls\": ");
	tp_json_u64(b, h->blocking);
	tp_buf_lit(b, ", \"blocking_ns\": ");
	tp_json_i64(b, h->blocking_ns);
	tp_buf_lit(b, ", \"gpu_idle_ns\": ");
	if (gpu_idle_ns >= 0)
		tp_json_i64(b, gpu_idle_ns);
	else
		tp_buf_lit(b, "null");
	tp_buf_lit(b, ",\n \"all\": ");
	put_part(b, h, ALL);
	tp_buf_lit(b, ",\n \"idle\": ");
	if (gpu_idle_ns >= 0)
		put_part(b, h, IDLE);
	else
		tp_buf_lit(b, "null");
	tp_buf_char(b, '}');
}

static void md_ms(struct tp_buf *b, int64_t ns)
{
	char t[48];

	snprintf(t, sizeof(t), "%.1f", (double)ns / 1e6);
	tp_buf_cstr(b, t);
}

static void md_pct(struct tp_buf *b, int64_t part, int64_t whole)
{
	char t[48];

	snprintf(t, sizeof(t), "%.1f %%", whole > 0 ? 100.0 * (double)part /
		 (double)whole : 0.0);
	tp_buf_cstr(b, t);
}

static void md_fns(struct tp_buf *b, struct tp_host *h, int which, int py,
		   int64_t whole)
{
	struct by c = { h, which, py };
	uint32_t ids[10];
	size_t n = top(&c, ids, 10), i;

	if (!n)
		return;
	tp_buf_cstr(b, py ? "\n| Python function (innermost) | ms | share |\n"
			   "|---|---:|---:|\n" :
			   "\n| function (self) | ms | share |\n|---|---:|---:|\n");
	for (i = 0; i < n; i++) {
		const struct host_fn *f = &h->fn[ids[i]];
		int64_t ns = py ? f->py_ns[which] : f->self_ns[which];

		tp_buf_lit(b, "| ");
		tp_md_cell(b, fn_name(h, ids[i]), 120);
		tp_buf_lit(b, " | ");
		md_ms(b, ns);
		tp_buf_lit(b, " | ");
		md_pct(b, ns, whole);
		tp_buf_lit(b, " |\n");
	}
}

static void md_blocking(struct tp_buf *b, const struct merged *v, size_t n,
			int64_t whole)
{
	size_t i;

	for (i = 0; i < n && i < 10; i++) {
		if (!i)
			tp_buf_lit(b, "\n| blocking call | file | calls | ms | "
				   "share |\n|---|---|---:|---:|---:|\n");
		tp_buf_lit(b, "| ");
		tp_md_cell(b, v[i].name, 60);
		tp_buf_lit(b, " | ");
		tp_md_cell(b, v[i].target ? v[i].target : "", 80);
		tp_buf_lit(b, " | ");
		tp_json_u64(b, v[i].calls);
		tp_buf_lit(b, " | ");
		md_ms(b, v[i].ns);
		tp_buf_lit(b, " | ");
		md_pct(b, v[i].ns, whole);
		tp_buf_lit(b, " |\n");
	}
}

void tp_host_write_md(struct tp_host *h, struct tp_buf *b,
		      int64_t gpu_idle_ns, int64_t wall_ns)
{
	int which = gpu_idle_ns >= 0 ? IDLE : ALL;
	int64_t whole = which == IDLE ? gpu_idle_ns : wall_ns, other = 0;
	struct merged *v = malloc((h->nblk ? h->nblk : 1) * sizeof(*v));
	size_t n = v ? merge_blk(h, which, v, &other) : 0;

	fold(h, which);
	tp_buf_cstr(b, which == IDLE ?
		   "\n## Host while the GPU was idle\n\n" :
		   "\n## Host\n\n");
	if (which == IDLE) {
		tp_buf_lit(b, "GPU idle ");
		md_ms(b, gpu_idle_ns);
		tp_buf_lit(b, " ms; meanwhile ");
	}
	tp_buf_lit(b, "CPU samples ");
	md_ms(b, which == IDLE ? h->idle_ns : h->sampled_ns);
	tp_buf_lit(b, " ms, blocked ");
	md_ms(b, shown_ns(v, n));
	tp_buf_cstr(b, which == IDLE ? " ms (shares below are of the idle time, "
		    "threads added up; sampler: " : " ms (shares below are of "
		    "the wall time, threads added up; sampler: ");
	tp_buf_cstr(b, h->mechanism ? h->mechanism : "unknown");
	tp_buf_lit(b, ").\n");
	md_fns(b, h, which, 1, whole);
	md_fns(b, h, which, 0, whole);
	md_blocking(b, v, n, whole);
	free(v);
}
