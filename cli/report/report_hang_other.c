/* tprof report's hang section: the ranks stuck in ncclCommInitRank, by
 * the unique id they joined, and the table of every stuck call. */
#include <string.h>

#include "report_hang_int.h"

/* t is a thread in ncclCommInitRank* of the communicator id (any id
 * when NULL): its id, else NULL. */
static const char *init_id(const struct tp_json_node *t, const char *id)
{
	const struct tp_json_node *a = tp_json_get(t, "args");
	const char *kind = str(a, "kind"), *tid = str(a, "comm_id");

	if (!kind || strcmp(kind, "init") || !tid || (id && strcmp(id, tid)))
		return NULL;
	return tid;
}

/* 1 when a thread before t (of dump i) is in the same init: reported. */
static int seen_before(const struct hangs *h, size_t i,
		       const struct tp_json_node *t, const char *id)
{
	const struct tp_json_node *u;
	size_t j;

	for (j = 0; j <= i; j++)
		for (u = arr(h->d[j].root, "threads"); u; u = u->next) {
			if (j == i && u == t)
				return 0;
			if (init_id(u, id))
				return 1;
		}
	return 0;
}

/* The ranks in the init of id, sorted, into r (room for max); the
 * longest wait in *wait. */
static size_t init_ranks(const struct hangs *h, const char *id, int64_t *r,
			 size_t max, int64_t *wait)
{
	const struct tp_json_node *t;
	size_t i, n = 0;

	*wait = 0;
	for (i = 0; i < h->n; i++)
		for (t = arr(h->d[i].root, "threads"); t; t = t->next) {
			if (!init_id(t, id) || n == max)
				continue;
			r[n++] = num(tp_json_get(t, "args"), "rank", -1);
			if (num(t, "for_ns", 0) > *wait)
				*wait = num(t, "for_ns", 0);
		}
	qsort(r, n, sizeof(*r), cmp_i64);
	return n;
}

/* The ranks of [0, nranks) not in r[0..n), into miss. */
static size_t absent(const int64_t *r, size_t n, int64_t nranks,
		     int64_t *miss)
{
	size_t m = 0, q;
	int64_t x;

	for (x = 0; x < nranks; x++) {
		for (q = 0; q < n && r[q] != x; q++)
			;
		if (q == n)
			miss[m++] = x;
	}
	return m;
}

static void put_init(struct tp_buf *b, const struct tp_json_node *t,
		     const char *id, const int64_t *r, size_t n,
		     const int64_t *miss, size_t m, int64_t wait)
{
	tp_buf_lit(b, "### ncclCommInitRank, id ");
	tp_buf_cstr(b, id);
	tp_buf_lit(b, ", ");
	tp_json_i64(b, num(tp_json_get(t, "args"), "nranks", 0));
	tp_buf_lit(b, " ranks\n\n- **");
	if (m) {
		put_who(b, miss, m);
		tp_buf_lit(b, " never joined ");
	} else {
		tp_buf_lit(b, "every rank joined ");
	}
	tp_buf_cstr(b, str(t, "call") ? str(t, "call") : "?");
	tp_buf_lit(b, " of communicator id ");
	tp_buf_cstr(b, id);
	tp_buf_lit(b, "**; ");
	put_who(b, r, n);
	tp_buf_cstr(b, n > 1 ? " are waiting in it for " :
		    " is waiting in it for ");
	put_secs(b, wait);
	tp_buf_lit(b, "\n\n");
}

/* Ranks stuck in ncclCommInitRank, once per unique id, and the ranks of
 * [0, nranks) that never joined; how many ids. */
int rp_hang_inits(struct hangs *h, struct tp_buf *b)
{
	int said = 0;

	const struct tp_json_node *t;
	size_t i, max = 0, n, m;
	int64_t *r, *miss, nr, wait;
	const char *id;

	for (i = 0; i < h->n; i++)
		for (t = arr(h->d[i].root, "threads"); t; t = t->next)
			max += init_id(t, NULL) != NULL;
	for (i = 0; i < h->n; i++) {
		for (t = arr(h->d[i].root, "threads"); t; t = t->next) {
			id = init_id(t, NULL);
			if (!id || seen_before(h, i, t, id))
				continue;
			nr = num(tp_json_get(t, "args"), "nranks", 0);
			if (nr < 0 || nr > (1 << 24))
				nr = 0;
			r = calloc(max + 1, sizeof(*r));
			miss = calloc((size_t)nr + 1, sizeof(*miss));
			if (!r || !miss) {
				free(r);
				free(miss);
				return -1;
			}
			n = init_ranks(h, id, r, max, &wait);
			m = absent(r, n, nr, miss);
			put_init(b, t, id, r, n, miss, m, wait);
			free(r);
			free(miss);
			said++;
		}
	}
	return said;
}

/* A frame in the C library: the wait or the sleep itself. */
static int in_libc(const char *f)
{
	return strstr(f, "(libc.so") || !strncmp(f, "libc.so", 7) ||
	       strstr(f, "(libpthread.so");
}

void rp_hang_put_stack(struct tp_buf *b, const struct tp_json_node *stack)
{
	const struct tp_json_node *f = stack;
	int k;

	while (f && f->next && f->type == TP_JSON_STRING && in_libc(f->str))
		f = f->next;
	if (!f)
		return;
	tp_buf_lit(b, "; stack: ");
	for (k = 0; f && k < 3; f = f->next, k++) {
		if (k)
			tp_buf_lit(b, " ← ");
		if (f->type == TP_JSON_STRING)
			tp_buf_cstr(b, f->str);
	}
}

/* Every call past the threshold, with the top of its stack. */
void rp_hang_stuck(struct hangs *h, struct tp_buf *b)
{
	const struct tp_json_node *t, *f;
	char s[200];
	size_t i;
	int any = 0, k;

	for (i = 0; i < h->n; i++) {
		for (t = arr(h->d[i].root, "threads"); t; t = t->next) {
			if (!num(t, "stuck", 0))
				continue;
			if (!any)
				tp_buf_lit(b, "### Stuck calls\n\n| rank | "
					   "thread | call | for | stack (top) "
					   "|\n|---:|---|---|---:|---|\n");
			any = 1;
			snprintf(s, sizeof(s), "| %" PRId64 " | %" PRId64 " ",
				 h->d[i].rank, num(t, "tid", 0));
			tp_buf_cstr(b, s);
			tp_buf_cstr(b, str(t, "thread") ? str(t, "thread") :
				    "");
			tp_buf_lit(b, " | ");
			tp_buf_cstr(b, str(t, "call") ? str(t, "call") : "?");
			tp_buf_lit(b, " | ");
			put_secs(b, num(t, "for_ns", 0));
			tp_buf_lit(b, " | ");
			for (k = 0, f = arr(t, "stack"); f && k < 3;
			     f = f->next, k++) {
				if (k)
					tp_buf_lit(b, " ← ");
				if (f->type == TP_JSON_STRING)
					tp_buf_cstr(b, f->str);
			}
			tp_buf_lit(b, " |\n");
		}
	}
	if (any)
		tp_buf_lit(b, "\n");
}

