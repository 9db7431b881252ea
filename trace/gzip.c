#include <errno.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "gzip.h"

#define GZ_FCOMMENT 0x10

static int write_all(struct tp_gz *g, const void *p, size_t n)
{
	const char *c = p;

	while (n) {
		ssize_t w = write(g->fd, c, n);

		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0) {
			g->err = w < 0 ? errno : ENOSPC;
			return -1;
		}
		c += w;
		n -= (size_t)w;
		g->out_bytes += (uint64_t)w;
	}
	return 0;
}

static int write_header(struct tp_gz *g, const char *comment)
{
	unsigned char h[10] = { 0x1f, 0x8b, 8, GZ_FCOMMENT, 0, 0, 0, 0, 0, 3 };
	uint32_t now = (uint32_t)time(NULL);

	h[4] = (unsigned char)now;
	h[5] = (unsigned char)(now >> 8);
	h[6] = (unsigned char)(now >> 16);
	h[7] = (unsigned char)(now >> 24);
	if (write_all(g, h, sizeof(h)) < 0)
		return -1;
	return write_all(g, comment, strlen(comment) + 1);
}

int tp_gz_open(struct tp_gz *g, int fd, int level, const char *comment)
{
	memset(&g->zs, 0, sizeof(g->zs));
	g->fd = fd;
	g->err = 0;
	g->crc = (uint32_t)crc32(0L, Z_NULL, 0);
	g->in_bytes = 0;
	g->out_bytes = 0;
	if (deflateInit2(&g->zs, level, Z_DEFLATED, -MAX_WBITS, 8,
			 Z_DEFAULT_STRATEGY) != Z_OK) {
		g->err = ENOMEM;
		return -1;
	}
	g->open = 1;
	if (write_header(g, comment) < 0) {
		tp_gz_abandon(g);
		return -1;
	}
	return 0;
}

static int pump(struct tp_gz *g, int flush)
{
	int rc;

	do {
		g->zs.next_out = g->out;
		g->zs.avail_out = sizeof(g->out);
		rc = deflate(&g->zs, flush);
		if (rc == Z_STREAM_ERROR)
			return -1;
		if (write_all(g, g->out, sizeof(g->out) - g->zs.avail_out) < 0)
			return -1;
	} while (g->zs.avail_out == 0);
	return rc;
}

int tp_gz_write(struct tp_gz *g, const void *p, size_t n)
{
	if (!g->open || g->err)
		return -1;
	g->crc = (uint32_t)crc32(g->crc, p, (uInt)n);
	g->in_bytes += n;
	g->zs.next_in = (Bytef *)p;
	g->zs.avail_in = (uInt)n;
	if (pump(g, Z_NO_FLUSH) < 0)
		return -1;
	return 0;
}

int tp_gz_finish(struct tp_gz *g)
{
	unsigned char t[8];
	int i;

	if (!g->open || g->err)
		return -1;
	g->zs.next_in = NULL;
	g->zs.avail_in = 0;
	if (pump(g, Z_FINISH) != Z_STREAM_END)
		goto fail;
	for (i = 0; i < 4; i++) {
		t[i] = (unsigned char)(g->crc >> (8 * i));
		t[4 + i] = (unsigned char)(g->in_bytes >> (8 * i));
	}
	if (write_all(g, t, sizeof(t)) < 0)
		goto fail;
	tp_gz_abandon(g);
	return 0;
fail:
	tp_gz_abandon(g);
	return -1;
}

void tp_gz_abandon(struct tp_gz *g)
{
	if (!g->open)
		return;
	deflateEnd(&g->zs);
	g->open = 0;
}

int tp_gz_read_comment(const unsigned char *buf, size_t n, char *out,
		       size_t outlen)
{
	size_t i;

	if (n < 11 || buf[0] != 0x1f || buf[1] != 0x8b || buf[3] != GZ_FCOMMENT)
		return -1;
	for (i = 10; i < n; i++) {
		if (buf[i])
			continue;
		if (i - 10 >= outlen)
			return -1;
		memcpy(out, buf + 10, i - 10);
		out[i - 10] = '\0';
		return 0;
	}
	return -1;
}
