/* tprof report's hang section (see report_hang.h): per communicator,
 * matched across ranks by its id, the collective the ranks wait in and
 * who never entered it or entered another. */
#include <string.h>

#include "report_hang.h"
#include "report_hang_int.h"
#include "report_input.h"

/* A communicator's name across ranks: its id, else its address in that
 * process (which no other rank shares). */
static void comm_key(const struct member *m, char *out, size_t len)
{
	const char *id = str(m->comm, "comm_id");

	if (id)
		snprintf(out, len, "%s", id);
	else
		snprintf(out, len, "%s@%" PRId64, str(m->comm, "comm") ?
			 str(m->comm, "comm") : "?",
			 num(m->d->root, "pid", 0));
}

static const struct tp_json_node *thread_in(const struct dump *d,
					    const char *comm)
{
	const struct tp_json_node *t;

	for (t = arr(d->root, "threads"); t; t = t->next) {
		const struct tp_json_node *a = tp_json_get(t, "args");

		const char *kind = str(a, "kind");

		/* In a collective, or in the ncclGroupEnd that launches it. */
		if (kind && (!strcmp(kind, "collective") ||
			     !strcmp(kind, "group")) &&
		    str(a, "comm") && comm && !strcmp(str(a, "comm"), comm))
			return t;
	}
	return NULL;
}

/* The collective a thread waits in: the one it called, or the first one
 * its group launches in ncclGroupEnd. */
static const char *coll_name(const struct tp_json_node *t)
{
	const char *n = str(tp_json_get(t, "args"), "awaits");

	if (!n)
		n = str(t, "call");
	return n ? n : "?";
}

/* What a thread in a collective called: "ncclAllReduce #5 (1024 ×
 * ncclFloat32)", "in ncclGroupEnd" after it when it waits there. */
static void put_call(struct tp_buf *b, const struct tp_json_node *t)
{
	const struct tp_json_node *a = tp_json_get(t, "args");
	char s[160];

	snprintf(s, sizeof(s), "%s #%" PRId64 " (%" PRId64 " × %s)%s",
		 coll_name(t), num(a, "seq", 0), num(a, "count", 0),
		 str(a, "dtype") ? str(a, "dtype") : "?",
		 str(a, "awaits") ? " in ncclGroupEnd" : "");
	tp_buf_cstr(b, s);
}

static int same_call(const struct tp_json_node *x,
		     const struct tp_json_node *y)
{
	const struct tp_json_node *a = tp_json_get(x, "args");
	const struct tp_json_node *c = tp_json_get(y, "args");
	const char *d1 = str(a, "dtype"), *d2 = str(c, "dtype");

	return !strcmp(coll_name(x), coll_name(y)) &&
	       num(a, "count", -1) == num(c, "count", -1) &&
	       !strcmp(d1 ? d1 : "", d2 ? d2 : "");
}


static int collect_members(struct hangs *h, struct member **out, size_t *n)
{
	const struct tp_json_node *c;
	struct member *v = NULL, *nv;
	size_t i, k = 0, cap = 0;

	for (i = 0; i < h->n; i++) {
		for (c = arr(h->d[i].root, "communicators"); c; c = c->next) {
			if (k == cap) {
				cap = cap ? 2 * cap : 16;
				nv = realloc(v, cap * sizeof(*v));
				if (!nv) {
					free(v);
					return -1;
				}
				v = nv;
			}
			v[k].d = &h->d[i];
			v[k].comm = c;
			v[k].in = thread_in(&h->d[i], str(c, "comm"));
			v[k].crank = num(c, "rank", -1);
			k++;
		}
	}
	*out = v;
	*n = k;
	return 0;
}

static int64_t seq_in(const struct member *m)
{
	return m->in ? num(tp_json_get(m->in, "args"), "seq", -1) : -1;
}

/* The ranks (of g) whose member satisfies keep, sorted, in r. */
static size_t pick(struct member **g, size_t k, int64_t *r,
		   int (*keep)(const struct member *, int64_t), int64_t arg)
{
	size_t i, n = 0;

	for (i = 0; i < k; i++)
		if (keep(g[i], arg))
			r[n++] = g[i]->crank;
	qsort(r, n, sizeof(*r), cmp_i64);
	return n;
}

static int is_waiting(const struct member *m, int64_t seq)
{
	return seq_in(m) == seq;
}

static int is_behind(const struct member *m, int64_t seq)
{
	return num(m->comm, "entered", 0) < seq;
}

static void put_comm_name(struct tp_buf *b, const struct member *m)
{
	tp_buf_lit(b, "comm ");
	tp_buf_cstr(b, str(m->comm, "comm") ? str(m->comm, "comm") : "?");
	if (str(m->comm, "comm_id")) {
		tp_buf_lit(b, " (id ");
		tp_buf_cstr(b, str(m->comm, "comm_id"));
		tp_buf_char(b, ')');
	}
}

/* Ranks of [0, size) with no member in g. */
static size_t missing(struct member **g, size_t k, int64_t size, int64_t *r)
{
	size_t i, n = 0;
	int64_t x;

	for (x = 0; x < size; x++) {
		for (i = 0; i < k && g[i]->crank != x; i++)
			;
		if (i == k)
			r[n++] = x;
	}
	return n;
}

/* The ranks that called the same as g[first], among the waiting. */
static void put_variant(struct tp_buf *b, struct member **g, size_t k,
			size_t first, int64_t seq, int64_t *r)
{
	size_t i, n = 0;

	for (i = 0; i < k; i++)
		if (is_waiting(g[i], seq) && same_call(g[i]->in, g[first]->in))
			r[n++] = g[i]->crank;
	qsort(r, n, sizeof(*r), cmp_i64);
	put_who(b, r, n);
	tp_buf_lit(b, " called ");
	put_call(b, g[first]->in);
}

static void put_mismatch(struct tp_buf *b, struct member **g, size_t k,
			 size_t w, int64_t seq, int64_t wait, int64_t *r)
{
	size_t i, j;

	tp_buf_lit(b, "- **mismatch in collective #");
	tp_json_i64(b, seq);
	tp_buf_lit(b, " on ");
	put_comm_name(b, g[w]);
	tp_buf_lit(b, "**: ");
	for (i = 0; i < k; i++) {
		if (!is_waiting(g[i], seq))
			continue;
		for (j = 0; j < i; j++)
			if (is_waiting(g[j], seq) &&
			    same_call(g[j]->in, g[i]->in))
				break;
		if (j < i)
			continue;
		if (i != w)
			tp_buf_lit(b, "; ");
		put_variant(b, g, k, i, seq, r);
	}
	tp_buf_lit(b, "; they are waiting in it for ");
	put_secs(b, wait);
	tp_buf_lit(b, "\n");
}

/* What a rank that did not enter the collective is doing. */
static void put_behind(struct tp_buf *b, struct member **g, size_t k,
		       int64_t seq)
{
	const struct tp_json_node *t;
	char s[160];
	size_t i;

	for (i = 0; i < k; i++) {
		if (!is_behind(g[i], seq))
			continue;
		snprintf(s, sizeof(s), "  - rank %" PRId64 " entered #%" PRId64
			 " and completed #%" PRId64 " on it; ", g[i]->crank,
			 num(g[i]->comm, "entered", 0),
			 num(g[i]->comm, "completed", 0));
		tp_buf_cstr(b, s);
		t = arr(g[i]->d->root, "threads");
		if (!t) {
			tp_buf_lit(b, "it is in no hooked call\n");
			continue;
		}
		tp_buf_lit(b, "it is in ");
		tp_buf_cstr(b, str(t, "call") ? str(t, "call") : "?");
		tp_buf_lit(b, " for ");
		put_secs(b, num(t, "for_ns", 0));
		tp_buf_lit(b, "\n");
	}
}

static void put_never(struct tp_buf *b, struct member **g, size_t k,
		      size_t w, int64_t seq, int64_t size, int64_t wait,
		      int64_t *r)
{
	size_t n = pick(g, k, r, is_behind, seq);
	size_t m = missing(g, k, size, r + n);

	qsort(r, n + m, sizeof(*r), cmp_i64);
	tp_buf_lit(b, "- **");
	put_who(b, r, n + m);
	tp_buf_lit(b, " never called ");
	tp_buf_cstr(b, coll_name(g[w]->in));
	tp_buf_lit(b, " #");
	tp_json_i64(b, seq);
	tp_buf_lit(b, " on ");
	put_comm_name(b, g[w]);
	tp_buf_lit(b, "**; ");
	n = pick(g, k, r, is_waiting, seq);
	put_who(b, r, n);
	tp_buf_cstr(b, n > 1 ? " are waiting in it for " :
		   " is waiting in it for ");
	put_secs(b, wait);
	tp_buf_lit(b, "\n");
	put_behind(b, g, k, seq);
	m = missing(g, k, size, r);
	if (m) {
		tp_buf_lit(b, "  - no dump from ");
		put_who(b, r, m);
		tp_buf_lit(b, " (not inside a hooked call for TPROF_HANG "
			   "seconds, or not run under tprof)\n");
	}
}

static void put_table(struct tp_buf *b, struct member **g, size_t k,
		      int64_t size)
{
	char s[200];
	int64_t x;
	size_t i;

	tp_buf_lit(b, "\n| rank | job rank | entered | completed | now in "
		   "|\n|---:|---:|---:|---:|---|\n");
	for (x = 0; x < size || x == 0; x++) {
		for (i = 0; i < k && g[i]->crank != x; i++)
			;
		if (i == k) {
			snprintf(s, sizeof(s), "| %" PRId64 " | | | | no dump "
				 "|\n", x);
			tp_buf_cstr(b, s);
			continue;
		}
		snprintf(s, sizeof(s), "| %" PRId64 " | %" PRId64 " | %" PRId64
			 " | %" PRId64 " | ", x, g[i]->d->rank,
			 num(g[i]->comm, "entered", 0),
			 num(g[i]->comm, "completed", 0));
		tp_buf_cstr(b, s);
		if (g[i]->in) {
			put_call(b, g[i]->in);
			tp_buf_lit(b, " for ");
			put_secs(b, num(g[i]->in, "for_ns", 0));
		}
		tp_buf_lit(b, " |\n");
	}
	tp_buf_lit(b, "\n");
}

/* One communicator seen by k ranks. */
static void comm_finding(struct tp_buf *b, struct member **g, size_t k,
			 int64_t *r)
{
	int64_t size = 0, seq = 0, wait = 0;
	size_t i, w = k;
	int mismatch = 0;

	for (i = 0; i < k; i++) {
		if (num(g[i]->comm, "size", 0) > size)
			size = num(g[i]->comm, "size", 0);
		if (num(g[i]->comm, "entered", 0) > seq)
			seq = num(g[i]->comm, "entered", 0);
	}
	if (!seq)		/* no collective on it yet: nothing to say */
		return;
	for (i = 0; i < k; i++) {
		if (!is_waiting(g[i], seq))
			continue;
		if (w == k)
			w = i;
		else if (!same_call(g[w]->in, g[i]->in))
			mismatch = 1;
		if (num(g[i]->in, "for_ns", 0) > wait)
			wait = num(g[i]->in, "for_ns", 0);
	}
	tp_buf_lit(b, "### ");
	put_comm_name(b, g[0]);
	tp_buf_lit(b, ", ");
	tp_json_i64(b, size);
	tp_buf_lit(b, " ranks\n\n");
	if (w < k && mismatch)
		put_mismatch(b, g, k, w, seq, wait, r);
	if (w < k && (pick(g, k, r, is_behind, seq) ||
		      missing(g, k, size, r)))
		put_never(b, g, k, w, seq, size, wait, r);
	else if (w < k && !mismatch) {
		tp_buf_lit(b, "- every rank is in ");
		put_call(b, g[w]->in);
		tp_buf_lit(b, " on ");
		put_comm_name(b, g[w]);
		tp_buf_lit(b, " for up to ");
		put_secs(b, wait);
		tp_buf_lit(b, ": all entered it with the same call, count and "
			   "type, yet it does not complete (a network or GPU "
			   "fault, or a peer outside this communicator)\n");
	}
	put_table(b, g, k, size);
}

static int by_crank(const void *a, const void *b)
{
	const struct member *x = *(struct member *const *)a;
	const struct member *y = *(struct member *const *)b;

	return x->crank < y->crank ? -1 : x->crank > y->crank;
}

static int by_rank(const void *a, const void *b)
{
	const struct dump *x = a, *y = b;

	return x->rank < y->rank ? -1 : x->rank > y->rank;
}

static int hang_findings(struct hangs *h, struct tp_buf *b)
{
	char ki[300], kj[300];
	struct member *v, **g;
	int64_t *r;
	size_t n, i, j, k;
	char *done;

	if (collect_members(h, &v, &n))
		return -1;
	g = calloc(n + 1, sizeof(*g));
	done = calloc(n + 1, 1);
	r = calloc(2 * n + 2 + 4096, sizeof(*r));
	if (!g || !done || !r) {
		free(v), free(g), free(done), free(r);
		return -1;
	}
	for (i = 0; i < n; i++) {
		if (done[i])
			continue;
		comm_key(&v[i], ki, sizeof(ki));
		for (k = 0, j = i; j < n; j++) {
			comm_key(&v[j], kj, sizeof(kj));
			if (strcmp(ki, kj))
				continue;
			done[j] = 1;
			g[k++] = &v[j];
		}
		/* Named as the lowest rank sees it: one answer per input. */
		qsort(g, k, sizeof(*g), by_crank);
		comm_finding(b, g, k, r);
	}
	free(v), free(g), free(done), free(r);
	if (rp_hang_inits(h, b) < 0)
		return -1;
	rp_hang_stuck(h, b);
	return 0;
}

int rp_hang_section(char **files, size_t *nfiles, struct tp_buf *out)
{
	struct hangs h = { 0 };
	int64_t *ranks;
	size_t i;
	int ret = -1;

	if (rp_hang_collect(&h, files, nfiles))
		goto out;
	ret = (int)h.n;
	if (!h.n)
		goto out;
	qsort(h.d, h.n, sizeof(*h.d), by_rank);
	ranks = calloc(h.n, sizeof(*ranks));
	if (!ranks) {
		ret = rp_fail("hang dumps", "out of memory");
		goto out;
	}
	for (i = 0; i < h.n; i++)
		ranks[i] = h.d[i].rank;
	qsort(ranks, h.n, sizeof(*ranks), cmp_i64);
	tp_buf_lit(out, "## Hang\n\nDumps from ");
	put_who(out, ranks, h.n);
	tp_buf_lit(out, ".\n\n");
	free(ranks);
	if (hang_findings(&h, out) < 0)
		ret = rp_fail("hang dumps", "out of memory");
out:
	rp_hang_free(&h);
	return ret;
}
