/* gzip/: compression: the trace's gzip stream (ISA-L when installed,
 * else zlib) with sync points; on util/ only. */
/* Streaming gzip output: one raw deflate stream, by ISA-L when it is
 * installed (gzip_isal.h), else by zlib.
 *
 * The gzip header is written by hand, at once, with a comment naming the
 * run and the process: file naming reads it back to tell whether a
 * rank's file belongs to this run (see naming.c).
 */
#ifndef TP_GZIP_H
#define TP_GZIP_H

#include <stddef.h>
#include <stdint.h>
#include <zlib.h>

#define TP_GZ_OUT_BYTES (256 * 1024)

enum tp_gz_codec {
	TP_GZ_AUTO,		/* ISA-L at level 1 when loadable, else zlib */
	TP_GZ_ZLIB,
};

struct tp_isal;

struct tp_gz {
	int fd;
	int err;		/* errno of the first failed write, or 0 */
	int open;
	uint32_t crc;
	uint64_t in_bytes;
	uint64_t out_bytes;
	struct tp_isal *isal;	/* NULL: zlib's zs below */
	const char *codec;	/* tp_gz_codec_name, kept once closed */
	z_stream zs;
	unsigned char out[TP_GZ_OUT_BYTES];
};

/* comment NULL: a header without one. */
int tp_gz_open(struct tp_gz *g, int fd, int level, const char *comment);
int tp_gz_open_codec(struct tp_gz *g, int fd, int level, const char *comment,
		     enum tp_gz_codec codec);
/* "isa-l" or "zlib": what compresses (or compressed) g. */
const char *tp_gz_codec_name(const struct tp_gz *g);
/* n under 4 GiB: zlib takes 32-bit lengths. */
int tp_gz_write(struct tp_gz *g, const void *p, size_t n);
/* A sync flush: what was written so far is in the file, inflatable
 * without the stream's end (for recovery after a kill). */
int tp_gz_sync(struct tp_gz *g);
int tp_gz_finish(struct tp_gz *g);
void tp_gz_abandon(struct tp_gz *g);

/* The comment of a gzip header in buf (n bytes), copied to out; -1 when
 * buf holds no complete header with a comment. */
int tp_gz_read_comment(const unsigned char *buf, size_t n, char *out,
		       size_t outlen);

#endif
