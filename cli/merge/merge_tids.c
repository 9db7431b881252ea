/* tprof merge: string tids become numbers.
 *
 * Older Kineto traces write tids (and pids) as strings ("stream 7",
 * "PyTorch Profiler"); Chrome's format and Perfetto want numbers. Each
 * distinct string tid of an input, in order of first appearance, becomes
 * MG_STR_TID_BASE + k, far above any thread id Linux hands out (pid_max
 * is at most 2^22), so it cannot meet a numeric tid of the same process.
 * The map is kept per input and written to tprof.merged[].tids.
 *
 * Called by merge_events.c and merge.c; calls only merge_out.c (the
 * output buffer) and merge_err.c.
 */
#include "merge_int.h"

#include <stdlib.h>
#include <string.h>

static uint32_t hash_lit(const char *s, size_t n)
{
	uint32_t h = 2166136261u;

	while (n--)
		h = (h ^ (unsigned char)*s++) * 16777619u;
	return h;
}

/* Keeps the index at most half full, so a probe ends at a free slot. */
static int tid_index(struct mg *m, struct mg_input *in)
{
	size_t size = in->ntslots ? in->ntslots * 2 : 64, i, k;
	uint32_t *s;

	if (in->ntids * 2 < in->ntslots)
		return 0;
	s = calloc(size, sizeof(*s));
	if (!s)
		return mg_fail(m, in->path, "out of memory");
	for (i = 0; i < in->ntids; i++) {
		for (k = in->tids[i].hash & (size - 1); s[k];
		     k = (k + 1) & (size - 1))
			;
		s[k] = (uint32_t)i + 1;
	}
	free(in->tslots);
	in->tslots = s;
	in->ntslots = size;
	return 0;
}

static int tid_new(struct mg *m, struct mg_input *in, const char *s,
		   size_t n, uint32_t h)
{
	struct mg_tid *t;
	size_t cap;

	if (in->ntids >= MG_MAX_STR_TIDS)
		return mg_fail(m, in->path, "more than %d string tids",
			       MG_MAX_STR_TIDS);
	if (in->ntids == in->captids) {
		cap = in->captids * 2 + 8;
		t = realloc(in->tids, cap * sizeof(*t));
		if (!t)
			return mg_fail(m, in->path, "out of memory");
		in->tids = t;
		in->captids = cap;
	}
	t = &in->tids[in->ntids];
	t->lit = malloc(n);
	if (!t->lit)
		return mg_fail(m, in->path, "out of memory");
	memcpy(t->lit, s, n);
	t->litlen = n;
	t->hash = h;
	t->newtid = MG_STR_TID_BASE + (int64_t)in->ntids;
	in->ntids++;
	return 0;
}

int mg_tid_of_string(struct mg *m, struct mg_input *in, const char *s,
		     size_t n, int64_t *tid)
{
	uint32_t h = hash_lit(s, n);
	struct mg_tid *t;
	size_t k;

	if (tid_index(m, in))
		return -1;
	for (k = h & (in->ntslots - 1); in->tslots[k];
	     k = (k + 1) & (in->ntslots - 1)) {
		t = &in->tids[in->tslots[k] - 1];
		if (t->hash == h && t->litlen == n && !memcmp(t->lit, s, n)) {
			*tid = t->newtid;
			return 0;
		}
	}
	if (tid_new(m, in, s, n, h))
		return -1;
	in->tslots[k] = (uint32_t)in->ntids;
	*tid = in->tids[in->ntids - 1].newtid;
	return 0;
}

/* "tids": {"stream 7": 1000000000, ...}: the literals are JSON strings
 * as the input wrote them. */
int mg_put_tid_map(struct mg *m, const struct mg_input *in)
{
	size_t i;

	if (mg_add(m, ", \"tids\": {", 11))
		return -1;
	for (i = 0; i < in->ntids; i++)
		if ((i && mg_add(m, ", ", 2)) ||
		    mg_add(m, in->tids[i].lit, in->tids[i].litlen) ||
		    mg_addf(m, ": %lld", (long long)in->tids[i].newtid))
			return -1;
	return mg_add(m, "}", 1);
}

void mg_tids_free(struct mg_input *in)
{
	size_t i;

	for (i = 0; i < in->ntids; i++)
		free(in->tids[i].lit);
	free(in->tids);
	free(in->tslots);
}
