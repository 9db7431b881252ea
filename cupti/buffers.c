/* cupti/: the CUPTI client: GPU activity, API callbacks, devices, GPU
 * tracks; on util/ .. output/. */
/* The buffers tprof lends CUPTI for activity records.
 *
 * TP_CUPTI_BUF_BYTES each: since CUDA 13 CUPTI keeps one buffer per
 * thread that issues GPU work, and a flush (every 200 ms) hands back
 * every buffer whose records are complete, full or not; so the number in
 * use follows the threads, not the rate. 1 MiB holds about 4800 kernel
 * records (216 bytes each), a thread's launches for 200 ms at 24k
 * launches/s; at most TPROF_CUPTI_BUFFER_MB in all (64 buffers by
 * default), after which CUPTI is refused one and counts what it drops.
 * Kineto lends 4 MiB buffers, sized for CUPTI's old process-wide buffer;
 * with one per thread that would let 16 threads exhaust the default.
 *
 * CUPTI before API version 27 (12.8) crashes when refused a buffer
 * (Kineto issue #1534): there a buffer past the cap is still lent, and
 * its records are counted as dropped instead of converted ("discard").
 *
 * A buffer's records are found (cuptiActivityGetNextRecord) as it comes
 * back, in the completion callback, where CUPTI is alive by definition:
 * the writer converts them later from offsets, with no CUPTI call, so
 * nothing calls CUPTI after cuptiFinalize (finish.c), which would start
 * it again.
 *
 * Every buffer lent is in a table: a completed buffer tprof did not lend
 * (another CUPTI client's, once it registered its own callbacks) is never
 * written to, freed or lent again; it is counted in "foreign".
 */
#include <stdlib.h>
#include <string.h>

#include "collect.h"

#define TP_CUPTI_BUF_BYTES (1u << 20)

/* Buffers lent and not yet handed back, by data pointer; the free list
 * holds the returned ones for reuse. */
static struct {
	struct tp_cbuf **lent;
	size_t n_lent, cap_lent;
	struct tp_cbuf *free, *discards;
	size_t allocated;
} B;

static int lend(struct tp_cbuf *b)
{
	struct tp_cbuf **v;

	if (B.n_lent == B.cap_lent) {
		size_t cap = B.cap_lent ? B.cap_lent * 2 : 64;

		v = realloc(B.lent, cap * sizeof(*v));
		if (!v)
			return -1;
		B.lent = v;
		B.cap_lent = cap;
	}
	B.lent[B.n_lent++] = b;
	return 0;
}

/* The lent buffer holding data, taken off the table; NULL: not ours. */
static struct tp_cbuf *unlend(const uint8_t *data)
{
	struct tp_cbuf *b;
	size_t i;

	for (i = 0; i < B.n_lent; i++) {
		if (B.lent[i]->data != data)
			continue;
		b = B.lent[i];
		B.lent[i] = B.lent[--B.n_lent];
		return b;
	}
	return NULL;
}

static struct tp_cbuf *new_buffer(int discard)
{
	struct tp_cbuf *b;

	if (!discard && B.allocated + TP_CUPTI_BUF_BYTES > tp_cs.cap)
		return NULL;
	b = malloc(sizeof(*b));
	if (!b)
		return NULL;
	/* CUPTI wants 8-byte aligned records. */
	b->data = aligned_alloc(64, TP_CUPTI_BUF_BYTES);
	if (!b->data) {
		free(b);
		return NULL;
	}
	b->discard = discard;
	b->offs = NULL;
	b->nrec = b->offs_cap = 0;
	if (discard)
		return b;
	B.allocated += TP_CUPTI_BUF_BYTES;
	tp_cs.buffers++;
	return b;
}

/* Below API 27 a refusal would crash CUPTI: a discard buffer instead,
 * from its own free list. */
static struct tp_cbuf *discard_buffer(void)
{
	struct tp_cbuf *b = B.discards;

	if (tp_cs.version >= 27)
		return NULL;
	if (b) {
		B.discards = b->next;
		return b;
	}
	return new_buffer(1);
}

void CUPTIAPI tp_cupti_buffer_requested(uint8_t **buffer, size_t *size,
					size_t *max_records)
{
	struct tp_cbuf *b;

	*buffer = NULL;
	*size = 0;
	*max_records = 0;
	pthread_mutex_lock(&tp_cs.lock);
	tp_cs.requested++;
	b = B.free;
	if (b)
		B.free = b->next;
	else
		b = new_buffer(0);
	if (!b)
		b = discard_buffer();
	if (b && lend(b) < 0) {
		tp_cupti_buffers_give_back_locked(b);
		b = NULL;
	}
	if (!b)
		tp_cs.refused++;
	pthread_mutex_unlock(&tp_cs.lock);
	if (!b)
		return;
	*buffer = b->data;
	*size = TP_CUPTI_BUF_BYTES;
}

/* The offsets of b's records; a record CUPTI cannot step over
 * (CUPTI_ERROR_INVALID_KIND: incomplete) ends the walk, truncated. */
static void index_records(struct tp_cbuf *b)
{
	CUpti_Activity *r = NULL;
	CUptiResult rc;
	uint32_t *v;

	b->nrec = 0;
	b->truncated = 0;
	while ((rc = tp_cupti.get_next_record(b->data, b->valid, &r)) ==
	       CUPTI_SUCCESS && r) {
		if (b->nrec == b->offs_cap) {
			size_t cap = b->offs_cap ? b->offs_cap * 2 : 1024;

			v = realloc(b->offs, cap * sizeof(*v));
			if (!v) {
				b->truncated = 1;
				return;
			}
			b->offs = v;
			b->offs_cap = cap;
		}
		b->offs[b->nrec++] = (uint32_t)((uint8_t *)r - b->data);
	}
	if (rc != CUPTI_SUCCESS && rc != CUPTI_ERROR_MAX_LIMIT_REACHED)
		b->truncated = 1;
}

void CUPTIAPI tp_cupti_buffer_completed(CUcontext ctx, uint32_t stream,
					uint8_t *buffer, size_t size,
					size_t valid)
{
	struct tp_cbuf *b;
	size_t dropped = 0;

	(void)size;
	if (!buffer)
		return;
	if (tp_cupti.get_num_dropped(ctx, stream, &dropped) != CUPTI_SUCCESS)
		dropped = 0;
	pthread_mutex_lock(&tp_cs.lock);
	tp_cs.dropped += dropped;
	b = unlend(buffer);
	if (!b) {
		tp_cs.foreign++;
		pthread_mutex_unlock(&tp_cs.lock);
		return;
	}
	tp_cs.completed++;
	pthread_mutex_unlock(&tp_cs.lock);
	/* Ours alone now: walked without the lock. */
	b->valid = valid;
	b->next = NULL;
	index_records(b);
	pthread_mutex_lock(&tp_cs.lock);
	*tp_cs.queue_tail = b;
	tp_cs.queue_tail = &b->next;
	pthread_mutex_unlock(&tp_cs.lock);
}

struct tp_cbuf *tp_cupti_buffers_take(void)
{
	struct tp_cbuf *list;

	pthread_mutex_lock(&tp_cs.lock);
	list = tp_cs.queue;
	tp_cs.queue = NULL;
	tp_cs.queue_tail = &tp_cs.queue;
	pthread_mutex_unlock(&tp_cs.lock);
	return list;
}

void tp_cupti_buffers_give_back_locked(struct tp_cbuf *b)
{
	struct tp_cbuf **list = b->discard ? &B.discards : &B.free;

	b->next = *list;
	*list = b;
}

void tp_cupti_buffers_give_back(struct tp_cbuf *list)
{
	struct tp_cbuf *b, *next;

	pthread_mutex_lock(&tp_cs.lock);
	for (b = list; b; b = next) {
		next = b->next;
		tp_cupti_buffers_give_back_locked(b);
	}
	pthread_mutex_unlock(&tp_cs.lock);
}

uint64_t tp_cupti_buffers_out(void)
{
	uint64_t n;

	pthread_mutex_lock(&tp_cs.lock);
	n = B.n_lent;
	pthread_mutex_unlock(&tp_cs.lock);
	return n;
}

/* The fork child: the parent's buffers are the parent's business. */
void tp_cupti_buffers_reset(void)
{
	memset(&B, 0, sizeof(B));
}
