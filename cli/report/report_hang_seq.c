/* tprof report's hang section: one communicator's collectives across its
 * ranks. NCCL matches every rank's n-th collective on a communicator with
 * the others' n-th; a collective only enqueues, and completes on the GPU
 * once every rank enqueued the same one. So from the first collective
 * some rank has not seen complete, the first number where the ranks
 * disagree (call, count, type, op, root) or where some rank never
 * enqueued it is what hangs, and each rank that differs or lags is named
 * with where it is: in a call, in host code, or ended. */
#include <string.h>

#include "report_hang_int.h"

/* Lines naming ranks, per finding; the table lists them all. */
#define MAX_LINES 16

static void put_num(struct tp_buf *b, const char *pre, int64_t n,
		    const char *post)
{
	tp_buf_cstr(b, pre);
	tp_json_i64(b, n);
	tp_buf_cstr(b, post);
}

static const struct tp_json_node *args_of(const struct tp_json_node *t)
{
	return tp_json_get(t, "args");
}

/* The collective a thread waits in: the one it called, or the first one
 * its group launches in ncclGroupEnd. */
static const char *coll_name(const struct tp_json_node *t)
{
	const char *n = str(args_of(t), "awaits");

	if (!n)
		n = str(t, "call");
	return n ? n : "?";
}

/* Member m's collective n, from its log or its thread inside it. */
static int sig_at(const struct member *m, int64_t n, struct sig *s)
{
	const struct tp_json_node *c, *a;

	for (c = arr(m->comm, "collectives"); c; c = c->next) {
		if (num(c, "seq", -1) != n)
			continue;
		s->call = str(c, "call");
		s->dtype = str(c, "dtype");
		s->op = str(c, "op");
		s->count = num(c, "count", -1);
		s->root = num(c, "root", -1);
		return 1;
	}
	a = m->in ? args_of(m->in) : NULL;
	if (!a || num(a, "seq", -1) != n)
		return 0;
	s->call = coll_name(m->in);
	s->dtype = str(a, "dtype");
	s->op = str(a, "op");
	s->count = num(a, "count", -1);
	s->root = num(a, "root", -1);
	return 1;
}

static int same_str(const char *a, const char *b)
{
	return !strcmp(a ? a : "", b ? b : "");
}

static int same_sig(const struct sig *a, const struct sig *b)
{
	return same_str(a->call, b->call) && same_str(a->dtype, b->dtype) &&
	       same_str(a->op, b->op) && a->count == b->count &&
	       a->root == b->root;
}

/* "ncclAllReduce #7 (1024 × ncclFloat32, ncclSum, root 0)" */
static void put_sig(struct tp_buf *b, const struct sig *s, int64_t n)
{
	char t[96];

	tp_buf_cstr(b, s->call ? s->call : "?");
	snprintf(t, sizeof(t), " #%" PRId64 " (%" PRId64 " × ", n, s->count);
	tp_buf_cstr(b, t);
	tp_buf_cstr(b, s->dtype ? s->dtype : "?");
	if (s->op) {
		tp_buf_lit(b, ", ");
		tp_buf_cstr(b, s->op);
	}
	if (s->root >= 0) {
		snprintf(t, sizeof(t), ", root %" PRId64, s->root);
		tp_buf_cstr(b, t);
	}
	tp_buf_char(b, ')');
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

/* The thread of m's process in a hooked call that says most: a wait in
 * a collective or a sync, else the longest. */
static const struct tp_json_node *busy_thread(const struct member *m)
{
	const struct tp_json_node *t, *best = NULL;
	const char *kind;

	if (m->in)
		return m->in;
	for (t = arr(m->d->root, "threads"); t; t = t->next) {
		kind = str(args_of(t), "kind");
		if (kind && !strcmp(kind, "sync"))
			return t;
		if (!best || num(t, "for_ns", 0) > num(best, "for_ns", 0))
			best = t;
	}
	return best;
}

/* The thread of m's process that called NCCL and is in no hooked call. */
static const struct tp_json_node *idle_thread(const struct member *m)
{
	return arr(m->d->root, "idle");
}

/* Where m's process is: "in cudaStreamSynchronize for 2.0 s; stack: …",
 * "in host code …", "its process ended (SIGSEGV) …". */
static void put_where(struct tp_buf *b, const struct member *m)
{
	const struct tp_json_node *t = busy_thread(m);
	char s[160];

	if (m->d->ended) {
		snprintf(s, sizeof(s), "its process ended (%s) after "
			 "enqueuing #%" PRId64, m->d->reason, m->enqueued);
		tp_buf_cstr(b, s);
		return;
	}
	if (t) {
		tp_buf_lit(b, "it is in ");
		tp_buf_cstr(b, str(t, "call") ? str(t, "call") : "?");
		tp_buf_lit(b, " for ");
		put_secs(b, num(t, "for_ns", 0));
		rp_hang_put_stack(b, arr(t, "stack"));
		return;
	}
	t = idle_thread(m);
	if (!t) {
		tp_buf_lit(b, "it is in no hooked call");
		return;
	}
	tp_buf_lit(b, "it is in host code (no CUDA or NCCL call)");
	if (str(t, "last_call")) {
		tp_buf_lit(b, " for ");
		put_secs(b, num(t, "since_ns", 0));
		tp_buf_lit(b, ", since ");
		tp_buf_cstr(b, str(t, "last_call"));
		tp_buf_lit(b, " returned");
	}
	if (arr(t, "stack"))
		rp_hang_put_stack(b, arr(t, "stack"));
	else
		tp_buf_lit(b, " (no stack: TPROF_DUMP_SIGNAL lets tprof ask "
			   "for it)");
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

/* The ranks that enqueued n: where they wait, one line. */
static void put_waiting(struct tp_buf *b, struct member **g, size_t k,
			int64_t n, int64_t *r)
{
	const struct tp_json_node *t;
	const char *call = NULL;
	int64_t wait = 0;
	size_t i, m = 0;
	int one = 1;

	for (i = 0; i < k; i++) {
		if (g[i]->entered < n)
			continue;
		r[m++] = g[i]->crank;
		t = g[i]->d->ended ? NULL : busy_thread(g[i]);
		if (!t)
			continue;
		if (call && strcmp(call, str(t, "call") ? str(t, "call") : ""))
			one = 0;
		call = str(t, "call") ? str(t, "call") : "";
		if (num(t, "for_ns", 0) > wait)
			wait = num(t, "for_ns", 0);
	}
	if (!m)
		return;
	tp_buf_lit(b, "  - ");
	put_who(b, r, m);
	put_num(b, " enqueued #", n, m > 1 ? " and wait" : " and waits");
	if (call && one) {
		tp_buf_lit(b, " in ");
		tp_buf_cstr(b, call);
	}
	if (wait) {
		tp_buf_lit(b, " for up to ");
		put_secs(b, wait);
	}
	tp_buf_lit(b, "\n");
}

static void put_lag(struct tp_buf *b, const struct member *m,
		    const struct member *name, const char *call, int64_t n)
{
	char s[64];

	snprintf(s, sizeof(s), "- **rank %" PRId64 " never enqueued ",
		 m->crank);
	tp_buf_cstr(b, s);
	tp_buf_cstr(b, call);
	snprintf(s, sizeof(s), " #%" PRId64 "** on ", n);
	tp_buf_cstr(b, s);
	put_comm_name(b, name);
	snprintf(s, sizeof(s), " (it enqueued up to #%" PRId64 "): ",
		 m->entered);
	tp_buf_cstr(b, s);
	put_where(b, m);
	tp_buf_lit(b, "\n");
}

/* Ranks that never enqueued n: one line each (up to MAX_LINES), then the
 * ones without a dump. */
static void put_never(struct tp_buf *b, struct member **g, size_t k,
		      int64_t size, int64_t n, const struct sig *s,
		      int64_t *r)
{
	size_t i, lines = 0, more = 0, m;
	const char *call = s->call ? s->call : "the collective";

	for (i = 0; i < k; i++) {
		if (g[i]->entered >= n)
			continue;
		if (lines++ < MAX_LINES)
			put_lag(b, g[i], g[0], call, n);
		else
			more++;
	}
	m = missing(g, k, size, r);
	if (m) {
		tp_buf_lit(b, "- **");
		put_who(b, r, m);
		tp_buf_lit(b, " never enqueued ");
		tp_buf_cstr(b, call);
		put_num(b, " #", n, "** on ");
		put_comm_name(b, g[0]);
		tp_buf_lit(b, ": no dump from ");
		tp_buf_cstr(b, m > 1 ? "them" : "it");
		tp_buf_lit(b, " (not run under tprof with TPROF_HANG, its "
			   "output directory is another, or killed: a "
			   "SIGKILL leaves none)\n");
	}
	if (more) {
		char t[96];

		snprintf(t, sizeof(t), "- and %zu more ranks behind (the "
			 "table lists them)\n", more);
		tp_buf_cstr(b, t);
	}
	put_waiting(b, g, k, n, r);
}

/* The members whose n-th is s, sorted by rank, into r. */
static size_t with_sig(struct member **g, size_t k, int64_t n,
		       const struct sig *s, int64_t *r)
{
	struct sig t;
	size_t i, m = 0;

	for (i = 0; i < k; i++)
		if (g[i]->entered >= n && sig_at(g[i], n, &t) &&
		    same_sig(&t, s))
			r[m++] = g[i]->crank;
	return m;
}

/* Why an odd rank's n-th differs, when its neighbours tell: it skipped
 * one (its n-th is the others' n+1-th) or has one more. */
static void put_shift(struct tp_buf *b, struct member **g, size_t k,
		      size_t odd, size_t maj, int64_t n)
{
	struct sig a, c;
	char s[160];

	if (sig_at(g[odd], n, &a) && sig_at(g[maj], n + 1, &c) &&
	    same_sig(&a, &c))
		snprintf(s, sizeof(s), " (it skipped one: its #%" PRId64
			 " is the others' #%" PRId64 ")", n, n + 1);
	else if (sig_at(g[odd], n + 1, &a) && sig_at(g[maj], n, &c) &&
		 same_sig(&a, &c))
		snprintf(s, sizeof(s), " (it has one more: its #%" PRId64
			 " is the others' #%" PRId64 ")", n + 1, n);
	else
		return;
	(void)k;
	tp_buf_cstr(b, s);
}

/* The n-th differs: each variant that is not the most common one named
 * (all of them when none is), with the stack of its waiting thread. */
static void put_mismatch(struct tp_buf *b, struct member **g, size_t k,
			 int64_t n, int64_t *r)
{
	size_t i, j, cnt, best = 0, maj = k, lines = 0;
	struct sig s, t, ms;
	int tie = 0;

	for (i = 0; i < k; i++) {
		if (g[i]->entered < n || !sig_at(g[i], n, &s))
			continue;
		cnt = with_sig(g, k, n, &s, r);
		if (cnt > best) {
			best = cnt;
			maj = i;
			tie = 0;
		} else if (cnt == best && maj < k && sig_at(g[maj], n, &t) &&
			   !same_sig(&s, &t)) {
			tie = 1;
		}
	}
	if (maj == k)
		return;
	sig_at(g[maj], n, &ms);
	for (i = 0; i < k && lines < MAX_LINES; i++) {
		if (g[i]->entered < n || !sig_at(g[i], n, &s) ||
		    (!tie && same_sig(&s, &ms)))
			continue;
		for (j = 0; j < i; j++)
			if (g[j]->entered >= n && sig_at(g[j], n, &t) &&
			    same_sig(&s, &t))
				break;
		if (j < i)
			continue;	/* this variant is said */
		lines++;
		cnt = with_sig(g, k, n, &s, r);
		tp_buf_lit(b, "- **");
		put_who(b, r, cnt);
		tp_buf_lit(b, "'s ");
		put_sig(b, &s, n);
		tp_buf_lit(b, " on ");
		put_comm_name(b, g[0]);
		tp_buf_lit(b, " differs**");
		if (!tie) {
			cnt = with_sig(g, k, n, &ms, r);
			tp_buf_lit(b, " from ");
			put_who(b, r, cnt);
			tp_buf_lit(b, "'s ");
			put_sig(b, &ms, n);
			put_shift(b, g, k, i, maj, n);
		}
		tp_buf_lit(b, "; ");
		put_where(b, g[i]);
		tp_buf_lit(b, "\n");
	}
}

static void put_row(struct tp_buf *b, const struct member *m, int64_t x)
{
	const struct tp_json_node *t;
	char s[200];

	snprintf(s, sizeof(s), "| %" PRId64 " | %" PRId64 " | %" PRId64
		 " | %" PRId64 " | %" PRId64 " | ", x, m->d->rank, m->entered,
		 m->enqueued, m->done);
	tp_buf_cstr(b, s);
	if (m->d->ended) {
		snprintf(s, sizeof(s), "ended (%s)", m->d->reason);
		tp_buf_cstr(b, s);
	} else if ((t = busy_thread(m))) {
		tp_buf_cstr(b, str(t, "call") ? str(t, "call") : "?");
		tp_buf_lit(b, " for ");
		put_secs(b, num(t, "for_ns", 0));
	} else if ((t = idle_thread(m))) {
		tp_buf_lit(b, "host code");
		if (str(t, "last_call")) {
			tp_buf_lit(b, " for ");
			put_secs(b, num(t, "since_ns", 0));
		}
	}
	tp_buf_lit(b, " |\n");
}

static void put_table(struct tp_buf *b, struct member **g, size_t k,
		      int64_t size)
{
	char s[64];
	int64_t x;
	size_t i;

	tp_buf_lit(b, "\n| rank | job rank | entered | enqueued | done | now "
		   "in |\n|---:|---:|---:|---:|---:|---|\n");
	for (x = 0; x < size || x == 0; x++) {
		for (i = 0; i < k && g[i]->crank != x; i++)
			;
		if (i < k) {
			put_row(b, g[i], x);
			continue;
		}
		snprintf(s, sizeof(s), "| %" PRId64 " | | | | | no dump "
			 "|\n", x);
		tp_buf_cstr(b, s);
	}
	tp_buf_lit(b, "\n");
}

/* From the first collective not seen complete by every rank: the first
 * number where they disagree (1) or some never enqueued it (2); 0 when
 * every rank enqueued every one alike. */
static int first_diff(struct member **g, size_t k, int64_t size, int64_t lo,
		      int64_t hi, int64_t *at, int64_t *r)
{
	struct sig s, t;
	int64_t n;
	size_t i, j;
	int lag;

	for (n = lo; n <= hi; n++) {
		lag = missing(g, k, size, r) > 0;
		for (i = 0; i < k; i++) {
			if (g[i]->entered < n) {
				lag = 1;
				continue;
			}
			if (!sig_at(g[i], n, &s))
				continue;
			for (j = i + 1; j < k; j++)
				if (g[j]->entered >= n && sig_at(g[j], n, &t) &&
				    !same_sig(&s, &t)) {
					*at = n;
					return 1;
				}
		}
		if (lag) {
			*at = n;
			return 2;
		}
	}
	return 0;
}

/* A signature of the n-th, from any rank that has it. */
static void any_sig(struct member **g, size_t k, int64_t n, struct sig *s)
{
	size_t i;

	memset(s, 0, sizeof(*s));
	s->root = -1;
	for (i = 0; i < k; i++)
		if (g[i]->entered >= n && sig_at(g[i], n, s))
			return;
}

int rp_hang_comm(struct tp_buf *b, struct member **g, size_t k, int64_t *r)
{
	int64_t size = 0, lo = INT64_MAX, hi = 0, n = 0;
	struct sig s;
	size_t i;
	int what;

	for (i = 0; i < k; i++) {
		if (num(g[i]->comm, "size", 0) > size)
			size = num(g[i]->comm, "size", 0);
		if (g[i]->done < lo)
			lo = g[i]->done;
		if (g[i]->entered > hi)
			hi = g[i]->entered;
	}
	if (!k || hi <= lo)	/* every one seen complete everywhere */
		return 0;
	what = first_diff(g, k, size, lo + 1, hi, &n, r);
	tp_buf_lit(b, "### ");
	put_comm_name(b, g[0]);
	tp_buf_lit(b, ", ");
	tp_json_i64(b, size);
	tp_buf_lit(b, " ranks\n\n");
	if (what == 1) {
		put_mismatch(b, g, k, n, r);
		put_waiting(b, g, k, n, r);
	} else if (what == 2) {
		any_sig(g, k, n, &s);
		put_never(b, g, k, size, n, &s, r);
	} else {
		any_sig(g, k, lo + 1, &s);
		tp_buf_lit(b, "- every rank enqueued ");
		put_sig(b, &s, lo + 1);
		tp_buf_lit(b, " on ");
		put_comm_name(b, g[0]);
		tp_buf_lit(b, " alike, yet it is not seen complete: a "
			   "network or GPU fault, a peer outside this "
			   "communicator, or no sync since\n");
		put_waiting(b, g, k, lo + 1, r);
	}
	put_table(b, g, k, size);
	return 1;
}
