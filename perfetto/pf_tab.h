/* perfetto/: the Perfetto protobuf encoder of typed events: packets,
 * interning, tracks, annotations; on encode/ and below. */
/* The Perfetto encoder's lookup table: (kind, two integers, bytes) to a
 * 32-bit value, open addressing, strings copied into one arena. Bounded:
 * once it holds max entries or max_bytes of strings, tp_pf_tab_put fails
 * and the caller starts over (tp_pf_tab_clear), as the encoder does by
 * clearing the sequence's incremental state. */
#ifndef TP_PF_TAB_H
#define TP_PF_TAB_H

#include <stddef.h>
#include <stdint.h>

#include "encode/json.h"

struct tp_pf_slot {
	uint64_t hash;		/* 0: empty */
	int64_t k1, k2;
	uint32_t off, len;	/* the bytes, in strs */
	uint32_t val;
	uint32_t kind;
};

struct tp_pf_tab {
	struct tp_pf_slot *s;
	uint32_t cap;		/* a power of two */
	uint32_t n;
	uint32_t max;
	size_t max_bytes;
	struct tp_buf strs;
};

int tp_pf_tab_init(struct tp_pf_tab *t, uint32_t max, size_t max_bytes);
void tp_pf_tab_free(struct tp_pf_tab *t);
void tp_pf_tab_clear(struct tp_pf_tab *t);
/* The slot holding the key, or NULL. */
struct tp_pf_slot *tp_pf_tab_get(struct tp_pf_tab *t, uint32_t kind,
				 int64_t k1, int64_t k2, const char *p,
				 size_t n);
/* Adds the key (not present) with val; NULL when the table is full. */
struct tp_pf_slot *tp_pf_tab_put(struct tp_pf_tab *t, uint32_t kind,
				 int64_t k1, int64_t k2, const char *p,
				 size_t n, uint32_t val);
/* The bytes a slot holds. */
static inline const char *tp_pf_tab_str(const struct tp_pf_tab *t,
					const struct tp_pf_slot *s)
{
	return t->strs.p + s->off;
}

#endif
