/* stacks/: call stacks: capture (libunwind, Python perf trampolines),
 * symbolization, interning; on util/ .. session/. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <link.h>
#include <stdint.h>
#include <string.h>
#include <ucontext.h>

#include "unwind.h"

typedef int (*backtrace_fn)(void **, int);

static backtrace_fn fast_walk;

#if defined(__x86_64__)

/* libunwind's x86-64 local-unwinding entry points (the names its header
 * macros expand to) and register numbers. unw_context_t is ucontext_t
 * there; unw_cursor_t is 127 words in 1.6, given room to grow. */
#define UNW_RBX 3
#define UNW_RBP 6
#define UNW_RSP 7
#define UNW_R12 12
#define UNW_RIP 16

struct unw_cursor {
	uint64_t opaque[512];
};

typedef int (*getcontext_fn)(ucontext_t *);
typedef int (*init_local_fn)(struct unw_cursor *, ucontext_t *);
typedef int (*init_local2_fn)(struct unw_cursor *, ucontext_t *, int);
typedef int (*step_fn)(struct unw_cursor *);
typedef int (*get_reg_fn)(struct unw_cursor *, int, uint64_t *);

static getcontext_fn unw_getcontext;
static init_local_fn unw_init_local;
static init_local2_fn unw_init_local2;
static step_fn unw_step;
static get_reg_fn unw_get_reg;

/* Does a call instruction end right before ip? A return address always
 * follows one; anything else is not a frame to step over. */
static int after_call(const unsigned char *ip)
{
	if (ip[-2] == 0xff && (ip[-1] & 0xf8) == 0xd0)	/* call *%reg */
		return 1;
	if (ip[-3] == 0x41 && ip[-2] == 0xff && (ip[-1] & 0xf8) == 0xd0)
		return 1;				/* call *%r8..15 */
	return ip[-5] == 0xe8;				/* call rel32 */
}

/* Reads the straight-line code at the return address up to its ret,
 * accepting only what moves the stack pointer by a known amount. */
int tp_unwind_epilogue(const unsigned char *ip, int *rbp_at)
{
	const unsigned char *p = ip;
	int off = 0, i;

	*rbp_at = -1;
	if (!after_call(ip))
		return -1;
	for (i = 0; i < 8; i++) {
		if (p[0] == 0xc3)				/* ret */
			return off;
		if (p[0] == 0x48 && p[1] == 0x83 && p[2] == 0xc4 &&
		    (signed char)p[3] >= 0) {			/* add $i8,%rsp */
			off += p[3];
			p += 4;
		} else if (p[0] == 0x5d) {			/* pop %rbp */
			*rbp_at = off;
			off += 8;
			p++;
		} else if (p[0] == 0x90) {			/* nop */
			p++;
		} else {
			return -1;
		}
	}
	return -1;
}

/* Steps over the frame at cursor by emulating the epilogue at its return
 * address ip, which ends at ret at sp + off, and restarts libunwind in
 * the caller. The callee-saved registers are the frame's own, except rbp
 * when the epilogue pops it. */
static int step_over(struct unw_cursor *c, ucontext_t *uc, int off,
		     int rbp_at)
{
	uint64_t sp, rbp, rbx, r[4], ret;
	int i;

	if (unw_get_reg(c, UNW_RSP, &sp) < 0 ||
	    unw_get_reg(c, UNW_RBP, &rbp) < 0 ||
	    unw_get_reg(c, UNW_RBX, &rbx) < 0)
		return -1;
	for (i = 0; i < 4; i++)
		if (unw_get_reg(c, UNW_R12 + i, &r[i]) < 0)
			return -1;
	if (!sp || sp & 7)
		return -1;
	if (rbp_at >= 0)
		rbp = *(const uint64_t *)(uintptr_t)(sp + (uint64_t)rbp_at);
	ret = *(const uint64_t *)(uintptr_t)(sp + (uint64_t)off);
	if (!ret)
		return -1;
	memset(uc, 0, sizeof(*uc));
	uc->uc_mcontext.gregs[REG_RIP] = (greg_t)ret;
	uc->uc_mcontext.gregs[REG_RSP] = (greg_t)(sp + (uint64_t)off + 8);
	uc->uc_mcontext.gregs[REG_RBP] = (greg_t)rbp;
	uc->uc_mcontext.gregs[REG_RBX] = (greg_t)rbx;
	uc->uc_mcontext.gregs[REG_R12] = (greg_t)r[0];
	uc->uc_mcontext.gregs[REG_R13] = (greg_t)r[1];
	uc->uc_mcontext.gregs[REG_R14] = (greg_t)r[2];
	uc->uc_mcontext.gregs[REG_R15] = (greg_t)r[3];
	return unw_init_local(c, uc) < 0 ? -1 : 0;
}

/* One frame up. A frame whose return address is followed by an epilogue
 * tp_unwind_epilogue reads is stepped over by it: libunwind would stop
 * there if the code has no unwind information, and its failed step
 * leaves the cursor's registers unusable. Emulating the code that runs
 * on return is right for any frame, with information or not. */
static int step(struct unw_cursor *c, ucontext_t *uc, uint64_t ip)
{
	int rbp_at, off;

	off = tp_unwind_epilogue((const unsigned char *)(uintptr_t)ip,
				 &rbp_at);
	if (off >= 0)
		return step_over(c, uc, off, rbp_at);
	return unw_step(c) > 0 ? 0 : -1;
}

/* Frame by frame with libunwind's cursor. Frame 0 is the caller
 * (tp_unwind), as with unw_backtrace. */
__attribute__((noinline)) static int slow_walk(void **buf, int size)
{
	struct unw_cursor c;
	ucontext_t uc;
	uint64_t ip;
	int n = 0;

	if (unw_getcontext(&uc) < 0 || unw_init_local(&c, &uc) < 0 ||
	    unw_step(&c) <= 0)
		return 0;
	while (n < size) {
		if (unw_get_reg(&c, UNW_RIP, &ip) < 0 || !ip)
			break;
		buf[n++] = (void *)(uintptr_t)ip;
		if (step(&c, &uc, ip) < 0)
			break;
	}
	return n;
}

static void load_slow(void *h)
{
	unw_getcontext = (getcontext_fn)dlsym(h, "_Ux86_64_getcontext");
	unw_init_local = (init_local_fn)dlsym(h, "_ULx86_64_init_local");
	unw_init_local2 = (init_local2_fn)dlsym(h, "_ULx86_64_init_local2");
	unw_step = (step_fn)dlsym(h, "_ULx86_64_step");
	unw_get_reg = (get_reg_fn)dlsym(h, "_ULx86_64_get_reg");
}

static int slow_ok(void)
{
	return unw_getcontext && unw_init_local && unw_step && unw_get_reg;
}

/* Did the fast walk stop short at a frame slow_walk can step over, or
 * walk through one wrongly? unw_backtrace has no unwind information for
 * a JIT frame. It stops there, unless the caller keeps a frame pointer:
 * then its frame-pointer fallback takes a frame that leaves rbp alone
 * (CPython 3.12's trampoline: sub $8,%rsp; call; add $8,%rsp; ret) as the
 * caller's and returns to the caller's caller: the caller's frame is
 * lost. Such a frame lies in no loaded object (dladdr), which is asked
 * only of the rare return addresses followed by such an epilogue. */
static int stopped_at_jit(void **buf, int n, int size)
{
	Dl_info info;
	int rbp_at, i;

	if (n <= 0 || !slow_ok())
		return 0;
	if (n < size && tp_unwind_epilogue(buf[n - 1], &rbp_at) >= 0)
		return 1;
	for (i = 1; i < n; i++)
		if (tp_unwind_epilogue(buf[i], &rbp_at) >= 0 && rbp_at < 0 &&
		    !dladdr(buf[i], &info))
			return 1;
	return 0;
}

/* libunwind's flag for a context taken in a signal handler: its
 * instruction pointer is exact, not a return address. */
#define UNW_INIT_SIGNAL_FRAME 1

struct in_obj {
	uintptr_t ip;
};

static int holds(struct dl_phdr_info *info, size_t size, void *data)
{
	struct in_obj *o = data;
	int i;

	(void)size;
	for (i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
		uintptr_t lo = info->dlpi_addr + ph->p_vaddr;

		if (ph->p_type == PT_LOAD && o->ip >= lo &&
		    o->ip - lo < ph->p_memsz)
			return 1;
	}
	return 0;
}

/* Whether a loaded object holds ip, without dladdr: dladdr takes the
 * loader lock that dlopen holds while a library's constructors run, and
 * a signal handler must never wait for another thread's dlopen. */
static int in_object(void *ip)
{
	struct in_obj o = { (uintptr_t)ip };

	return dl_iterate_phdr(holds, &o) == 1;
}

/* stopped_at_jit for a sampled stack: buf[0] is the interrupted
 * instruction, not a return address, so its bytes are not read (it may
 * be the first of a mapping). */
static int sig_stopped_at_jit(void **buf, int n, int size)
{
	int rbp_at, i;

	if (n <= 1 || !slow_ok() || !unw_init_local2)
		return 0;
	if (n < size && tp_unwind_epilogue(buf[n - 1], &rbp_at) >= 0)
		return 1;
	for (i = 1; i < n; i++)
		if (tp_unwind_epilogue(buf[i], &rbp_at) >= 0 && rbp_at < 0 &&
		    !in_object(buf[i]))
			return 1;
	return 0;
}

/* Frame by frame from the interrupted context: the first step is
 * libunwind's own (the interrupted frame may be anywhere in its code),
 * the others may step over a frame without unwind information. */
static int sig_slow_walk(void **buf, int size, const ucontext_t *at)
{
	struct unw_cursor c;
	ucontext_t uc;
	uint64_t ip;
	int n = 0;

	if (!unw_init_local2)
		return 0;
	memcpy(&uc, at, sizeof(uc));
	if (unw_init_local2(&c, &uc, UNW_INIT_SIGNAL_FRAME) < 0)
		return 0;
	while (n < size) {
		if (unw_get_reg(&c, UNW_RIP, &ip) < 0 || !ip)
			break;
		buf[n++] = (void *)(uintptr_t)ip;
		if (n == 1 ? unw_step(&c) <= 0 : step(&c, &uc, ip) < 0)
			break;
	}
	return n;
}

/* The handler's own frames (this one, the sampler's, the handler, the
 * kernel's signal trampoline) the fast walk goes through first. */
#define HANDLER_FRAMES 12

int tp_unwind_signal(void **buf, int size, const void *ucontext)
{
	const ucontext_t *uc = ucontext;
	uintptr_t rip = (uintptr_t)uc->uc_mcontext.gregs[REG_RIP];
	void *tmp[TP_UNWIND_MAX + HANDLER_FRAMES];
	int n, k;

	if (!fast_walk || size <= 0)
		return 0;
	if (size > TP_UNWIND_MAX)
		size = TP_UNWIND_MAX;
	n = fast_walk(tmp, size + HANDLER_FRAMES);
	for (k = 0; k < n && k < HANDLER_FRAMES; k++)
		if ((uintptr_t)tmp[k] == rip)
			break;
	if (k < n && k < HANDLER_FRAMES) {
		n -= k;
		if (n > size)
			n = size;
		memcpy(buf, tmp + k, (size_t)n * sizeof(*buf));
		if (!sig_stopped_at_jit(buf, n, size))
			return n;
	}
	n = sig_slow_walk(buf, size, uc);
	if (n > 0)
		return n;
	buf[0] = (void *)rip;
	return 1;
}

#else

static void load_slow(void *h)
{
	(void)h;
}

static int stopped_at_jit(void **buf, int n, int size)
{
	(void)buf, (void)n, (void)size;
	return 0;
}

static int slow_walk(void **buf, int size)
{
	(void)buf, (void)size;
	return 0;
}

int tp_unwind_epilogue(const unsigned char *ip, int *rbp_at)
{
	(void)ip;
	*rbp_at = -1;
	return -1;
}

int tp_unwind_signal(void **buf, int size, const void *ucontext)
{
	(void)buf, (void)size, (void)ucontext;
	return 0;
}

#endif

int tp_unwind_load(void)
{
	void *h = dlopen("libunwind.so.8", RTLD_NOW | RTLD_LOCAL);

	if (!h)
		return -1;
	fast_walk = (backtrace_fn)dlsym(h, "unw_backtrace");
	if (!fast_walk)
		return -1;
	load_slow(h);
	return 0;
}

/* unw_backtrace is the fast path (libunwind caches each frame's unwind
 * rule); the cursor walk runs only when it stopped at a JIT frame. Each
 * of its unw_step calls takes libunwind's global cache lock with the
 * signals blocked (two sigprocmask calls): most of its 350 ns a frame. */
int tp_unwind(void **buf, int size)
{
	int n = fast_walk(buf, size);

	if (!stopped_at_jit(buf, n, size))
		return n;
	n = slow_walk(buf, size);
	/* Not a tail call: slow_walk's frame 0 must be this function. */
	__asm__ volatile("" : "+r"(n));
	return n;
}
