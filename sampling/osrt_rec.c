/* sampling/: the host side: CPU samples (signal handler, per-thread timers
 * or perf events) and the rings of blocking OS calls; on util/ ..
 * capture/. */
#define _GNU_SOURCE
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "osrt_rec.h"

uint64_t tp_osrt_min_ticks = UINT64_MAX;

static __thread struct tp_hthread *osrt_self
	__attribute__((tls_model("initial-exec")));

void tp_osrt_set_threshold(uint64_t ticks)
{
	__atomic_store_n(&tp_osrt_min_ticks, ticks, __ATOMIC_RELAXED);
}

/* The thread's osrt ring, made at its first recorded call (freed by
 * the writer only once the thread is gone). */
static struct tp_hthread *self(void)
{
	struct tp_hthread *h = osrt_self;

	if (h)
		return h;
	h = tp_ht_new((pid_t)syscall(SYS_gettid), TP_HT_OSRT);
	osrt_self = h;
	return h;
}

/* The fork child's one thread: its ring was the parent's (freed). */
void tp_osrt_after_fork(void)
{
	osrt_self = NULL;
}

struct tp_event *tp_osrt_reserve(struct tp_osrt_rec *r, uint16_t api,
				 uint64_t t0, uint64_t t1, unsigned n_ext)
{
	struct tp_hthread *h = self();
	struct tp_event *e;

	if (!h)
		return NULL;
	/* A signal handler's call in the middle of this thread's record. */
	if (__atomic_load_n(&h->busy, __ATOMIC_RELAXED)) {
		h->lost++;
		return NULL;
	}
	__atomic_store_n(&h->busy, 1, __ATOMIC_RELAXED);
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
	e = tp_ring_reserve_n(&h->ring, 1 + n_ext);
	if (!e) {
		__atomic_signal_fence(__ATOMIC_SEQ_CST);
		__atomic_store_n(&h->busy, 0, __ATOMIC_RELAXED);
		return NULL;
	}
	r->h = h;
	r->n = 1 + n_ext;
	e->start = t0;
	e->end = t1;
	e->api = api;
	e->flags = (uint16_t)n_ext;
	e->ret = 0;
	e->stream = 0;
	memset(&e->a, 0, sizeof(e->a));
	e->stack = 0;
	e->corr = 0;
	return e;
}

void tp_osrt_put_str(struct tp_osrt_rec *r, const char *s)
{
	size_t room = (size_t)(r->n - 1) * TP_EV_SLOT_BYTES, len, off = 0;
	char tmp[16 * TP_EV_SLOT_BYTES];

	if (!room || room > sizeof(tmp))
		return;
	len = strlen(s);
	if (len >= room) {
		memcpy(tmp, s, room - 4);
		memcpy(tmp + room - 4, "...", 4);
	} else {
		memcpy(tmp, s, len + 1);
	}
	while (off < room) {
		size_t n = room - off < TP_EV_SLOT_BYTES ? room - off :
			   TP_EV_SLOT_BYTES;

		memcpy(tp_ring_slot(&r->h->ring, 1 + (unsigned)(off /
				    TP_EV_SLOT_BYTES)), tmp + off, n);
		off += n;
	}
}

void tp_osrt_commit(struct tp_osrt_rec *r)
{
	tp_ring_commit_n(&r->h->ring, r->n);
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
	__atomic_store_n(&r->h->busy, 0, __ATOMIC_RELAXED);
}
