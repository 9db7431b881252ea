/* sampling/: the host side: CPU samples (signal handler, per-thread timers
 * or perf events) and the rings of blocking OS calls; on util/ ..
 * capture/. */
#define _GNU_SOURCE
#include <string.h>
#include <sys/mman.h>

#include "hthread.h"

static struct tp_hthread *registry;
static uint32_t generation = 1;

uint32_t tp_ht_generation(void)
{
	return __atomic_load_n(&generation, __ATOMIC_ACQUIRE);
}

uint32_t tp_ht_next_generation(void)
{
	return __atomic_add_fetch(&generation, 1, __ATOMIC_ACQ_REL);
}

static void push(struct tp_hthread *h)
{
	struct tp_hthread *head = __atomic_load_n(&registry, __ATOMIC_ACQUIRE);

	do {
		h->next = head;
	} while (!__atomic_compare_exchange_n(&registry, &head, h, 1,
					      __ATOMIC_RELEASE,
					      __ATOMIC_ACQUIRE));
}

/* Mapped, not malloc'd: this may run in a signal handler (a blocking
 * call made from one), and malloc on a new thread reserves an arena. */
struct tp_hthread *tp_ht_new(pid_t tid, enum tp_ht_kind kind)
{
	size_t bytes = kind == TP_HT_SAMPLES ? TP_HT_SAMPLE_RING :
		       TP_HT_OSRT_RING;
	struct tp_hthread *h;

	h = mmap(NULL, sizeof(*h), PROT_READ | PROT_WRITE,
		 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (h == MAP_FAILED)
		return NULL;
	if (tp_ring_init(&h->ring, bytes) < 0) {
		munmap(h, sizeof(*h));
		return NULL;
	}
	h->tid = tid;
	h->kind = kind;
	h->fd = -1;
	h->born = tp_ht_generation();
	push(h);
	return h;
}

struct tp_hthread *tp_ht_list(void)
{
	return __atomic_load_n(&registry, __ATOMIC_ACQUIRE);
}

/* As tp_thread_unlink: only the writer unlinks, so only the head can
 * race (with a push). */
void tp_ht_unlink(struct tp_hthread *h)
{
	struct tp_hthread *head = h, *p;

	if (__atomic_compare_exchange_n(&registry, &head, h->next, 0,
					__ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE))
		return;
	for (p = head; p; p = p->next) {
		if (p->next == h) {
			p->next = h->next;
			return;
		}
	}
}

void tp_ht_free(struct tp_hthread *h)
{
	tp_ring_destroy(&h->ring);
	munmap(h, sizeof(*h));
}

void tp_ht_reset_after_fork(void)
{
	struct tp_hthread *h = registry, *next;

	for (; h; h = next) {
		next = h->next;
		tp_ht_free(h);
	}
	registry = NULL;
}
