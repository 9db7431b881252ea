/* tprof report's hang section (see report_hang.h): the dumps of every
 * rank, one per rank; per communicator, matched across ranks by its id,
 * the collective the ranks disagree on or did not all enqueue
 * (report_hang_seq.c); ranks stuck in ncclCommInitRank and the table of
 * stuck calls (report_hang_other.c). */
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

/* The thread of d inside a collective on comm (or in the ncclGroupEnd
 * that launches one): NCCL blocks a host in a collective at times (its
 * queue full, a blocking communicator's group). */
static const struct tp_json_node *thread_in(const struct dump *d,
					    const char *comm)
{
	const struct tp_json_node *t;

	for (t = arr(d->root, "threads"); t; t = t->next) {
		const struct tp_json_node *a = tp_json_get(t, "args");
		const char *kind = str(a, "kind");

		if (kind && (!strcmp(kind, "collective") ||
			     !strcmp(kind, "group")) &&
		    str(a, "comm") && comm && !strcmp(str(a, "comm"), comm))
			return t;
	}
	return NULL;
}

static void fill_member(struct member *m, struct dump *d,
			const struct tp_json_node *c)
{
	m->d = d;
	m->comm = c;
	m->in = thread_in(d, str(c, "comm"));
	m->crank = num(c, "rank", -1);
	m->entered = num(c, "entered", 0);
	/* Version 1 said "completed" for the last call that returned. */
	m->enqueued = num(c, "enqueued", num(c, "completed", 0));
	m->done = num(c, "done", m->enqueued);
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
			fill_member(&v[k++], &h->d[i], c);
		}
	}
	*out = v;
	*n = k;
	return 0;
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

/* Per communicator, its members together; 1 when a finding was said. */
static int comm_findings(struct member *v, size_t n, struct tp_buf *b)
{
	char ki[300], kj[300];
	struct member **g;
	size_t i, j, k, room = 0;
	int64_t *r;
	char *done;
	int said = 0;

	for (i = 0; i < n; i++)
		if (num(v[i].comm, "size", 0) > 0 &&
		    (size_t)num(v[i].comm, "size", 0) < (1u << 24))
			room += (size_t)num(v[i].comm, "size", 0);
	g = calloc(n + 1, sizeof(*g));
	done = calloc(n + 1, 1);
	r = calloc(2 * n + room + 2, sizeof(*r));
	if (!g || !done || !r) {
		free(g), free(done), free(r);
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
		said |= rp_hang_comm(b, g, k, r);
	}
	free(g), free(done), free(r);
	return said;
}

static int hang_findings(struct hangs *h, struct tp_buf *b)
{
	struct member *v;
	size_t n;
	int said, inits;

	if (collect_members(h, &v, &n))
		return -1;
	said = comm_findings(v, n, b);
	free(v);
	if (said < 0 || (inits = rp_hang_inits(h, b)) < 0)
		return -1;
	if (!said && !inits)
		tp_buf_lit(b, "- no communicator has a collective its ranks "
			   "disagree on or did not all enqueue\n\n");
	rp_hang_stuck(h, b);
	return 0;
}

/* The dumps written only because each process ended (a normal exit):
 * nothing hung, nothing to say. */
static int all_exits(const struct hangs *h)
{
	size_t i;

	for (i = 0; i < h->n; i++)
		if (!h->d[i].reason || strcmp(h->d[i].reason, "exit"))
			return 0;
	return 1;
}

/* "Dumps from ranks 0–3 (rank 2: exit)": why each ended, when it did. */
static void put_header(const struct hangs *h, struct tp_buf *out,
		       int64_t *ranks)
{
	size_t i;

	for (i = 0; i < h->n; i++)
		ranks[i] = h->d[i].rank;
	tp_buf_lit(out, "## Hang\n\nDumps from ");
	put_who(out, ranks, h->n);
	for (i = 0; i < h->n; i++) {
		if (!h->d[i].ended)
			continue;
		tp_buf_cstr(out, "; rank ");
		tp_json_i64(out, h->d[i].rank);
		tp_buf_lit(out, " ended (");
		tp_buf_cstr(out, h->d[i].reason);
		tp_buf_lit(out, ")");
	}
	tp_buf_lit(out, ".\n\n");
}

int rp_hang_section(char **files, size_t *nfiles, struct tp_buf *out)
{
	struct hangs h = { 0 };
	int64_t *ranks;
	int ret = -1;

	if (rp_hang_collect(&h, files, nfiles))
		goto out;
	ret = (int)h.n;
	if (!h.n || all_exits(&h)) {
		ret = 0;
		goto out;
	}
	qsort(h.d, h.n, sizeof(*h.d), by_rank);
	ranks = calloc(h.n, sizeof(*ranks));
	if (!ranks) {
		ret = rp_fail("hang dumps", "out of memory");
		goto out;
	}
	put_header(&h, out, ranks);
	free(ranks);
	if (hang_findings(&h, out) < 0)
		ret = rp_fail("hang dumps", "out of memory");
out:
	rp_hang_free(&h);
	return ret;
}
