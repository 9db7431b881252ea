/* stacks/: call stacks: capture (libunwind, Python perf trampolines),
 * symbolization, interning; on util/ .. session/. */
/* Call stacks of slow CUDA calls (TPROF_BACKTRACE).
 *
 * The recording thread unwinds its own stack with libunwind (loaded at run
 * time, only when asked for) and interns it: an event carries a 32-bit
 * stack id, and identical stacks are stored once. Lookups are lock-free;
 * only a stack never seen before takes a lock to be added. Symbolization
 * happens later, in the writer, once per stack.
 */
#ifndef TP_STACKS_H
#define TP_STACKS_H

#include <stddef.h>
#include <stdint.h>

#include "record/event.h"
#include "encode/json.h"

/* Set by tp_stacks_init when capturing is on: the hot path's one test. */
extern int tp_bt_on;
extern uint64_t tp_bt_threshold_ticks;
extern unsigned tp_bt_all_kinds;

/* 0 when capturing is on, -1 (after one warning) when libunwind is not
 * there. ticks_per_ns converts the threshold for the hot path. */
int tp_stacks_init(uint64_t threshold_ns, unsigned all_kinds, unsigned depth,
		   double ticks_per_ns);
/* Unwinds the caller of the hook that calls this and returns its id (0
 * when the table is full or unwinding failed). */
uint32_t tp_stack_capture(void) __attribute__((noinline));
/* The same, dropping `skip` frames of its callers (1: as
 * tp_stack_capture, the hook that calls it). */
uint32_t tp_stack_capture_skip(unsigned skip) __attribute__((noinline));
/* Loads libunwind and maps the table, once (TPROF_BACKTRACE, the CPU
 * sampler; who names the variable in the warning when libunwind is
 * missing); raises the depth to `depth`. 0, or -1 (said once). */
int tp_stacks_setup(unsigned depth, const char *who);
unsigned tp_stacks_depth(void);
/* The id of a stack of n return addresses, innermost first (at most the
 * depth asked for kept), added if new: lock-free and async-signal-safe
 * (the CPU sampler's handler, the hang watchdog's sample). 0 when the
 * table is full or capturing is off. */
uint32_t tp_stack_intern(const uintptr_t *ips, int n);
/* Set while this thread unwinds its own stack in normal context: a CPU
 * sample landing then is not taken (libunwind's per-thread cache is
 * being updated). */
extern __thread int tp_stk_unwinding
	__attribute__((tls_model("initial-exec")));

static inline void tp_stack_maybe(struct tp_event *e, unsigned kind)
{
	e->stack = 0;
	if (__builtin_expect(!tp_bt_on, 1))
		return;
	if (e->end - e->start >= tp_bt_threshold_ticks ||
	    (kind & tp_bt_all_kinds))
		e->stack = tp_stack_capture();
}

/* Writer side. */
struct tp_stack_stats {
	uint64_t calls;
	uint64_t total_ns;
	uint64_t max_ns;
	uint16_t max_api;
};

unsigned tp_stacks_count(void);
uint64_t tp_stacks_lost(void);
/* One frame as a JSON string into b: "function+0xoff (library)", a
 * Python function "py::QUALNAME:FILE:LINE", or the address; ret: ip is
 * a return address (else a sampled instruction pointer). */
void tp_stack_put_frame(struct tp_buf *b, uintptr_t ip, int ret);
/* The frames of stack id as a JSON array, cached; NULL for none. */
const char *tp_stack_json(uint32_t id, size_t *len);
struct tp_stack_stats *tp_stack_stats(uint32_t id);
void tp_stacks_after_fork(void);
unsigned tp_stacks_top(uint32_t *ids, unsigned max);

/* One of the top stacks: its counts, the name of its slowest call and
 * its frames as a JSON array. */
struct tp_stack_top {
	const struct tp_stack_stats *st;
	const char *slowest;
	const char *json;
	size_t len;
};

/* Calls fn for each of the (at most max) top stacks that symbolized,
 * with its position among those; returns how many. */
unsigned tp_stacks_each_top(unsigned max,
			    void (*fn)(const struct tp_stack_top *top,
				       unsigned i, void *ctx),
			    void *ctx);

#endif
