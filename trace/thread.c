/* trace/: the recording core: records, per-thread rings, threads, clock and
 * timeline, configuration, JSON and gzip, file naming; calls no other
 * folder. */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "log.h"
#include "thread.h"

__thread struct tp_thread *tp_self __attribute__((tls_model("initial-exec")));
unsigned tp_recording;

static struct tp_thread *registry;
static size_t ring_bytes = 16u << 20;
static pthread_key_t exit_key;
static pthread_once_t key_once = PTHREAD_ONCE_INIT;
static void (*first_attach_fn)(void);
static void (*exits_fn)(void);
static unsigned exits;
static int first_attach_done;
/* A thread whose ring could not be made records nothing, without retrying
 * the mmap on every call. */
static struct tp_thread no_ring = { .internal = 1 };

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

struct tp_thread *tp_thread_attach(void)
{
	struct tp_thread *t;

	tp_self = &no_ring;	/* recursion guard while we set up */
	t = calloc(1, sizeof(*t));
	if (!t)
		return NULL;
	if (tp_ring_init(&t->ring, ring_bytes) < 0) {
		free(t);
		tp_warn("cannot map a %zu-byte ring for thread %d: its calls "
			"are not recorded; lower TPROF_BUFFER_MB", ring_bytes,
			(int)syscall(SYS_gettid));
		return NULL;
	}
	tp_ring_prefault(&t->ring, TP_RING_PREFAULT_FIRST);
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
	tp_ring_destroy(&t->ring);
	tp_drops_free(t->drops);
	free(t);
}

/* In a fork child only the forking thread exists: every ring is the
 * parent's, so the child starts empty and builds its own. */
void tp_thread_reset_after_fork(void)
{
	struct tp_thread *t = registry, *next;

	for (; t; t = next) {
		next = t->next;
		tp_thread_free(t);
	}
	registry = NULL;
	first_attach_done = 0;
	tp_self = NULL;
	if (key_once != PTHREAD_ONCE_INIT)
		pthread_setspecific(exit_key, NULL);
}

struct tp_thread *tp_thread_internal(void)
{
	return &no_ring;
}
