/* gzip/: compression: the trace's gzip stream (ISA-L when installed,
 * else zlib) with sync points; on util/ only. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <pthread.h>
#include <stdlib.h>

#include "gzip_isal.h"

#ifdef TP_HAVE_ISAL

#include <isa-l/igzip_lib.h>

/* Level 1 with its default buffer: the level_buf size ISA-L tunes for. */
struct tp_isal {
	struct isal_zstream zs;
	uint8_t level_buf[ISAL_DEF_LVL1_DEFAULT];
};

typedef void (*init_fn)(struct isal_zstream *);
typedef int (*deflate_fn)(struct isal_zstream *);
typedef uint32_t (*crc_fn)(uint32_t, const unsigned char *, uint64_t);

static struct {
	pthread_once_t once;
	const char *soname;
	int ok;
	init_fn init;
	deflate_fn deflate;
	crc_fn crc;
} L = { .once = PTHREAD_ONCE_INIT };

static void load_once(void)
{
	void *h = dlopen(L.soname, RTLD_NOW | RTLD_LOCAL);

	if (!h)
		return;
	L.init = (init_fn)dlsym(h, "isal_deflate_init");
	L.deflate = (deflate_fn)dlsym(h, "isal_deflate");
	L.crc = (crc_fn)dlsym(h, "crc32_gzip_refl");
	L.ok = L.init && L.deflate && L.crc;
}

int tp_isal_load(const char *soname)
{
	if (!L.soname)
		L.soname = soname;
	pthread_once(&L.once, load_once);
	return L.ok ? 0 : -1;
}

int tp_isal_built(void)
{
	return 1;
}

struct tp_isal *tp_isal_open(void)
{
	struct tp_isal *s;

	if (!L.ok)
		return NULL;
	s = malloc(sizeof(*s));
	if (!s)
		return NULL;
	L.init(&s->zs);
	s->zs.level = 1;
	s->zs.level_buf = s->level_buf;
	s->zs.level_buf_size = sizeof(s->level_buf);
	s->zs.gzip_flag = IGZIP_DEFLATE;
	s->zs.flush = NO_FLUSH;
	return s;
}

void tp_isal_close(struct tp_isal *s)
{
	free(s);
}

long tp_isal_deflate(struct tp_isal *s, const void *in, size_t n,
		     size_t *used, int finish, unsigned char *out, size_t cap)
{
	/* avail_in is 32 bits: a larger buffer is taken over several calls */
	uint32_t take = n > UINT32_MAX ? UINT32_MAX : (uint32_t)n;

	s->zs.next_in = (uint8_t *)in;
	s->zs.avail_in = take;
	s->zs.end_of_stream = finish && take == n;
	s->zs.next_out = out;
	s->zs.avail_out = cap > UINT32_MAX ? UINT32_MAX : (uint32_t)cap;
	if (L.deflate(&s->zs) != COMP_OK)
		return -1;
	*used = take - s->zs.avail_in;
	return (long)(s->zs.next_out - out);
}

int tp_isal_done(const struct tp_isal *s)
{
	return s->zs.internal_state.state == ZSTATE_END;
}

/* ISA-L's documented pattern: with SYNC_FLUSH set, call until a call
 * leaves room in the output; then back to NO_FLUSH. */
int tp_isal_sync(struct tp_isal *s, unsigned char *out, size_t cap,
		 int (*put)(void *ctx, const void *p, size_t n), void *ctx)
{
	int rc = 0;
	size_t n;

	s->zs.flush = SYNC_FLUSH;
	do {
		s->zs.next_in = NULL;
		s->zs.avail_in = 0;
		s->zs.end_of_stream = 0;
		s->zs.next_out = out;
		s->zs.avail_out = cap > UINT32_MAX ? UINT32_MAX : (uint32_t)cap;
		if (L.deflate(&s->zs) != COMP_OK) {
			rc = -1;
			break;
		}
		n = (size_t)(s->zs.next_out - out);
		if (n && put(ctx, out, n) < 0) {
			rc = -1;
			break;
		}
	} while (s->zs.avail_out == 0);
	s->zs.flush = NO_FLUSH;
	return rc;
}

uint32_t tp_isal_crc32(uint32_t crc, const void *p, size_t n)
{
	return L.crc(crc, p, n);
}

#else	/* built without ISA-L's header: zlib only */

int tp_isal_load(const char *soname)
{
	(void)soname;
	return -1;
}

int tp_isal_built(void)
{
	return 0;
}

struct tp_isal *tp_isal_open(void)
{
	return NULL;
}

void tp_isal_close(struct tp_isal *s)
{
	(void)s;
}

long tp_isal_deflate(struct tp_isal *s, const void *in, size_t n,
		     size_t *used, int finish, unsigned char *out, size_t cap)
{
	(void)s, (void)in, (void)n, (void)finish, (void)out, (void)cap;
	*used = 0;
	return -1;
}

int tp_isal_done(const struct tp_isal *s)
{
	(void)s;
	return 1;
}

int tp_isal_sync(struct tp_isal *s, unsigned char *out, size_t cap,
		 int (*put)(void *ctx, const void *p, size_t n), void *ctx)
{
	(void)s, (void)out, (void)cap, (void)put, (void)ctx;
	return -1;
}

uint32_t tp_isal_crc32(uint32_t crc, const void *p, size_t n)
{
	(void)p, (void)n;
	return crc;
}

#endif
