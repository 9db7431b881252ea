/* tp_unwind: stacks through frames without unwind information (the
 * Python perf trampolines), with the epilogue reader checked on its own
 * on byte strings. */
#include <stdint.h>

#include "stacks/unwind.h"
#include "tests/common/jit_tramp.h"
#include "tp_test.h"

#define WITHIN(ip, fn, len) \
	((uintptr_t)(ip) > (uintptr_t)(fn) && (uintptr_t)(ip) - (uintptr_t)(fn) < (len))
#ifdef TP_TEST_SANITIZED
/* Sanitized code is several times larger: a call site lies further in. */
#define NEAR(ip, fn) WITHIN(ip, fn, 4096)
#else
#define NEAR(ip, fn) WITHIN(ip, fn, 512)
#endif

static void check_epilogue(const char *name, const unsigned char *code,
			   int call_len, int want_off, int want_rbp)
{
	char what[128];
	int rbp_at, off = tp_unwind_epilogue(code + call_len, &rbp_at);

	snprintf(what, sizeof(what), "epilogue: %s: offset of ret", name);
	TP_CHECK_INT(what, off, want_off);
	snprintf(what, sizeof(what), "epilogue: %s: offset of rbp", name);
	TP_CHECK_INT(what, rbp_at, want_rbp);
}

static void test_epilogues(void)
{
	static const unsigned char sub8[] = { 0xff, 0xd1, 0x48, 0x83, 0xc4,
					      0x08, 0xc3 };
	static const unsigned char rbp[] = { 0xff, 0xd1, 0x5d, 0xc3 };
	static const unsigned char rel32[] = { 0xe8, 1, 2, 3, 4, 0x48, 0x83,
					       0xc4, 0x18, 0x90, 0x5d, 0xc3 };
	static const unsigned char r11[] = { 0x41, 0xff, 0xd3, 0xc3 };
	static const unsigned char pop_rbx[] = { 0xff, 0xd1, 0x5b, 0xc3 };
	static const unsigned char no_call[] = { 0x90, 0x90, 0x90, 0x90,
						 0x90, 0xc3 };
	static const unsigned char sub_rsp[] = { 0xff, 0xd1, 0x48, 0x83, 0xc4,
						 0xf8, 0xc3 };

	check_epilogue("3.12 trampoline", sub8, 2, 8, -1);
	check_epilogue("3.14 trampoline", rbp, 2, 8, 0);
	check_epilogue("call rel32, add, nop, pop rbp", rel32, 5, 0x20, 0x18);
	check_epilogue("call *%r11, ret", r11, 3, 0, -1);
	check_epilogue("pop %rbx is not read", pop_rbx, 2, -1, -1);
	check_epilogue("no call before", no_call, 5, -1, -1);
	check_epilogue("negative add", sub_rsp, 2, -1, -1);
}

static void *frames[64];
static int nframes;

__attribute__((noinline)) static long inner(void *a, void *b, long c)
{
	(void)a, (void)b;
	nframes = tp_unwind(frames, 64);
	__asm__ volatile("" ::: "memory");
	return c + 1;
}

__attribute__((noinline)) static long outer(jit_tramp t)
{
	long r = t(NULL, NULL, 1, inner);

	__asm__ volatile("" ::: "memory");
	return r + 1;
}

__attribute__((noinline)) static long plain(void)
{
	long r = inner(NULL, NULL, 1);

	__asm__ volatile("" ::: "memory");
	return r + 1;
}

static int find_main(int (*main_fn)(void))
{
	int i;

	for (i = 0; i < nframes; i++)
		if (WITHIN(frames[i], main_fn, 4096))
			return i;
	return -1;
}

static void check_walk(const char *name, jit_tramp t, unsigned ret_off,
		       int (*main_fn)(void))
{
	char what[128];

	nframes = 0;
	outer(t);
	snprintf(what, sizeof(what), "walk %s: frame 0 in tp_unwind", name);
	TP_CHECK(what, nframes > 0 && NEAR(frames[0], tp_unwind), "%d frames", nframes);
	snprintf(what, sizeof(what), "walk %s: frame 1 in the callee", name);
	TP_CHECK(what, nframes > 1 && NEAR(frames[1], inner), "%d frames", nframes);
	snprintf(what, sizeof(what), "walk %s: frame 2 the trampoline's return address", name);
	TP_CHECK(what, nframes > 2 && frames[2] == (char *)(void *)t + ret_off,
		 "%p, trampoline at %p", nframes > 2 ? frames[2] : NULL, (void *)t);
	snprintf(what, sizeof(what), "walk %s: frame 3 in its caller", name);
	TP_CHECK(what, nframes > 3 && NEAR(frames[3], outer), "%d frames", nframes);
	snprintf(what, sizeof(what), "walk %s: on down to main", name);
	TP_CHECK(what, find_main(main_fn) > 3, "main at %d of %d", find_main(main_fn), nframes);
}

int main(void)
{
	jit_tramp t[JIT_KINDS];
	int plain_main;

	test_epilogues();
	if (tp_unwind_load() < 0) {
		printf("FAIL unwind: libunwind.so.8 cannot be loaded (install libunwind8)\n");
		return 1;
	}
	nframes = 0;
	plain();
	plain_main = find_main((int (*)(void))main);
	TP_CHECK("walk without JIT frames: tp_unwind, callee, caller, main",
		 nframes > 3 && NEAR(frames[0], tp_unwind) && NEAR(frames[1], inner) &&
		 NEAR(frames[2], plain) && plain_main == 3, "main at %d of %d", plain_main, nframes);
	if (jit_make(t, NULL) < 0) {
		printf("FAIL unwind: cannot map an executable page\n");
		return 1;
	}
	check_walk("3.12 trampoline", t[JIT_SUB8], 6, (int (*)(void))main);
	check_walk("3.14 trampoline", t[JIT_RBP], 10, (int (*)(void))main);
	return TP_TEST_DONE();
}
