/* stacks/: call stacks: capture (libunwind, Python perf trampolines),
 * symbolization, interning; on util/ .. session/. */
/* Native call stacks with libunwind, loaded at run time (dlopen), so that
 * libtprof.so itself links only libc and zlib.
 *
 * libunwind stops at a frame that has no unwind information. The Python
 * interpreter's perf trampolines (3.12 and later, -X perf) are such
 * frames: tiny copies of one function in anonymous memory. Their code is
 * known, though: a call to the evaluator followed by a frameless epilogue
 * ("add $8,%rsp; ret" or "pop %rbp; ret"). On x86-64 tp_unwind steps over
 * a frame like that by reading its epilogue and carries on with
 * libunwind in the caller, so the stack reaches past the innermost
 * Python function down to main.
 */
#ifndef TP_UNWIND_H
#define TP_UNWIND_H

/* 0, or -1 when libunwind.so.8 cannot be loaded. */
int tp_unwind_load(void);

/* Up to size return addresses, innermost first; frame 0 is in tp_unwind
 * itself. Returns how many. Local unwinding only: no signal, no lock
 * beyond libunwind's own. */
int tp_unwind(void **buf, int size) __attribute__((noinline));

/* The most frames tp_unwind_signal returns. */
#define TP_UNWIND_MAX 128

/* From a signal handler: the stack of the code the signal interrupted,
 * ucontext being the handler's third argument. buf[0] is the interrupted
 * instruction pointer itself, the others return addresses. Up to size
 * (at most TP_UNWIND_MAX) entries; returns how many. Takes no lock but
 * libunwind's own (held with signals blocked) and the loader's list lock
 * that dl_iterate_phdr takes; never dladdr's. */
int tp_unwind_signal(void **buf, int size, const void *ucontext)
	__attribute__((noinline));

/* Exposed for the unit test: when the code at ip (a return address) is a
 * call followed by an epilogue tp_unwind can step over, the bytes that
 * epilogue pops from the stack above the frame's sp, and whether it pops
 * rbp (at sp + its offset); -1 otherwise. */
int tp_unwind_epilogue(const unsigned char *ip, int *rbp_at);

#endif
