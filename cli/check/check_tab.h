/* tprof check's tables (check_tab.c): an open-addressing index from a
 * hash to entry numbers, interned strings, growable arrays. */
#ifndef TP_CLI_CHECK_TAB_H
#define TP_CLI_CHECK_TAB_H

#include <stddef.h>
#include <stdint.h>

/* Open-addressing index from a hash to an entry number; the owner keeps
 * the entries and says whether one matches. */
struct hslot {
	uint32_t idx1;	/* entry + 1, 0 when free */
	uint32_t hash;
};

struct htab {
	struct hslot *s;
	size_t mask, n;
};

typedef int (*ht_eq_fn)(const void *owner, uint32_t idx, const void *key);

struct strtab {
	struct htab ht;
	struct { uint32_t off, len; } *ent;
	size_t n, cap;
	char *pool;
	size_t plen, pcap;
};

uint32_t ck_hash(const void *p, size_t n);
/* Room for one more entry: the index is kept at most half full. */
int ck_ht_reserve(struct htab *t);
/* The slot of the entry eq says matches key, or the free slot where it
 * goes. */
struct hslot *ck_ht_find(struct htab *t, uint32_t hash, ht_eq_fn eq,
			 const void *owner, const void *key);
void ck_ht_take(struct htab *t, struct hslot *slot, uint32_t idx1,
		uint32_t hash);
/* *arr has room for element n (doubling from 1024). */
int ck_grow(void **arr, size_t *cap, size_t n, size_t elem);
/* s's id in t; -1 when out of memory. */
int64_t ck_intern(struct strtab *t, const char *s, size_t len);
const char *ck_str_at(const struct strtab *t, uint32_t id, size_t *len);
void ck_strtab_free(struct strtab *t);

#endif
