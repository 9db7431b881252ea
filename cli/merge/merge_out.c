/* tprof merge: the output. Events are assembled in one buffer, which is
 * compressed (level 1, by ISA-L when installed, as the writer does: the
 * output is read once, by a viewer) and
 * written whenever it holds MG_FLUSH_BYTES. The file is written under a
 * temporary name and renamed at the end, so OUT is either the whole trace
 * or absent.
 *
 * Called by merge.c and merge_events.c; calls only down, into
 * merge_err.c for its error lines.
 */
#include "merge_int.h"
#include "cli/cleanup/sigclean.h"

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* The temporary file's slot (sigclean.h): removed by a fatal signal. */
static int sig_slot = -1;

static int ends_with(const char *s, const char *suffix)
{
	size_t n = strlen(s), k = strlen(suffix);

	return n >= k && !strcmp(s + n - k, suffix);
}

/* The compressor failed: a write (its errno kept) or its memory. */
static int gz_fail(struct mg *m)
{
	int err = m->out.gz->err;

	if (err == ENOMEM)
		return mg_fail(m, m->out.path, "out of memory");
	return mg_fail(m, m->out.path, "write failed: %s", strerror(err));
}

int mg_out_open(struct mg *m, const char *path)
{
	struct mg_out *o = &m->out;
	int gzip = ends_with(path, ".gz");

	o->path = path;
	o->fd = -1;
	o->cap = 2 * MG_FLUSH_BYTES;
	o->buf = malloc(o->cap);
	o->gz = gzip ? calloc(1, sizeof(*o->gz)) : NULL;
	if (!o->buf || (gzip && !o->gz))
		return mg_fail(m, path, "out of memory");
	if (tp_out_create(&o->file, path) < 0)
		return mg_fail(m, path, "cannot create: %s",
			       tp_out_strerror(errno));
	o->fd = o->file.fd;
	o->created = 1;
	if (o->file.tmp)
		sig_slot = tp_sigclean_add(o->file.tmp);
	if (o->gz && tp_gz_open(o->gz, o->fd, m->gzip_level, NULL) < 0)
		return gz_fail(m);
	return 0;
}

static int write_all(struct mg *m, const void *p, size_t n)
{
	const char *c = p;
	ssize_t w;

	while (n) {
		w = write(m->out.fd, c, n);
		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			return mg_fail(m, m->out.path, "write failed: %s",
				       strerror(w < 0 ? errno : ENOSPC));
		c += w;
		n -= (size_t)w;
	}
	return 0;
}

static int flush(struct mg *m, int finish)
{
	struct mg_out *o = &m->out;
	int rc;

	if (m->failed)
		return -1;
	if (!o->gz)
		rc = write_all(m, o->buf, o->len);
	else if (tp_gz_write(o->gz, o->buf, o->len) < 0 ||
		 (finish && tp_gz_finish(o->gz) < 0))
		rc = gz_fail(m);
	else
		rc = 0;
	o->raw_bytes += o->len;
	o->len = 0;
	return rc;
}

int mg_out_flush(struct mg *m)
{
	return flush(m, 0);
}

int mg_out_finish(struct mg *m)
{
	struct mg_out *o = &m->out;

	if (flush(m, 1))
		return -1;
	o->fd = -1;
	o->created = 0;
	if (tp_out_commit(&o->file))
		return mg_fail(m, o->path, "write failed: %s", strerror(errno));
	tp_sigclean_drop(sig_slot);
	sig_slot = -1;
	return 0;
}

/* Frees the output; removes the temporary file unless it was renamed. */
void mg_out_abandon(struct mg_out *o)
{
	if (o->created)
		tp_out_abandon(&o->file);
	o->fd = -1;
	o->created = 0;
	tp_sigclean_drop(sig_slot);
	sig_slot = -1;
	if (o->gz)
		tp_gz_abandon(o->gz);
	free(o->buf);
	free(o->gz);
	o->buf = NULL;
	o->gz = NULL;
}

int mg_out_reserve(struct mg *m, size_t n)
{
	struct mg_out *o = &m->out;
	size_t cap = o->cap;
	char *b;

	if (o->len + n <= o->cap)
		return 0;
	while (cap < o->len + n)
		cap *= 2;
	b = realloc(o->buf, cap);
	if (!b)
		return mg_fail(m, o->path, "out of memory");
	o->buf = b;
	o->cap = cap;
	return 0;
}

int mg_add(struct mg *m, const void *p, size_t n)
{
	if (mg_out_reserve(m, n))
		return -1;
	mg_put(&m->out, p, n);
	return 0;
}

/* Without printf: a pid or an id goes into most events. */
int mg_add_i64(struct mg *m, int64_t v)
{
	uint64_t a = v < 0 ? 0 - (uint64_t)v : (uint64_t)v;
	char t[24];
	size_t k = sizeof(t);

	do {
		t[--k] = (char)('0' + a % 10);
		a /= 10;
	} while (a);
	if (v < 0)
		t[--k] = '-';
	return mg_add(m, t + k, sizeof(t) - k);
}

int mg_addf(struct mg *m, const char *fmt, ...)
{
	char buf[512];
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	if (n < 0 || (size_t)n >= sizeof(buf))
		return mg_fail(m, m->out.path, "internal error: line too long");
	return mg_add(m, buf, (size_t)n);
}

/* One JSON string made of a and b, escaped as tprof writes every
 * string (encode/json.c). */
int mg_add_str2(struct mg *m, const char *a, size_t an, const char *b,
		size_t bn)
{
	struct tp_buf *e = &m->esc;

	e->len = 0;
	tp_buf_char(e, '"');
	if (an)
		tp_json_escape(e, a, an);
	if (bn)
		tp_json_escape(e, b, bn);
	tp_buf_char(e, '"');
	if (e->oom)
		return mg_fail(m, m->out.path, "out of memory");
	return mg_add(m, e->p, e->len);
}

int mg_add_str(struct mg *m, const char *s, size_t n)
{
	return mg_add_str2(m, s, n, NULL, 0);
}
