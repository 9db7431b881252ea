/* Stand-ins for the Python interpreter's perf trampolines (-X perf):
 * copies of its x86-64 code in anonymous executable memory, which has no
 * unwind information, as in the interpreter.
 *
 *   3.12, 3.13:      sub $8,%rsp; call *%rcx; add $8,%rsp; ret
 *   3.14 and later:  endbr64; push %rbp; mov %rsp,%rbp; call *%rcx;
 *                    pop %rbp; ret
 *
 * A trampoline is called as tramp(a, b, c, fn) and calls fn(a, b, c), as
 * the interpreter's calls its evaluator.
 */
#ifndef JIT_TRAMP_H
#define JIT_TRAMP_H

#include <string.h>
#include <sys/mman.h>

typedef long (*jit_fn)(void *a, void *b, long c);
typedef long (*jit_tramp)(void *a, void *b, long c, jit_fn fn);

enum { JIT_SUB8, JIT_RBP, JIT_KINDS };

static const unsigned char jit_code_sub8[] = {
	0x48, 0x83, 0xec, 0x08, 0xff, 0xd1, 0x48, 0x83, 0xc4, 0x08, 0xc3,
};
static const unsigned char jit_code_rbp[] = {
	0xf3, 0x0f, 0x1e, 0xfa, 0x55, 0x48, 0x89, 0xe5, 0xff, 0xd1, 0x5d,
	0xc3,
};

#define JIT_SLOT 64	/* bytes between the trampolines in the page */

/* Maps one page holding both trampolines; 0, or -1 when it cannot. */
static int jit_make(jit_tramp tramp[JIT_KINDS], unsigned *sizes)
{
	unsigned char *page = mmap(NULL, 4096, PROT_READ | PROT_WRITE,
				   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	if (page == MAP_FAILED)
		return -1;
	memcpy(page, jit_code_sub8, sizeof(jit_code_sub8));
	memcpy(page + JIT_SLOT, jit_code_rbp, sizeof(jit_code_rbp));
	if (mprotect(page, 4096, PROT_READ | PROT_EXEC) < 0)
		return -1;
	tramp[JIT_SUB8] = (jit_tramp)(void *)page;
	tramp[JIT_RBP] = (jit_tramp)(void *)(page + JIT_SLOT);
	if (sizes) {
		sizes[JIT_SUB8] = sizeof(jit_code_sub8);
		sizes[JIT_RBP] = sizeof(jit_code_rbp);
	}
	return 0;
}

#endif
