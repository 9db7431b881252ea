/* Plain-or-gzip file reader on top of zlib's inflate.
 *
 * When ISA-L is there (trace/gzip_isal), zlib's check is turned off and
 * the gzip trailer (CRC-32 and length) is checked here with ISA-L's
 * CRC: zlib's table CRC was a sixth of `report`'s time on a Kineto
 * trace, ISA-L's carry-less multiply a few percent of that. */
#include "gzread.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zlib.h>

#include "pftrace_read.h"
#include "gzip/gzip_isal.h"

#define TP_GZ_INSIZE (256 * 1024)

struct tp_gzr {
	int fd;
	int gzip;
	int in_member;	/* inside a member, where EOF means truncation */
	int done;
	int failed;
	z_stream zs;	/* next_in/avail_in: unread input, gzip or not */
	unsigned char *in;
	int own_check;	/* the trailer is checked here, not by zlib */
	uint32_t crc, size;	/* of the member's data so far */
	unsigned char tail[8];	/* the last 8 input bytes inflate took */
	char err[200];
	/* The first bytes, read to tell JSON from a Perfetto protobuf
	 * trace; a protobuf one is read through the Perfetto reader, which
	 * hands out its JSON form (pftrace_read.h). */
	int sniffed;
	unsigned char peek[16];
	size_t npeek, peek_pos;
	struct tp_pfr *pf;
};

static int gz_fail(struct tp_gzr *gz, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(gz->err, sizeof(gz->err), fmt, ap);
	va_end(ap);
	gz->failed = 1;
	return -1;
}

/* Appends file data after the unread input. Returns bytes read, 0 at the
 * end of the file, -1 on error. */
static ssize_t gz_fill(struct tp_gzr *gz)
{
	size_t have = gz->zs.avail_in;
	ssize_t n;

	if (have && gz->zs.next_in != gz->in)
		memmove(gz->in, gz->zs.next_in, have);
	gz->zs.next_in = gz->in;
	do
		n = read(gz->fd, gz->in + have, TP_GZ_INSIZE - have);
	while (n < 0 && errno == EINTR);
	if (n < 0)
		return gz_fail(gz, "read error: %s", strerror(errno));
	gz->zs.avail_in = have + (size_t)n;
	return n;
}

struct tp_gzr *tp_gzr_open(const char *path, char *err, size_t errlen)
{
	struct tp_gzr *gz;
	ssize_t n;

	gz = calloc(1, sizeof(*gz));
	if (gz)
		gz->in = malloc(TP_GZ_INSIZE);
	if (!gz || !gz->in) {
		snprintf(err, errlen, "out of memory");
		goto out_free;
	}
	gz->fd = open(path, O_RDONLY | O_CLOEXEC);
	if (gz->fd < 0) {
		snprintf(err, errlen, "cannot open: %s", strerror(errno));
		goto out_free;
	}
	gz->zs.next_in = gz->in;
	while (gz->zs.avail_in < 2) {
		n = gz_fill(gz);
		if (n < 0) {
			snprintf(err, errlen, "%s", gz->err);
			goto out_close;
		}
		if (n == 0)
			break;
	}
	if (gz->zs.avail_in < 2 || gz->in[0] != 0x1f || gz->in[1] != 0x8b)
		return gz;
	gz->gzip = 1;
	/* 16 + MAX_WBITS: expect a gzip header and trailer, not raw zlib */
	if (inflateInit2(&gz->zs, 16 + MAX_WBITS) != Z_OK) {
		snprintf(err, errlen, "cannot initialise zlib");
		goto out_close;
	}
	gz->own_check = tp_isal_load("libisal.so.2") == 0 &&
			inflateValidate(&gz->zs, 0) == Z_OK;
	return gz;

out_close:
	close(gz->fd);
out_free:
	if (gz)
		free(gz->in);
	free(gz);
	return NULL;
}

static ssize_t plain_read(struct tp_gzr *gz, void *buf, size_t len)
{
	ssize_t n;

	if (gz->zs.avail_in) {
		if (len > gz->zs.avail_in)
			len = gz->zs.avail_in;
		memcpy(buf, gz->zs.next_in, len);
		gz->zs.next_in += len;
		gz->zs.avail_in -= (uInt)len;
		return (ssize_t)len;
	}
	do
		n = read(gz->fd, buf, len);
	while (n < 0 && errno == EINTR);
	if (n < 0)
		return gz_fail(gz, "read error: %s", strerror(errno));
	return n;
}

/* At a member boundary: start the next member, or report the end of the
 * data (1 / 0 / -1). Zero padding after a member is skipped as Python's
 * gzip module does, since HTA reads traces through it. */
static int next_member(struct tp_gzr *gz)
{
	ssize_t n;

	for (;;) {
		while (gz->zs.avail_in && *gz->zs.next_in == 0) {
			gz->zs.next_in++;
			gz->zs.avail_in--;
		}
		if (gz->zs.avail_in >= 2)
			break;
		n = gz_fill(gz);
		if (n < 0)
			return -1;
		if (n == 0) {
			if (!gz->zs.avail_in)
				return 0;
			break;
		}
	}
	if (gz->zs.avail_in < 2 || gz->zs.next_in[0] != 0x1f ||
	    gz->zs.next_in[1] != 0x8b)
		return gz_fail(gz, "trailing garbage after gzip data");
	if (inflateReset(&gz->zs) != Z_OK)
		return gz_fail(gz, "cannot reset zlib");
	gz->in_member = 1;
	gz->crc = 0;
	gz->size = 0;
	return 1;
}

/* Keeps the check going over what one inflate call took and gave. */
static void own_check_step(struct tp_gzr *gz, const unsigned char *in,
			   const unsigned char *out)
{
	size_t took = (size_t)(gz->zs.next_in - in);
	size_t gave = (size_t)(gz->zs.next_out - out);

	gz->crc = tp_isal_crc32(gz->crc, out, gave);
	gz->size += (uint32_t)gave;
	if (took >= 8) {
		memcpy(gz->tail, gz->zs.next_in - 8, 8);
		return;
	}
	memmove(gz->tail, gz->tail + took, 8 - took);
	memcpy(gz->tail + 8 - took, in, took);
}

static uint32_t le32(const unsigned char *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 |
	       (uint32_t)p[3] << 24;
}

/* At a member's end, its trailer (the last 8 bytes inflate took) against
 * what it gave; zlib's words for a mismatch. */
static int own_check_end(struct tp_gzr *gz)
{
	if (le32(gz->tail) != gz->crc)
		return gz_fail(gz, "corrupt gzip data: incorrect data check");
	if (le32(gz->tail + 4) != gz->size)
		return gz_fail(gz, "corrupt gzip data: incorrect length check");
	return 0;
}

static ssize_t gz_inflate(struct tp_gzr *gz, void *buf, size_t len)
{
	const unsigned char *in, *out;
	uInt want = len > UINT_MAX ? UINT_MAX : (uInt)len;
	ssize_t n;
	int ret;

	gz->zs.next_out = buf;
	gz->zs.avail_out = want;
	while (gz->zs.avail_out == want) {
		if (!gz->in_member) {
			ret = next_member(gz);
			if (ret <= 0) {
				gz->done = ret == 0;
				return ret;
			}
		}
		if (!gz->zs.avail_in) {
			n = gz_fill(gz);
			if (n < 0)
				return -1;
			if (n == 0)
				return gz_fail(gz, "truncated gzip data "
					       "(unexpected end of file)");
		}
		in = gz->zs.next_in;
		out = gz->zs.next_out;
		ret = inflate(&gz->zs, Z_NO_FLUSH);
		if (gz->own_check)
			own_check_step(gz, in, out);
		if (ret == Z_STREAM_END) {
			gz->in_member = 0;
			if (gz->own_check && own_check_end(gz))
				return -1;
		}
		else if (ret == Z_DATA_ERROR || ret == Z_NEED_DICT)
			return gz_fail(gz, "corrupt gzip data: %s",
				       gz->zs.msg ? gz->zs.msg : "bad stream");
		else if (ret == Z_MEM_ERROR)
			return gz_fail(gz, "out of memory in zlib");
		else if (ret != Z_OK && ret != Z_BUF_ERROR)
			return gz_fail(gz, "zlib error %d", ret);
	}
	return (ssize_t)(want - gz->zs.avail_out);
}

static ssize_t bytes_read(struct tp_gzr *gz, void *buf, size_t len)
{
	if (gz->failed)
		return -1;
	if (gz->done || !len)
		return 0;
	if (!gz->gzip)
		return plain_read(gz, buf, len);
	return gz_inflate(gz, buf, len);
}

/* The file's (decompressed) bytes, the sniffed ones first. */
static ssize_t peeked_read(void *ctx, void *buf, size_t len)
{
	struct tp_gzr *gz = ctx;
	size_t n = gz->npeek - gz->peek_pos;

	if (!n)
		return bytes_read(gz, buf, len);
	if (n > len)
		n = len;
	memcpy(buf, gz->peek + gz->peek_pos, n);
	gz->peek_pos += n;
	return (ssize_t)n;
}

static void sniff(struct tp_gzr *gz)
{
	ssize_t n;

	gz->sniffed = 1;
	while (gz->npeek < sizeof(gz->peek)) {
		n = bytes_read(gz, gz->peek + gz->npeek,
			       sizeof(gz->peek) - gz->npeek);
		if (n <= 0)
			break;
		gz->npeek += (size_t)n;
	}
	if (gz->failed || !tp_pfr_sniff(gz->peek, gz->npeek))
		return;
	gz->pf = tp_pfr_new(peeked_read, gz);
	if (!gz->pf)
		gz_fail(gz, "out of memory");
}

ssize_t tp_gzr_read(struct tp_gzr *gz, void *buf, size_t len)
{
	ssize_t n;

	if (!gz->sniffed)
		sniff(gz);
	if (!gz->pf)
		return peeked_read(gz, buf, len);
	if (gz->failed)
		return -1;
	n = tp_pfr_read(gz->pf, buf, len);
	if (n < 0 && !gz->failed)
		gz_fail(gz, "%s", tp_pfr_error(gz->pf) ?
			tp_pfr_error(gz->pf) : "read error");
	return n;
}

const char *tp_gzr_error(const struct tp_gzr *gz)
{
	return gz->failed ? gz->err : NULL;
}

int tp_gzr_is_perfetto(struct tp_gzr *gz)
{
	if (!gz->sniffed)
		sniff(gz);
	return gz->pf != NULL;
}

int tp_gzr_note(const struct tp_gzr *gz, int k, char *buf, size_t len)
{
	return gz->pf ? tp_pfr_note(gz->pf, k, buf, len) : 0;
}

int tp_gzr_is_gzip(const struct tp_gzr *gz)
{
	return gz->gzip;
}

void tp_gzr_close(struct tp_gzr *gz)
{
	if (!gz)
		return;
	if (gz->gzip)
		inflateEnd(&gz->zs);
	tp_pfr_free(gz->pf);
	close(gz->fd);
	free(gz->in);
	free(gz);
}
