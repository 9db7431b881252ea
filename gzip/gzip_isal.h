/* gzip/: compression: the trace's gzip stream (ISA-L when installed,
 * else zlib) with sync points; on util/ only. */
/* ISA-L's deflate, loaded at run time when libisal.so.2 is installed.
 *
 * On trace JSON it compresses about seven times faster than zlib's level
 * 1, to a slightly smaller file, in the same format: one deflate stream
 * that any gzip reader inflates. It is optional: without the library (or
 * when tprof was built without its header) the writer keeps using zlib.
 */
#ifndef TP_GZIP_ISAL_H
#define TP_GZIP_ISAL_H

#include <stddef.h>
#include <stdint.h>

struct tp_isal;

/* Loads soname once per process; later calls return the first answer.
 * 0 when the library and every entry point were found, -1 otherwise. */
int tp_isal_load(const char *soname);
/* Whether this build can use ISA-L at all (its header was there). */
int tp_isal_built(void);

/* A raw deflate stream at ISA-L's level 1; NULL when not loaded or out of
 * memory. */
struct tp_isal *tp_isal_open(void);
void tp_isal_close(struct tp_isal *s);

/* Compresses n bytes into out (cap bytes), as much as fits. Returns the
 * bytes written to out, -1 on error; *used says how much input was taken.
 * With finish set, the stream is ended once the input is taken: call
 * again while it returns cap (the output was full). */
long tp_isal_deflate(struct tp_isal *s, const void *in, size_t n,
		     size_t *used, int finish, unsigned char *out, size_t cap);
/* A sync flush of everything taken so far, written through put(ctx, ...)
 * in pieces of at most cap bytes of out. 0, or -1 on error. */
int tp_isal_sync(struct tp_isal *s, unsigned char *out, size_t cap,
		 int (*put)(void *ctx, const void *p, size_t n), void *ctx);
/* Whether a finishing stream has written its last byte. */
int tp_isal_done(const struct tp_isal *s);

/* The gzip CRC-32 (zlib's crc32), by ISA-L's carry-less multiply. */
uint32_t tp_isal_crc32(uint32_t crc, const void *p, size_t n);

#endif
