/* cupti/: the CUPTI client: GPU activity, API callbacks, devices, GPU
 * tracks; on trace/ .. output/. */
#include <stdlib.h>
#include <string.h>

#include "tracks.h"

#define SLOTS 4096	/* power of two; streams x devices in practice */

static struct tp_track tracks[SLOTS];
static unsigned used;

struct tp_track *tp_track_get(uint32_t pid, uint32_t tid)
{
	uint64_t h = ((uint64_t)pid << 32 | tid) * 0x9e3779b97f4a7c15ull;
	unsigned i = (unsigned)(h >> 52) & (SLOTS - 1), n;

	for (n = 0; n < SLOTS; n++, i = (i + 1) & (SLOTS - 1)) {
		struct tp_track *t = &tracks[i];

		if (t->used && t->pid == pid && t->tid == tid)
			return t;
		if (t->used)
			continue;
		if (used >= SLOTS * 3 / 4)
			return NULL;
		t->used = 1;
		t->pid = pid;
		t->tid = tid;
		t->last_end = INT64_MIN;
		used++;
		return t;
	}
	return NULL;
}

void tp_track_each(void (*fn)(const struct tp_track *t, void *arg), void *arg)
{
	unsigned i;

	for (i = 0; i < SLOTS; i++)
		if (tracks[i].used)
			fn(&tracks[i], arg);
}

void tp_track_reset(void)
{
	memset(tracks, 0, sizeof(tracks));
	used = 0;
}
