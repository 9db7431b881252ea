/* summary/: the summary aggregator: per-name statistics, histograms, steps,
 * groups, memory, and its JSON/markdown output; on util/ .. session/ and
 * stacks/. */
/* Interned strings: each distinct string once, by number (gpu_intern.c).
 * Memory grows with the distinct strings, never with the events. */
#ifndef TP_GPU_INTERN_H
#define TP_GPU_INTERN_H

#include <stddef.h>
#include <stdint.h>

struct tp_intern {
	char **s;		/* by id */
	uint32_t *hash;
	size_t n, cap;
	uint32_t *slots;	/* id + 1, open addressing */
	size_t nslots;
};

/* s's id (0, 1, ... in order of first appearance); -1 when out of
 * memory. */
int64_t tp_intern(struct tp_intern *t, const char *s);
void tp_intern_free(struct tp_intern *t);

#endif
