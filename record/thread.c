/* record/: the recording core: records, per-thread rings, threads,
 * drops, the clock, the rings file; on files/ .. util/. */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "futex.h"
#include "util/log.h"
#include "ring_budget.h"
#include "ringfile.h"
#include "spill.h"
#include "thread.h"

__thread struct tp_thread *tp_self __attribute__((tls_model("initial-exec")));
unsigned tp_recording;
uint32_t tp_parking;

static struct tp_thread *registry;
static size_t ring_bytes = 16u << 20;
static pthread_key_t exit_key;
static pthread_once_t key_once = PTHREAD_ONCE_INIT;
static void (*first_attach_fn)(void);
static void (*exits_fn)(void);
static unsigned exits;
static int first_attach_done;
/* tprof's own threads, and the recursion guard while a ring is made. */
static struct tp_thread no_ring = { .internal = 1 };
/* A program thread whose ring could not be made records nothing, without
 * retrying the mmap on every call, but its calls are counted. */
static struct tp_thread no_map = { .internal = 1, .unmapped = 1 };
static uint64_t unrecorded;
static unsigned unmapped_threads;

void tp_thread_note_unrecorded(void)
{
	__atomic_add_fetch(&unrecorded, 1, __ATOMIC_RELAXED);
}

/* Only threads that recorded wait: tprof's own (the writer, which may
 * call a hooked function itself) and threads tprof knows nothing of go
 * on. The wait is bounded by the handler, which clears the flag, or by
 * the process's end; should a dying process not die, the threads go on
 * after TP_PARK_DYING_MS rather than hang the program. */
void tp_thread_park(void)
{
	struct tp_thread *t = tp_self;
	unsigned dying_ms = 0;
	uint32_t how;

	if (!t || t->internal)
		return;
	while ((how = __atomic_load_n(&tp_parking, __ATOMIC_ACQUIRE))) {
		if (how == TP_PARK_DYING &&
		    (dying_ms += 100) > TP_PARK_DYING_MS)
			return;
		tp_futex_wait(&tp_parking, how, how == TP_PARK_DYING ? 100 :
			      1000);
	}
}

void tp_thread_set_parking(int how)
{
	__atomic_store_n(&tp_parking, (uint32_t)how, __ATOMIC_RELEASE);
	tp_futex_wake_all(&tp_parking);
}

uint64_t tp_thread_unrecorded(unsigned *threads)
{
	*threads = __atomic_load_n(&unmapped_threads, __ATOMIC_RELAXED);
	return __atomic_load_n(&unrecorded, __ATOMIC_RELAXED);
}

void tp_thread_set_ring_bytes(size_t bytes)
{
	ring_bytes = bytes;
}

void tp_thread_on_exits(void (*fn)(void))
{
	__atomic_store_n(&exits_fn, fn, __ATOMIC_RELEASE);
}

void tp_thread_on_first_attach(void (*fn)(void))
{
	first_attach_fn = fn;
}

void tp_thread_read_name(struct tp_thread *t)
{
	char path[64], buf[64];
	FILE *f;

	snprintf(path, sizeof(path), "/proc/self/task/%d/comm", (int)t->tid);
	f = fopen(path, "re");
	if (!f)
		return;
	if (fgets(buf, sizeof(buf), f)) {
		buf[strcspn(buf, "\n")] = '\0';
		memcpy(t->name, buf, sizeof(t->name));
	}
	fclose(f);
}

/* Every few exits the writer runs at once to drain and free the rings of
 * the threads that ended, so memory follows the live threads even when
 * thousands end within one cycle. */
#define EXITS_PER_WAKE 8

static void notify_exit(void)
{
	void (*fn)(void) = __atomic_load_n(&exits_fn, __ATOMIC_ACQUIRE);

	if (fn && __atomic_add_fetch(&exits, 1, __ATOMIC_RELAXED) %
		  EXITS_PER_WAKE == 0)
		fn();
}

static void on_thread_exit(void *arg)
{
	struct tp_thread *t = arg;

	prctl(PR_GET_NAME, t->name, 0, 0, 0);
	tp_self = NULL;
	tp_ring_trim(&t->ring);
	__atomic_store_n(&t->exited, 1, __ATOMIC_RELEASE);
	notify_exit();
}

static void make_key(void)
{
	if (pthread_key_create(&exit_key, on_thread_exit))
		tp_warn("cannot watch thread exits: rings of exited threads "
			"are drained at process exit only");
}

static void push(struct tp_thread *t)
{
	struct tp_thread *head = __atomic_load_n(&registry, __ATOMIC_ACQUIRE);

	do {
		t->next = head;
	} while (!__atomic_compare_exchange_n(&registry, &head, t, 1,
					      __ATOMIC_RELEASE,
					      __ATOMIC_ACQUIRE));
}

/* Mapped, not malloc'd: the first malloc on a thread makes glibc reserve
 * a 64 MiB arena for it (up to 8 per core), address space that under
 * `ulimit -v` the program's own thread creation then lacks. */
static struct tp_thread *thread_alloc(void)
{
	void *p = mmap(NULL, sizeof(struct tp_thread), PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	return p == MAP_FAILED ? NULL : p;	/* zero-filled */
}

static void thread_release(struct tp_thread *t)
{
	munmap(t, sizeof(*t));
}

/* The writer says at exit how many calls this cost, once. */
static struct tp_thread *no_ring_for_thread(void)
{
	tp_self = &no_map;
	__atomic_add_fetch(&unmapped_threads, 1, __ATOMIC_RELAXED);
	return NULL;
}

/* A thread and its ring in memory; NULL when neither can be had. */
static struct tp_thread *attach_in_memory(void)
{
	struct tp_thread *t = thread_alloc();
	size_t bytes;

	if (!t)
		return NULL;
	bytes = tp_ring_budget_take(ring_bytes);
	if (!bytes || tp_ring_init(&t->ring, bytes) < 0) {
		tp_ring_budget_give(bytes);
		thread_release(t);
		return NULL;
	}
	/* What the ring really maps (a power of two of records). */
	tp_ring_budget_give(bytes - t->ring.map_bytes);
	return t;
}

struct tp_thread *tp_thread_attach(void)
{
	struct tp_thread *t;

	tp_self = &no_ring;	/* recursion guard while we set up */
	/* In the rings file when there is one (it outlives a SIGKILL),
	 * else in memory. The file is never under an address-space limit,
	 * so the ring budget is not involved. */
	t = tp_rf_thread_alloc(ring_bytes);
	if (!t)
		t = attach_in_memory();
	if (!t)
		return no_ring_for_thread();
	tp_ring_prefault(&t->ring, TP_RING_PREFAULT_FIRST);
	t->drop_of = tp_drops_none;
	t->tid = (pid_t)syscall(SYS_gettid);
	prctl(PR_GET_NAME, t->name, 0, 0, 0);
	pthread_once(&key_once, make_key);
	pthread_setspecific(exit_key, t);
	push(t);
	if (!__atomic_exchange_n(&first_attach_done, 1, __ATOMIC_ACQ_REL) &&
	    first_attach_fn)
		first_attach_fn();
	tp_self = t;
	return t;
}

struct tp_thread *tp_thread_list(void)
{
	return __atomic_load_n(&registry, __ATOMIC_ACQUIRE);
}

/* Only the writer unlinks, so only the list head can race (with a push).
 * Once t is not the head it never is again (pushes add before the head):
 * the walk starts from an atomic read of the head, as pushes write it
 * meanwhile, and edits only next links, which only the writer changes. */
void tp_thread_unlink(struct tp_thread *t)
{
	struct tp_thread *head = t, *p;

	if (__atomic_compare_exchange_n(&registry, &head, t->next, 0,
					__ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE))
		return;
	for (p = head; p; p = p->next) {
		if (p->next == t) {
			p->next = t->next;
			return;
		}
	}
}

void tp_thread_free(struct tp_thread *t)
{
	tp_drops_free(t);
	tp_spill_ring_free(&t->ring);
	if (tp_rf_owns(t)) {
		tp_rf_thread_free(t);
		return;
	}
	if (t->ring.slots)
		tp_ring_budget_give(t->ring.map_bytes);
	tp_ring_destroy(&t->ring);
	thread_release(t);
}

/* A fork child: the parent's regions of the rings file are unmapped,
 * never written. */
static void free_in_child(struct tp_thread *t)
{
	if (!tp_rf_owns(t)) {
		tp_thread_free(t);
		return;
	}
	tp_drops_free(t);
	tp_rf_thread_forget(t);
}

/* In a fork child only the forking thread exists: every ring is the
 * parent's, so the child starts empty and builds its own. */
void tp_thread_reset_after_fork(void)
{
	struct tp_thread *t = registry, *next;

	for (; t; t = next) {
		next = t->next;
		free_in_child(t);
	}
	tp_rf_after_fork();
	tp_spill_after_fork();
	registry = NULL;
	first_attach_done = 0;
	unrecorded = 0;
	unmapped_threads = 0;
	tp_self = NULL;
	if (key_once != PTHREAD_ONCE_INIT)
		pthread_setspecific(exit_key, NULL);
}

struct tp_thread *tp_thread_internal(void)
{
	return &no_ring;
}
