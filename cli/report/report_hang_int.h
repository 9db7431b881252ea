/* The hang section's shared parts: the dumps read (report_hang_read.c),
 * their JSON fields, and the small formatters the findings share. */
#ifndef TP_REPORT_HANG_INT_H
#define TP_REPORT_HANG_INT_H

#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "cli/read/json.h"
#include "encode/json.h"

struct dump {
	char *path;
	char *text;
	struct tp_json_arena a;
	const struct tp_json_node *root;
	int64_t rank;
	int64_t time;		/* time_unix_ns */
	const char *reason;
	int ended;		/* the process ended by itself: an exit or a
				 * crash, not a stop (SIGTERM) */
};

/* One rank's view of one communicator. */
struct member {
	const struct dump *d;
	const struct tp_json_node *comm;	/* communicators[] entry */
	const struct tp_json_node *in;		/* its thread in a collective
						 * on it, or NULL */
	int64_t crank;
	int64_t entered, enqueued, done;
};

/* A collective's signature: what every rank must agree on. */
struct sig {
	const char *call, *dtype, *op;
	int64_t count, root;
};

struct hangs {
	struct dump *d;
	size_t n, cap;
};

static inline const char *str(const struct tp_json_node *o, const char *key)
{
	const struct tp_json_node *n = o ? tp_json_get(o, key) : NULL;

	return n && n->type == TP_JSON_STRING ? n->str : NULL;
}

static inline int64_t num(const struct tp_json_node *o, const char *key, int64_t def)
{
	const struct tp_json_node *n = o ? tp_json_get(o, key) : NULL;
	int64_t v;

	return n && tp_json_int64(n, &v) ? v : def;
}

static inline const struct tp_json_node *arr(const struct tp_json_node *o,
				      const char *key)
{
	const struct tp_json_node *n = o ? tp_json_get(o, key) : NULL;

	return n && n->type == TP_JSON_ARRAY ? n->child : NULL;
}

/* "0–2, 5" from a sorted list. */
static inline void put_ranks(struct tp_buf *b, const int64_t *r, size_t n)
{
	char s[64];
	size_t i, j;

	for (i = 0; i < n; i = j) {
		for (j = i + 1; j < n && r[j] == r[j - 1] + 1; j++)
			;
		if (j - i > 1)
			snprintf(s, sizeof(s), "%s%" PRId64 "–%" PRId64,
				 i ? ", " : "", r[i], r[j - 1]);
		else
			snprintf(s, sizeof(s), "%s%" PRId64, i ? ", " : "",
				 r[i]);
		tp_buf_cstr(b, s);
	}
}

static inline void put_who(struct tp_buf *b, const int64_t *r, size_t n)
{
	tp_buf_cstr(b, n > 1 ? "ranks " : "rank ");
	put_ranks(b, r, n);
}

static inline int cmp_i64(const void *a, const void *b)
{
	int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;

	return x < y ? -1 : x > y;
}

static inline void put_secs(struct tp_buf *b, int64_t ns)
{
	char s[32];

	snprintf(s, sizeof(s), "%.1f s", (double)ns / 1e9);
	tp_buf_cstr(b, s);
}

/* report_hang_read.c: takes the hang dumps out of the inputs (see
 * rp_hang_section); 0, or -1 after one error line. */
int rp_hang_collect(struct hangs *h, char **files, size_t *nfiles);
void rp_hang_free(struct hangs *h);

/* report_hang_other.c: ranks stuck in ncclCommInitRank (how many
 * communicators, or -1: no memory), and the table of every stuck call. */
int rp_hang_inits(struct hangs *h, struct tp_buf *b);
void rp_hang_stuck(struct hangs *h, struct tp_buf *b);
/* The top frames of a stack array, past those in libc (the sleep or the
 * wait itself): "a+0x1 ← b+0x2 ← c+0x3". */
void rp_hang_put_stack(struct tp_buf *b, const struct tp_json_node *stack);

/* report_hang_seq.c: one communicator seen by the k ranks of g (sorted
 * by their rank in it): the first collective its ranks disagree on or
 * not all enqueued, who and why, and its table. r: room for 2 k + size
 * ranks. Returns 1 when it said something. */
int rp_hang_comm(struct tp_buf *b, struct member **g, size_t k,
		 int64_t *r);

#endif
