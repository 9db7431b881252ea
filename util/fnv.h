/* util/: small leaf helpers: the one-line tprof: logger, FNV hash,
 * UTF-8 check; calls no other folder. */
/* FNV-1a, 32 bits: the hash of short keys in tables (names, a pid's
 * text, a flow's category). Chained: pass the last result as h. */
#ifndef TP_TRACE_FNV_H
#define TP_TRACE_FNV_H

#include <stddef.h>
#include <stdint.h>

#define TP_FNV1A_INIT 2166136261u

static inline uint32_t tp_fnv1a(uint32_t h, const void *p, size_t n)
{
	const unsigned char *b = p;

	while (n--)
		h = (h ^ *b++) * 16777619u;
	return h;
}

/* The same over a NUL-terminated string, in one pass. */
static inline uint32_t tp_fnv1a_str(uint32_t h, const char *s)
{
	while (*s)
		h = (h ^ (unsigned char)*s++) * 16777619u;
	return h;
}

#endif
