/* record/: the recording core: records, per-thread rings, threads,
 * drops, the clock, the rings file; on files/ .. util/. */
/* The rings file, the reading side: tprof recover and the decoder map a
 * killed process's file read-only (see ringfile.h). */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "ringfile.h"

int tp_rf_open_view(const char *path, struct tp_rf_view *v, char *why,
		    size_t whylen)
{
	struct stat st;
	void *p;
	int fd;

	memset(v, 0, sizeof(*v));
	fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
	if (fd < 0 || fstat(fd, &st) < 0) {
		snprintf(why, whylen, "cannot read: %s", strerror(errno));
		goto fail;
	}
	if ((uint64_t)st.st_size < TP_RF_REGIONS_OFF) {
		snprintf(why, whylen, "too short for a rings file");
		goto fail;
	}
	p = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
	if (p == MAP_FAILED) {
		snprintf(why, whylen, "cannot map: %s", strerror(errno));
		goto fail;
	}
	close(fd);
	v->base = p;
	v->size = (size_t)st.st_size;
	v->h = p;
	if (memcmp(v->h->magic, TP_RF_MAGIC, sizeof(v->h->magic)) ||
	    v->h->version != TP_RF_VERSION || v->h->layout != TP_RF_LAYOUT) {
		snprintf(why, whylen, "not a rings file of this tprof build "
			 "(version or layout differs)");
		tp_rf_close_view(v);
		return -1;
	}
	return 0;
fail:
	if (fd >= 0)
		close(fd);
	return -1;
}

void tp_rf_close_view(struct tp_rf_view *v)
{
	if (v->base)
		munmap((void *)v->base, v->size);
	memset(v, 0, sizeof(*v));
}

const struct tp_rf_region *tp_rf_view_region(const struct tp_rf_view *v,
					     unsigned i)
{
	uint64_t bytes = v->h->region_bytes;
	uint64_t off = TP_RF_REGIONS_OFF + (uint64_t)i * bytes;

	if (i >= TP_RF_MAX_REGIONS || bytes < TP_RF_SLOTS_OFF ||
	    off + bytes > v->size)
		return NULL;
	return (const struct tp_rf_region *)(v->base + off);
}

const struct tp_rf_note *tp_rf_view_next_note(const struct tp_rf_view *v,
					      uint64_t *off)
{
	uint64_t used = v->h->log_used;
	const struct tp_rf_note *n;

	if (used > TP_RF_LOG_BYTES)
		used = TP_RF_LOG_BYTES;
	while (*off + sizeof(*n) <= used) {
		n = (const struct tp_rf_note *)(v->base + TP_RF_LOG_OFF + *off);
		if (n->len < sizeof(*n) || n->len % 8 || *off + n->len > used)
			return NULL;	/* a note cut by the kill */
		*off += n->len;
		if (n->type)
			return n;
	}
	return NULL;
}
