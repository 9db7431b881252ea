#include <sys/mman.h>

#include "ring.h"

/* mmap rather than malloc: pages a thread never fills are never touched,
 * so a large per-thread size costs only address space until used. */
int tp_ring_init(struct tp_ring *r, size_t bytes)
{
	size_t n = 1;
	void *p;

	while (n * 2 * sizeof(struct tp_event) <= bytes)
		n *= 2;
	if (n < 2)
		n = 2;
	p = mmap(NULL, n * sizeof(struct tp_event), PROT_READ | PROT_WRITE,
		 MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	if (p == MAP_FAILED)
		return -1;
	r->head = 0;
	r->tail_cache = 0;
	r->dropped = 0;
	r->tail = 0;
	r->mask = n - 1;
	r->slots = p;
	r->map_bytes = n * sizeof(struct tp_event);
	return 0;
}

void tp_ring_destroy(struct tp_ring *r)
{
	if (r->slots)
		munmap(r->slots, r->map_bytes);
	r->slots = NULL;
}

size_t tp_ring_capacity(const struct tp_ring *r)
{
	return (size_t)r->mask + 1;
}
