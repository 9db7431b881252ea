/* preload/: the hooks and the library's life in the process (constructor,
 * signals, fork, exec); the top layer. */
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
 *   ret = real(args);
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

#include "trace/api.h"
#include "trace/config.h"
#include "stacks/stacks.h"
#include "trace/thread.h"
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
		ret = TP_REAL(name) args;                                \
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
