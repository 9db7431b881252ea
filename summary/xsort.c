/* summary/: the summary aggregator: per-name statistics, histograms, steps,
 * groups, memory, and its JSON/markdown output; on util/ .. session/ and
 * stacks/. */
/* The external sort (xsort.h). Runs go to one temporary file, created
 * O_EXCL (mkostemp) in $TMPDIR and unlinked at once, so nothing is left
 * behind however the process ends; at the end each run is read back
 * through its own buffer (the records' half of the budget shared among
 * the runs, 4 KiB at least) and a binary heap of the runs' fronts gives
 * the records in order. When there are more runs than the budget gives
 * 4 KiB buffers to (a budget far below the input), the oldest are first
 * merged in passes into longer runs at the file's end, so the buffers
 * stay within the budget (the run list, 16 bytes a run, is all that
 * grows). A leaf: it calls only libc.
 */
#define _GNU_SOURCE
#include "xsort.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define MIN_READ 4096

struct run {
	uint64_t off, n;	/* in records */
};

struct reader {
	char *b;
	size_t n, pos;		/* records in b, the front */
	uint64_t next, left;	/* in the file, in records */
};

struct tp_xsort {
	size_t rs, cap, n;	/* record size; the buffer, in records */
	size_t max;		/* records the budget holds */
	tp_xsort_cmp cmp;
	char *buf;
	uint64_t count, spilled;
	int fd;
	struct run *runs;
	size_t nruns, capruns;
	uint64_t fend;		/* the file's end, in records */
	struct reader *rd;
	size_t nrd, rdcap;	/* readers; records each holds */
	size_t *heap, nheap;
	size_t pos;		/* in-memory order: the next record */
	int done, pending;	/* finished; the heap's top was returned */
	char err[300];
};

static int fail(struct tp_xsort *s, const char *what, int e)
{
	const char *dir = getenv("TMPDIR");

	if (!s->err[0])
		snprintf(s->err, sizeof(s->err), "%s a temporary file in %s "
			 "for sorting: %s (set TMPDIR to a writable directory "
			 "with room, or raise " TP_XSORT_ENV ")", what,
			 dir && *dir ? dir : "/tmp", strerror(e));
	return -1;
}

static int oom(struct tp_xsort *s)
{
	if (!s->err[0])
		snprintf(s->err, sizeof(s->err), "out of memory while "
			 "sorting (lower " TP_XSORT_ENV ")");
	return -1;
}

struct tp_xsort *tp_xsort_new(size_t rec_size, tp_xsort_cmp cmp,
			      size_t budget)
{
	struct tp_xsort *s = calloc(1, sizeof(*s));

	if (!s)
		return NULL;
	s->rs = rec_size;
	s->cmp = cmp;
	/* half for the records, half for qsort's scratch copy (glibc
	 * merges through one as large as the array) */
	s->max = budget / 2 / rec_size;
	if (s->max < 2)
		s->max = 2;
	s->fd = -1;
	return s;
}

static int open_tmp(struct tp_xsort *s)
{
	const char *dir = getenv("TMPDIR");
	char path[4096];

	if (!dir || !*dir)
		dir = "/tmp";
	if ((size_t)snprintf(path, sizeof(path), "%s/tprof-sort-XXXXXX",
			     dir) >= sizeof(path))
		return fail(s, "cannot create", ENAMETOOLONG);
	s->fd = mkostemp(path, O_CLOEXEC);
	if (s->fd < 0)
		return fail(s, "cannot create", errno);
	unlink(path);
	return 0;
}

static int write_all(struct tp_xsort *s, const char *p, size_t len)
{
	ssize_t w;

	while (len) {
		w = write(s->fd, p, len);
		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			return fail(s, "cannot write", w < 0 ? errno : ENOSPC);
		p += w;
		len -= (size_t)w;
	}
	return 0;
}

/* The buffer sorted and written as one more run. */
static int spill(struct tp_xsort *s)
{
	void *v;
	size_t cap;

	if (s->fd < 0 && open_tmp(s))
		return -1;
	if (s->nruns == s->capruns) {
		cap = s->capruns ? s->capruns * 2 : 16;
		v = realloc(s->runs, cap * sizeof(*s->runs));
		if (!v)
			return oom(s);
		s->runs = v;
		s->capruns = cap;
	}
	qsort(s->buf, s->n, s->rs, s->cmp);
	if (write_all(s, s->buf, s->n * s->rs))
		return -1;
	s->runs[s->nruns].off = s->fend;
	s->runs[s->nruns].n = s->n;
	s->nruns++;
	s->fend += s->n;
	s->spilled += s->n * s->rs;
	s->n = 0;
	return 0;
}

int tp_xsort_add(struct tp_xsort *s, const void *rec)
{
	size_t cap;
	void *v;

	if (s->err[0])
		return -1;
	if (s->n == s->cap && s->cap < s->max) {
		cap = s->cap ? s->cap * 2 : 1024;
		if (cap > s->max)
			cap = s->max;
		v = realloc(s->buf, cap * s->rs);
		if (!v)
			return oom(s);
		s->buf = v;
		s->cap = cap;
	}
	if (s->n == s->cap && spill(s))
		return -1;
	memcpy(s->buf + s->n * s->rs, rec, s->rs);
	s->n++;
	s->count++;
	return 0;
}

static int refill(struct tp_xsort *s, struct reader *r, size_t cap)
{
	size_t want = r->left < cap ? (size_t)r->left : cap;
	size_t len = want * s->rs, got = 0;
	ssize_t n;

	while (got < len) {
		n = pread(s->fd, r->b + got, len - got,
			  (off_t)(r->next * s->rs + got));
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return fail(s, "cannot read", n < 0 ? errno : EIO);
		got += (size_t)n;
	}
	r->n = want;
	r->pos = 0;
	r->next += want;
	r->left -= want;
	return 0;
}

static const void *front(const struct tp_xsort *s, size_t run)
{
	const struct reader *r = &s->rd[run];

	return r->b + r->pos * s->rs;
}

static int less(const struct tp_xsort *s, size_t a, size_t b)
{
	return s->cmp(front(s, a), front(s, b)) < 0;
}

static void sift_down(struct tp_xsort *s, size_t i)
{
	size_t c, t;

	for (;;) {
		c = 2 * i + 1;
		if (c >= s->nheap)
			return;
		if (c + 1 < s->nheap && less(s, s->heap[c + 1], s->heap[c]))
			c++;
		if (!less(s, s->heap[c], s->heap[i]))
			return;
		t = s->heap[c];
		s->heap[c] = s->heap[i];
		s->heap[i] = t;
		i = c;
	}
}

/* Readers of per records each for the first n runs, and their heap. */
static int merge_open(struct tp_xsort *s, size_t n, size_t per)
{
	size_t i;

	s->rd = calloc(n, sizeof(*s->rd));
	s->heap = malloc(n * sizeof(*s->heap));
	if (!s->rd || !s->heap)
		return oom(s);
	s->nrd = n;
	s->rdcap = per;
	s->nheap = 0;
	s->pending = 0;
	for (i = 0; i < n; i++) {
		s->rd[i].b = malloc(per * s->rs);
		if (!s->rd[i].b)
			return oom(s);
		s->rd[i].next = s->runs[i].off;
		s->rd[i].left = s->runs[i].n;
		if (refill(s, &s->rd[i], per))
			return -1;
		s->heap[s->nheap++] = i;
	}
	for (i = s->nheap / 2; i-- > 0;)
		sift_down(s, i);
	return 0;
}

static void merge_close(struct tp_xsort *s)
{
	size_t i;

	if (s->rd)
		for (i = 0; i < s->nrd; i++)
			free(s->rd[i].b);
	free(s->rd);
	free(s->heap);
	s->rd = NULL;
	s->heap = NULL;
	s->nrd = s->nheap = 0;
}

/* The top run's front taken: its next record, or the run is done. */
static int advance(struct tp_xsort *s)
{
	size_t run = s->heap[0];
	struct reader *r = &s->rd[run];

	if (++r->pos == r->n) {
		if (!r->left) {
			free(r->b);
			r->b = NULL;
			s->heap[0] = s->heap[--s->nheap];
			if (s->nheap)
				sift_down(s, 0);
			return 0;
		}
		if (refill(s, r, s->rdcap))
			return -1;
	}
	sift_down(s, 0);
	return 0;
}

static const void *merge_next(struct tp_xsort *s)
{
	if (s->pending && advance(s))
		return NULL;
	s->pending = 0;
	if (!s->nheap)
		return NULL;
	s->pending = 1;
	return front(s, s->heap[0]);
}

/* The first fan runs merged into one at the file's end, which takes
 * their place at the end of the list (fan + 1 buffers of per records). */
static int merge_pass(struct tp_xsort *s, size_t fan, size_t per)
{
	struct run out = { .off = s->fend };
	char *w = malloc(per * s->rs);
	const void *rec;
	size_t wn = 0;

	if (!w)
		return oom(s);
	if (merge_open(s, fan, per))
		goto fail;
	while ((rec = merge_next(s))) {
		memcpy(w + wn * s->rs, rec, s->rs);
		if (++wn < per)
			continue;
		if (write_all(s, w, wn * s->rs))
			goto fail;
		out.n += wn;
		wn = 0;
	}
	if (s->err[0] || (wn && write_all(s, w, wn * s->rs)))
		goto fail;
	out.n += wn;
	merge_close(s);
	free(w);
	s->fend += out.n;
	s->spilled += out.n * s->rs;
	memmove(s->runs, s->runs + fan, (s->nruns - fan) * sizeof(*s->runs));
	s->nruns -= fan;
	s->runs[s->nruns++] = out;
	return 0;
fail:
	merge_close(s);
	free(w);
	return -1;
}

/* The runs merged: in passes while there are more than the records'
 * half of the budget can give MIN_READ each (a budget far below the
 * input), then all at once, each run's reader with its share. */
static int merge_start(struct tp_xsort *s)
{
	size_t total = s->max * s->rs, fan = total / MIN_READ, per;

	if (fan > 1)
		fan--;		/* one buffer for the pass's output */
	if (fan < 2)
		fan = 2;
	per = total / (fan + 1) / s->rs;
	if (!per)
		per = 1;
	while (s->nruns > fan)
		if (merge_pass(s, fan, per))
			return -1;
	per = total / s->nruns;
	if (per < MIN_READ)
		per = MIN_READ;
	per /= s->rs;
	return merge_open(s, s->nruns, per ? per : 1);
}

int tp_xsort_finish(struct tp_xsort *s)
{
	if (s->err[0])
		return -1;
	s->done = 1;
	if (!s->nruns) {
		if (s->n)
			qsort(s->buf, s->n, s->rs, s->cmp);
		return 0;
	}
	if (s->n && spill(s))
		return -1;
	free(s->buf);
	s->buf = NULL;
	return merge_start(s);
}

const void *tp_xsort_next(struct tp_xsort *s)
{
	if (s->err[0] || !s->done)
		return NULL;
	if (!s->nruns)
		return s->pos < s->n ? s->buf + s->pos++ * s->rs : NULL;
	return merge_next(s);
}

const char *tp_xsort_error(const struct tp_xsort *s)
{
	return s->err[0] ? s->err : NULL;
}

uint64_t tp_xsort_count(const struct tp_xsort *s)
{
	return s->count;
}

uint64_t tp_xsort_spilled(const struct tp_xsort *s)
{
	return s->spilled;
}

void tp_xsort_free(struct tp_xsort *s)
{
	if (!s)
		return;
	merge_close(s);
	free(s->runs);
	free(s->buf);
	if (s->fd >= 0)
		close(s->fd);
	free(s);
}

size_t tp_xsort_budget(char *err, size_t errlen)
{
	const char *v = getenv(TP_XSORT_ENV);
	unsigned long long n;
	char *end;

	if (!v || !*v)
		return TP_XSORT_BUDGET;
	errno = 0;
	n = strtoull(v, &end, 10);
	if (*end == 'K' || *end == 'k')
		n <<= 10, end++;
	else if (*end == 'M' || *end == 'm')
		n <<= 20, end++;
	else if (*end == 'G' || *end == 'g')
		n <<= 30, end++;
	if (errno || *end || !n || v[0] == '-' || n > (1ull << 40)) {
		snprintf(err, errlen, TP_XSORT_ENV "=%.40s is not a size "
			 "(bytes, or a number with K, M or G, up to 1T)", v);
		return 0;
	}
	return (size_t)n;
}
