/* gzip/: compression: the trace's gzip stream (ISA-L when installed,
 * else zlib) with sync points; on util/ only. */
#include <errno.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "crc32.h"
#include "gzip.h"
#include "gzip_isal.h"

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

static int sync_write(void *ctx, const void *p, size_t n)
{
	return write_all(ctx, p, n);
}

static int write_header(struct tp_gz *g, const char *comment)
{
	unsigned char h[10] = { 0x1f, 0x8b, 8, 0, 0, 0, 0, 0, 0, 3 };
	uint32_t now = (uint32_t)time(NULL);

	h[3] = comment ? GZ_FCOMMENT : 0;
	h[4] = (unsigned char)now;
	h[5] = (unsigned char)(now >> 8);
	h[6] = (unsigned char)(now >> 16);
	h[7] = (unsigned char)(now >> 24);
	if (write_all(g, h, sizeof(h)) < 0)
		return -1;
	if (!comment)
		return 0;
	return write_all(g, comment, strlen(comment) + 1);
}

/* ISA-L only at level 1: it is the writer's level, and ISA-L's levels do
 * not match zlib's beyond it. */
static int open_isal(struct tp_gz *g, int level, enum tp_gz_codec codec)
{
	if (codec != TP_GZ_AUTO || level != 1)
		return -1;
	if (tp_isal_load("libisal.so.2") < 0)
		return -1;
	g->isal = tp_isal_open();
	return g->isal ? 0 : -1;
}

int tp_gz_open_codec(struct tp_gz *g, int fd, int level, const char *comment,
		     enum tp_gz_codec codec)
{
	memset(&g->zs, 0, sizeof(g->zs));
	g->fd = fd;
	g->err = 0;
	g->crc = 0;
	g->in_bytes = 0;
	g->out_bytes = 0;
	g->isal = NULL;
	if (open_isal(g, level, codec) < 0 &&
	    deflateInit2(&g->zs, level, Z_DEFLATED, -MAX_WBITS, 8,
			 Z_DEFAULT_STRATEGY) != Z_OK) {
		g->err = ENOMEM;
		return -1;
	}
	g->codec = g->isal ? "isa-l" : "zlib";
	g->open = 1;
	if (write_header(g, comment) < 0) {
		tp_gz_abandon(g);
		return -1;
	}
	return 0;
}

int tp_gz_open(struct tp_gz *g, int fd, int level, const char *comment)
{
	return tp_gz_open_codec(g, fd, level, comment, TP_GZ_AUTO);
}

const char *tp_gz_codec_name(const struct tp_gz *g)
{
	return g->codec ? g->codec : "zlib";
}

/* Not a write error, but reported as one: the file cannot be completed. */
static int compressor_failed(struct tp_gz *g)
{
	g->err = EIO;
	return -1;
}

/* finish: 0 none, 1 end the stream, 2 a sync flush (byte-aligned, the
 * stream goes on). */
static int pump_zlib(struct tp_gz *g, const void *p, size_t n, int finish)
{
	int flush = finish == 1 ? Z_FINISH : finish == 2 ? Z_SYNC_FLUSH :
							    Z_NO_FLUSH, rc;

	g->zs.next_in = (Bytef *)p;
	g->zs.avail_in = (uInt)n;
	do {
		g->zs.next_out = g->out;
		g->zs.avail_out = sizeof(g->out);
		rc = deflate(&g->zs, flush);
		if (rc == Z_STREAM_ERROR)
			return compressor_failed(g);
		if (write_all(g, g->out, sizeof(g->out) - g->zs.avail_out) < 0)
			return -1;
	} while (g->zs.avail_out == 0);
	if (flush == Z_FINISH && rc != Z_STREAM_END)
		return compressor_failed(g);
	return 0;
}

/* Runs until the input is taken and, when finishing, the stream ended. */
static int pump_isal(struct tp_gz *g, const void *in, size_t n, int finish)
{
	const unsigned char *p = in;
	size_t used;
	long out;

	for (;;) {
		out = tp_isal_deflate(g->isal, p, n, &used, finish, g->out,
				      sizeof(g->out));
		if (out < 0)
			return compressor_failed(g);
		if (write_all(g, g->out, (size_t)out) < 0)
			return -1;
		if (used) {	/* p is NULL when finishing: NULL + 0 is UB */
			p += used;
			n -= used;
		}
		if (!n && (size_t)out < sizeof(g->out) &&
		    (!finish || tp_isal_done(g->isal)))
			return 0;
	}
}

/* Compresses n bytes (none when finishing) with the codec opened. */
static int pump(struct tp_gz *g, const void *p, size_t n, int finish)
{
	if (g->isal)
		return pump_isal(g, p, n, finish);
	return pump_zlib(g, p, n, finish);
}

int tp_gz_write(struct tp_gz *g, const void *p, size_t n)
{
	if (!g->open || g->err)
		return -1;
	if (g->isal)
		g->crc = tp_isal_crc32(g->crc, p, n);
	else
		g->crc = tp_crc32(g->crc, p, n);
	g->in_bytes += n;
	return pump(g, p, n, 0);
}

/* Everything taken so far reaches the file, ending on a byte boundary
 * (an empty stored block): a reader inflates the file up to here even if
 * the process dies before the stream's end. */
int tp_gz_sync(struct tp_gz *g)
{
	if (!g->open || g->err)
		return -1;
	if (g->isal)
		return tp_isal_sync(g->isal, g->out, sizeof(g->out),
				    sync_write, g);
	return pump_zlib(g, NULL, 0, 2);
}

int tp_gz_finish(struct tp_gz *g)
{
	unsigned char t[8];
	int i;

	if (!g->open || g->err)
		return -1;
	if (pump(g, NULL, 0, 1) < 0)
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
	if (g->isal)
		tp_isal_close(g->isal);
	else
		deflateEnd(&g->zs);
	g->isal = NULL;
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
