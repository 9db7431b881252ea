/* stacks/: call stacks: capture (libunwind, Python perf trampolines),
 * symbolization, interning; on util/ .. session/. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "record/api.h"
#include "config/config.h"
#include "util/log.h"
#include "perfmap.h"
#include "pyline.h"
#include "stacks.h"
#include "symbols.h"
#include "unwind.h"

#define MAX_STACKS (1u << 17)		/* table slots; ids are 1..MAX */
#define ARENA_BYTES (64u << 20)		/* instruction pointers of all stacks */
#define SKIP_FRAMES 3			/* tp_unwind, tp_stack_capture, the hook */

int tp_bt_on;
uint64_t tp_bt_threshold_ticks;
unsigned tp_bt_all_kinds;
__thread int tp_stk_unwinding __attribute__((tls_model("initial-exec")));

struct stack {
	uint64_t hash;		/* 0: empty; published last */
	uint32_t claimed;	/* a thread took the slot to fill it */
	uint32_t depth;
	uintptr_t *ips;
	/* writer side */
	uint32_t json_len;
	char *json;
	struct tp_stack_stats stats;
};

static unsigned max_depth;
static struct stack *table;
static uintptr_t *arena;
static size_t arena_used;		/* in uintptr_t, taken atomically */
static unsigned n_stacks;
static uint64_t lost;
static int setup_done;			/* 1: ready, -1: failed */
static pthread_mutex_t setup_lock = PTHREAD_MUTEX_INITIALIZER;

static void *map_noreserve(size_t bytes)
{
	void *p = mmap(NULL, bytes, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);

	return p == MAP_FAILED ? NULL : p;
}

static int setup(unsigned depth, const char *who)
{
	int rc;

	pthread_mutex_lock(&setup_lock);
	if (setup_done) {
		if (depth > max_depth)
			max_depth = depth;
		rc = setup_done > 0 ? 0 : -1;
		goto out;
	}
	setup_done = -1;
	rc = -1;
	if (tp_unwind_load() < 0) {
		tp_warn("%s is set but libunwind.so.8 cannot be loaded: no "
			"call stacks are recorded (install libunwind8)", who);
		goto out;
	}
	table = map_noreserve(MAX_STACKS * sizeof(*table));
	arena = map_noreserve(ARENA_BYTES);
	if (!table || !arena) {
		tp_warn("cannot map memory for call stacks: none are recorded");
		goto out;
	}
	max_depth = depth;
	setup_done = 1;
	rc = 0;
out:
	pthread_mutex_unlock(&setup_lock);
	return rc;
}

int tp_stacks_setup(unsigned depth, const char *who)
{
	return setup(depth, who);
}

unsigned tp_stacks_depth(void)
{
	return max_depth;
}

int tp_stacks_init(uint64_t threshold_ns, unsigned all_kinds, unsigned depth,
		   double ticks_per_ns)
{
	if (setup(depth, "TPROF_BACKTRACE") < 0)
		return -1;
	tp_bt_all_kinds = all_kinds;
	/* A threshold of 0 with all:KINDS means those kinds only. */
	tp_bt_threshold_ticks = all_kinds && !threshold_ns ? UINT64_MAX :
		(uint64_t)((double)threshold_ns * ticks_per_ns);
	__atomic_store_n(&tp_bt_on, 1, __ATOMIC_RELEASE);
	return 0;
}

static uint64_t hash_ips(const uintptr_t *ips, int n)
{
	uint64_t h = 0xcbf29ce484222325ull ^ (uint64_t)n;
	int i;

	for (i = 0; i < n; i++)
		h = (h ^ ips[i]) * 0x100000001b3ull;
	return h ? h : 1;
}

static int same(const struct stack *s, uint64_t h, const uintptr_t *ips,
		int n)
{
	return s->hash == h && s->depth == (uint32_t)n &&
	       !memcmp(s->ips, ips, (size_t)n * sizeof(*ips));
}

/* Fills slot s, which this thread claimed: the frames go in the arena
 * before the hash is published. 0 when the table or the arena is full
 * (the slot then stays claimed and empty, never looked at again). */
static uint32_t fill(struct stack *s, uint32_t i, uint64_t h,
		     const uintptr_t *ips, int n)
{
	size_t off;

	if (__atomic_fetch_add(&n_stacks, 1, __ATOMIC_RELAXED) >=
	    MAX_STACKS / 2)
		goto full;
	off = __atomic_fetch_add(&arena_used, (size_t)n, __ATOMIC_RELAXED);
	if (off + (size_t)n > ARENA_BYTES / sizeof(*arena))
		goto full;
	s->ips = arena + off;
	memcpy(s->ips, ips, (size_t)n * sizeof(*ips));
	s->depth = (uint32_t)n;
	__atomic_store_n(&s->hash, h, __ATOMIC_RELEASE);
	return i + 1;
full:
	__atomic_add_fetch(&lost, 1, __ATOMIC_RELAXED);
	return 0;
}

/* Lock-free, so that a signal handler may intern too (CPU samples): a
 * slot is claimed with a compare-and-swap, filled, then published. A
 * slot claimed but not yet published (another thread, or the code this
 * handler interrupted) is passed over: the same stack may then get a
 * second id, never a wrong one. */
uint32_t tp_stack_intern(const uintptr_t *ips, int n)
{
	uint64_t h;
	uint32_t i, probes;

	if (n <= 0 || !table)
		return 0;
	if (n > (int)max_depth)
		n = (int)max_depth;
	h = hash_ips(ips, n);
	i = (uint32_t)h & (MAX_STACKS - 1);
	for (probes = 0; probes < MAX_STACKS; probes++,
	     i = (i + 1) & (MAX_STACKS - 1)) {
		struct stack *s = &table[i];
		uint64_t sh = __atomic_load_n(&s->hash, __ATOMIC_ACQUIRE);
		uint32_t no = 0;

		if (sh) {
			if (same(s, h, ips, n))
				return i + 1;
			continue;
		}
		if (__atomic_load_n(&s->claimed, __ATOMIC_RELAXED) ||
		    !__atomic_compare_exchange_n(&s->claimed, &no, 1, 0,
						 __ATOMIC_ACQ_REL,
						 __ATOMIC_RELAXED))
			continue;
		return fill(s, i, h, ips, n);
	}
	__atomic_add_fetch(&lost, 1, __ATOMIC_RELAXED);
	return 0;
}

#define MAX_SKIP 8

/* Frames: tp_unwind, this, its caller, then `skip - 3` more dropped. */
__attribute__((noinline)) static uint32_t capture(unsigned skip)
{
	void *buf[TP_MAX_BT_DEPTH + MAX_SKIP];
	int n;

	if (skip > MAX_SKIP)
		return 0;
	tp_stk_unwinding = 1;
	__asm__ volatile("" ::: "memory");
	n = tp_unwind(buf, (int)max_depth + (int)skip) - (int)skip;
	__asm__ volatile("" ::: "memory");
	tp_stk_unwinding = 0;
	if (n <= 0)
		return 0;
	return tp_stack_intern((uintptr_t *)(buf + skip), n);
}

uint32_t tp_stack_capture(void)
{
	uint32_t id = capture(SKIP_FRAMES + 1);

	/* Not a tail call: this frame is one of those skipped. */
	__asm__ volatile("" : "+r"(id));
	return id;
}

uint32_t tp_stack_capture_skip(unsigned skip)
{
	uint32_t id = capture(skip + 3);

	__asm__ volatile("" : "+r"(id));
	return id;
}

unsigned tp_stacks_count(void)
{
	unsigned n = __atomic_load_n(&n_stacks, __ATOMIC_RELAXED);

	return n > MAX_STACKS / 2 ? MAX_STACKS / 2 : n;
}

uint64_t tp_stacks_lost(void)
{
	return __atomic_load_n(&lost, __ATOMIC_RELAXED);
}

/* A Python function from the perf map, "py::QUALNAME:FILE", with the
 * line it is defined at added when the file says (":LINE"). */
static void put_jit(struct tp_buf *b, const char *jit)
{
	const char *q = jit + 4, *file;
	char tmp[4200];
	unsigned line;

	if (strncmp(jit, "py::", 4) || !(file = strchr(q, ':')) ||
	    !(line = tp_pyline(file + 1, q, (size_t)(file - q))) ||
	    snprintf(tmp, sizeof(tmp), "%s:%u", jit, line) >= (int)sizeof(tmp)) {
		tp_json_str(b, jit);
		return;
	}
	tp_json_str(b, tmp);
}

void tp_stack_put_frame(struct tp_buf *b, uintptr_t ip, int ret)
{
	char *f = tp_sym_frame_at(ip, ret);
	const char *jit;
	char tmp[48];

	if (f) {
		tp_json_str(b, f);
		free(f);
		return;
	}
	/* Not in any loaded object: JIT code, such as the Python
	 * interpreter's perf trampolines. */
	jit = tp_perfmap_lookup(ret ? ip - 1 : ip);
	if (jit) {
		put_jit(b, jit);
		return;
	}
	snprintf(tmp, sizeof(tmp), "0x%lx", (unsigned long)ip);
	tp_json_str(b, tmp);
}

static void put_frame(struct tp_buf *b, uintptr_t ip)
{
	tp_stack_put_frame(b, ip, 1);
}

const char *tp_stack_json(uint32_t id, size_t *len)
{
	struct stack *s;
	struct tp_buf b = { 0 };
	uint32_t i;

	if (!id || id > MAX_STACKS || !table)
		return NULL;
	s = &table[id - 1];
	if (!__atomic_load_n(&s->hash, __ATOMIC_ACQUIRE))
		return NULL;
	if (s->json) {
		*len = s->json_len;
		return s->json;
	}
	tp_buf_char(&b, '[');
	for (i = 0; i < s->depth; i++) {
		if (i)
			tp_buf_char(&b, ',');
		put_frame(&b, s->ips[i]);
	}
	tp_buf_char(&b, ']');
	if (b.oom) {
		tp_buf_free(&b);
		return NULL;
	}
	s->json = b.p;
	s->json_len = (uint32_t)b.len;
	*len = b.len;
	return s->json;
}

struct tp_stack_stats *tp_stack_stats(uint32_t id)
{
	if (!id || id > MAX_STACKS || !table)
		return NULL;
	return &table[id - 1].stats;
}

/* The table is valid in a fork child (entries are published whole; a
 * slot another thread had claimed stays empty) and so are the
 * symbolized frames, but the counts were the parent's. */
void tp_stacks_after_fork(void)
{
	uint32_t i;

	pthread_mutex_init(&setup_lock, NULL);
	if (!table)
		return;
	for (i = 0; i < MAX_STACKS; i++)
		if (table[i].hash)
			memset(&table[i].stats, 0, sizeof(table[i].stats));
}

/* Up to max stack ids with calls, the most total time first. */
unsigned tp_stacks_top(uint32_t *ids, unsigned max)
{
	unsigned n = 0, j;
	uint32_t i;

	if (!table)
		return 0;
	for (i = 0; i < MAX_STACKS; i++) {
		uint64_t t = table[i].stats.total_ns;

		if (!table[i].hash || !table[i].stats.calls)
			continue;
		for (j = n; j > 0 && table[ids[j - 1] - 1].stats.total_ns < t; j--)
			if (j < max)
				ids[j] = ids[j - 1];
		if (j < max) {
			ids[j] = i + 1;
			if (n < max)
				n++;
		}
	}
	return n;
}

unsigned tp_stacks_each_top(unsigned max,
			    void (*fn)(const struct tp_stack_top *top,
				       unsigned i, void *ctx),
			    void *ctx)
{
	uint32_t ids[64];
	unsigned n, i, done = 0;

	n = tp_stacks_top(ids, max < 64 ? max : 64);
	for (i = 0; i < n; i++) {
		const struct tp_api *api;
		struct tp_stack_top t;

		t.json = tp_stack_json(ids[i], &t.len);
		if (!t.json)
			continue;
		t.st = tp_stack_stats(ids[i]);
		api = tp_api_get(t.st->max_api);
		t.slowest = api ? api->name : "?";
		fn(&t, done++, ctx);
	}
	return done;
}
