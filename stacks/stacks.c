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
#include "stacks.h"
#include "symbols.h"
#include "unwind.h"

#define MAX_STACKS (1u << 16)		/* table slots; ids are 1..MAX */
#define ARENA_BYTES (64u << 20)		/* instruction pointers of all stacks */
#define SKIP_FRAMES 3			/* tp_unwind, tp_stack_capture, the hook */

int tp_bt_on;
uint64_t tp_bt_threshold_ticks;
unsigned tp_bt_all_kinds;

struct stack {
	uint64_t hash;		/* 0: empty; published last */
	uintptr_t *ips;
	uint32_t depth;
	/* writer side */
	uint32_t json_len;
	char *json;
	struct tp_stack_stats stats;
};

static unsigned max_depth;
static struct stack *table;
static uintptr_t *arena;
static size_t arena_used;		/* in uintptr_t, under add_lock */
static unsigned n_stacks;
static uint64_t lost;
static pthread_mutex_t add_lock = PTHREAD_MUTEX_INITIALIZER;

static void *map_noreserve(size_t bytes)
{
	void *p = mmap(NULL, bytes, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);

	return p == MAP_FAILED ? NULL : p;
}

int tp_stacks_init(uint64_t threshold_ns, unsigned all_kinds, unsigned depth,
		   double ticks_per_ns)
{
	if (tp_unwind_load() < 0) {
		tp_warn("TPROF_BACKTRACE is set but libunwind.so.8 cannot be "
			"loaded: no call stacks are recorded (install "
			"libunwind8)");
		return -1;
	}
	table = map_noreserve(MAX_STACKS * sizeof(*table));
	arena = map_noreserve(ARENA_BYTES);
	if (!table || !arena) {
		tp_warn("cannot map memory for call stacks: none are recorded");
		return -1;
	}
	max_depth = depth;
	tp_bt_all_kinds = all_kinds;
	/* A threshold of 0 with all:KINDS means those kinds only. */
	tp_bt_threshold_ticks = all_kinds && !threshold_ns ? UINT64_MAX :
		(uint64_t)((double)threshold_ns * ticks_per_ns);
	__atomic_store_n(&tp_bt_on, 1, __ATOMIC_RELEASE);
	return 0;
}

static uint64_t hash_ips(uintptr_t *ips, int n)
{
	uint64_t h = 0xcbf29ce484222325ull ^ (uint64_t)n;
	int i;

	for (i = 0; i < n; i++)
		h = (h ^ ips[i]) * 0x100000001b3ull;
	return h ? h : 1;
}

static int same(const struct stack *s, uint64_t h, uintptr_t *ips, int n)
{
	return s->hash == h && s->depth == (uint32_t)n &&
	       !memcmp(s->ips, ips, (size_t)n * sizeof(*ips));
}

/* Under add_lock: look again (another thread may have added it), then
 * store the frames before publishing the hash. */
static uint32_t add(uint64_t h, uintptr_t *ips, int n)
{
	uint32_t i = (uint32_t)h & (MAX_STACKS - 1), id = 0;

	pthread_mutex_lock(&add_lock);
	for (;;) {
		struct stack *s = &table[i];

		if (!s->hash)
			break;
		if (same(s, h, ips, n)) {
			id = i + 1;
			goto out;
		}
		i = (i + 1) & (MAX_STACKS - 1);
	}
	if (n_stacks >= MAX_STACKS / 2 ||
	    arena_used + (size_t)n > ARENA_BYTES / sizeof(*arena)) {
		lost++;
		goto out;
	}
	table[i].ips = arena + arena_used;
	memcpy(table[i].ips, ips, (size_t)n * sizeof(*ips));
	arena_used += (size_t)n;
	table[i].depth = (uint32_t)n;
	n_stacks++;
	__atomic_store_n(&table[i].hash, h, __ATOMIC_RELEASE);
	id = i + 1;
out:
	pthread_mutex_unlock(&add_lock);
	return id;
}

uint32_t tp_stack_capture(void)
{
	void *buf[TP_MAX_BT_DEPTH + SKIP_FRAMES];
	int n;

	n = tp_unwind(buf, (int)max_depth + SKIP_FRAMES) - SKIP_FRAMES;
	return tp_stack_intern((uintptr_t *)(buf + SKIP_FRAMES), n);
}

uint32_t tp_stack_intern(uintptr_t *ips, int n)
{
	uint32_t i;
	uint64_t h;

	if (n <= 0 || !table)
		return 0;
	if (n > (int)max_depth)
		n = (int)max_depth;
	h = hash_ips(ips, n);
	for (i = (uint32_t)h & (MAX_STACKS - 1);;
	     i = (i + 1) & (MAX_STACKS - 1)) {
		uint64_t sh = __atomic_load_n(&table[i].hash, __ATOMIC_ACQUIRE);

		if (!sh)
			return add(h, ips, n);
		if (same(&table[i], h, ips, n))
			return i + 1;
	}
}

unsigned tp_stacks_count(void)
{
	return __atomic_load_n(&n_stacks, __ATOMIC_RELAXED);
}

uint64_t tp_stacks_lost(void)
{
	return __atomic_load_n(&lost, __ATOMIC_RELAXED);
}

static void put_frame(struct tp_buf *b, uintptr_t ip)
{
	char *f = tp_sym_frame(ip);
	const char *jit;
	char tmp[48];

	if (f) {
		tp_json_str(b, f);
		free(f);
		return;
	}
	/* Not in any loaded object: JIT code, such as the Python
	 * interpreter's perf trampolines. */
	jit = tp_perfmap_lookup(ip - 1);
	if (jit) {
		tp_json_str(b, jit);
		return;
	}
	snprintf(tmp, sizeof(tmp), "0x%lx", (unsigned long)ip);
	tp_json_str(b, tmp);
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

/* Another thread may have held add_lock at the fork; the table itself is
 * valid (entries are published whole) and so are the symbolized frames,
 * but the counts were the parent's. */
void tp_stacks_after_fork(void)
{
	uint32_t i;

	pthread_mutex_init(&add_lock, NULL);
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
