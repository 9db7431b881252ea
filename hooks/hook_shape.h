/* hooks/: the hooked entry points (cudart, cuBLAS, cuDNN, NCCL, NVTX),
 * each library in its own folder, and how the real functions are found; on
 * every library folder below preload/. */
/* The one shape of every hooked entry point (CUDA runtime, cuBLAS, cuDNN,
 * NCCL, cudaProfilerStart/Stop):
 *
 *   TP_HOOK_SHAPE(rtype, name, libs, fail, params, args, call_t,
 *                 enter, leave, end, kind, done, fill...)
 *
 * defines `name` with the real signature and this body:
 *
 *   resolve the real entry point once (from `libs`; `fail` when missing)
 *   call_t tp_call;                    its first member: struct tp_rec r
 *   if (!(enter))                      not recorded (or a nested call):
 *           return real(args);         forward only
 *   publish the call (TPROF_HANG)      record/inflight.h
 *   ret = real(args);
 *   withdraw it
 *   leave;                             after the call, before its end time
 *   e = (end);                         the record, or NULL
 *   if (e) { fill; stack; commit }     fill sees params, ret, e, tp_call
 *   done;                              after the record (may call out)
 *   return ret;
 *
 * A family (cudart, a library, NCCL) says what its slots do once, in a
 * macro of its own over this one; an entry point is then one table line.
 * The slots are expressions or statements, so each family's helpers are
 * inlined into the hook: a captured call stack skips exactly one frame
 * above tp_stack_capture, the hook's.
 */
#ifndef TP_HOOK_SHAPE_H
#define TP_HOOK_SHAPE_H

#include <stdint.h>

#include "record/api.h"
#include "config/config.h"
#include "record/inflight.h"
#include "stacks/stacks.h"
#include "record/thread.h"
#include "resolve.h"

#define TP_EXPORT __attribute__((visibility("default")))
#define TP_INLINE static inline __attribute__((always_inline))

/* The state of one call, for families that need no more. */
struct tp_call {
	struct tp_rec r;
	uint32_t corr;		/* cudart: the call's correlation id */
	unsigned depth;		/* cuBLAS: nesting depth before the call */
	int rec;		/* the call is recorded (enter always 1) */
};

/* TPROF_HANG: publishes the call in its thread's inflight slot, with the
 * stack at entry for the calls that can block (syncs, copies, NCCL calls,
 * which fill their args in the slot first): a call that never returns
 * cannot have its stack taken at its end. Inlined into the hook, so the
 * captured stack starts at the hook's caller. */
TP_INLINE void tp_hook_inflight(struct tp_rec *r, const char *name,
				unsigned kind)
{
	struct tp_inflight *s = tp_inflight_free_slot();
	uint32_t stack = 0;

	r->inflight = 0;
	if (!s)
		return;
	if (!(s->gen & 1))
		tp_inflight_open(s);
	if (tp_bt_on && (s->kind != TP_INF_PLAIN ||
			 (kind & (TP_KIND_SYNC | TP_KIND_MEMCPY))))
		stack = tp_stack_capture();
	tp_inflight_publish(s, name, tp_ticks(), stack);
	r->inflight = 1;
}

#define TP_HOOK_SHAPE(rtype, name, libs, fail, params, args, call_t,     \
		      enter, leave, end, kind, done, ...)                \
	static rtype (*real_##name) params;                              \
	TP_EXPORT rtype name params                                      \
	{                                                                \
		call_t tp_call;                                          \
		struct tp_event *e;                                      \
		rtype ret;                                               \
                                                                         \
		if (!TP_REAL_OK(name, libs))                             \
			return fail;                                     \
		if (!(enter))                                            \
			return TP_REAL(name) args;                       \
		tp_hook_inflight(&tp_call.r, #name, (kind));             \
		ret = TP_REAL(name) args;                                \
		tp_inflight_clear(&tp_call.r);                           \
		leave;                                                   \
		e = (end);                                               \
		if (e) {                                                 \
			__VA_ARGS__                                      \
			tp_stack_maybe(e, kind);                         \
			tp_rec_commit(&tp_call.r);                       \
		}                                                        \
		done;                                                    \
		return ret;                                              \
	}

/* The plain slots: record when the source is on, nothing around. */
#define TP_ENTER_SRC(src) tp_rec_begin(&tp_call.r, (src))
#define TP_NOTHING ((void)0)

#endif
