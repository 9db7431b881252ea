/* record/: the recording core: records, per-thread rings, threads,
 * drops, the clock, the rings file; on files/ .. util/. */
/* The flight recorder's window on disk, the reading side: `tprof
 * recover` (see flightfile.h). Nothing in the file is trusted: every
 * offset and length is checked against the mapping. */
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "flightfile.h"

#define ALIGN8(n) (((n) + 7) & ~(uint64_t)7)

int tp_ff_open_view(const char *path, struct tp_ff_view *v, char *why,
		    size_t whylen)
{
	struct stat st;
	void *p;
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);

	memset(v, 0, sizeof(*v));
	if (fd < 0 || fstat(fd, &st) < 0 || st.st_size < TP_FF_DATA_OFF) {
		snprintf(why, whylen, "cannot read it, or too short");
		if (fd >= 0)
			close(fd);
		return -1;
	}
	p = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_SHARED, fd, 0);
	close(fd);
	if (p == MAP_FAILED) {
		snprintf(why, whylen, "cannot map it");
		return -1;
	}
	v->base = p;
	v->size = (size_t)st.st_size;
	v->h = p;
	if (memcmp(v->h->magic, TP_FF_MAGIC, sizeof(v->h->magic)) ||
	    v->h->version != TP_FF_VERSION ||
	    v->h->head_len > TP_FF_DATA_OFF - TP_FF_HEAD_OFF) {
		snprintf(why, whylen, "not a flight file of this build");
		tp_ff_close_view(v);
		return -1;
	}
	return 0;
}

const char *tp_ff_view_tracks(const struct tp_ff_view *v, size_t *len)
{
	uint64_t off = TP_FF_DATA_OFF + v->h->cap;

	*len = 0;
	if (v->h->format != 1 || off > v->size ||
	    v->h->tracks_len > v->size - off)
		return NULL;
	*len = (size_t)v->h->tracks_len;
	return v->base + off;
}

void tp_ff_close_view(struct tp_ff_view *v)
{
	if (v->base)
		munmap((void *)v->base, v->size);
	memset(v, 0, sizeof(*v));
}

/* The chunk at ring offset off, when one is whole there; NULL at a wrap
 * or past the file's end. */
static const struct tp_ff_chunk *at(const struct tp_ff_view *v,
				    uint64_t off)
{
	uint64_t avail = v->size - TP_FF_DATA_OFF;
	const struct tp_ff_chunk *c;

	if (off > avail || avail - off < sizeof(*c) || off > v->h->cap)
		return NULL;
	c = (const struct tp_ff_chunk *)(v->base + TP_FF_DATA_OFF + off);
	if (c->magic != TP_FF_CHUNK ||
	    ALIGN8(sizeof(*c) + c->zlen) > avail - off)
		return NULL;
	return c;
}

const struct tp_ff_chunk *tp_ff_view_next(const struct tp_ff_view *v,
					  struct tp_ff_iter *it,
					  uint64_t upto)
{
	uint64_t last = upto && upto < v->h->last_seq ? upto : v->h->last_seq;
	const struct tp_ff_chunk *c;

	if (!it->started) {
		it->started = 1;
		it->off = v->h->first_off;
		it->seq = v->h->first_seq ? v->h->first_seq - 1 : 0;
	}
	if (it->seq >= last)
		return NULL;
	c = at(v, it->off);
	if (!c) {		/* the ring wrapped here */
		it->off = 0;
		c = at(v, 0);
	}
	/* Chunks follow one another by number; anything else is a chunk
	 * already let go (its place reused): the end. */
	if (!c || c->seq <= it->seq || c->seq > last ||
	    (it->started > 1 && c->seq != it->seq + 1))
		return NULL;
	it->started = 2;
	it->seq = c->seq;
	it->off += ALIGN8(sizeof(*c) + c->zlen);
	return c;
}
