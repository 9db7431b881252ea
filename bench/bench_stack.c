/* The cost of one captured call stack (TPROF_BACKTRACE) at a depth of 32
 * frames: unwinding with libunwind and interning the stack, as a hook
 * does on a slow call. Measured twice: through ordinary frames, and
 * through frames like a Python program's under --python-stacks, where
 * every fourth frame is a perf trampoline without unwind information
 * (the walk then goes frame by frame). Prints "capture_ns N",
 * "capture_jit_ns N" and "depth N".
 *
 *   bench_stack CAPTURES
 */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "tests/common/jit_tramp.h"
#include "stacks/stacks.h"

static long captures;
static double result_ns;
static jit_tramp tramp[JIT_KINDS];

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* Stands in for a hook: tp_stack_capture skips itself and its caller. */
__attribute__((noinline)) static uint32_t hook(void)
{
	uint32_t id = tp_stack_capture();

	__asm__ volatile("" ::: "memory");
	return id;
}

static void measure(void)
{
	uint64_t t0;
	uint32_t id = 0;
	long i;

	hook();				/* first capture interns the stack */
	t0 = now_ns();
	for (i = 0; i < captures; i++)
		id |= hook();
	result_ns = (double)(now_ns() - t0) / (double)captures;
	if (!id)
		result_ns = -1;
}

/* 40 frames of program below the hook, so depth 32 is reached; with jit,
 * every fourth of them is a trampoline. */
__attribute__((noinline)) static long descend(void *jit, void *b, long n)
{
	long r = 0;

	if (n <= 0)
		measure();
	else if (jit && n % 4 == 0)
		r = tramp[JIT_SUB8](jit, b, n - 1, descend);
	else
		r = descend(jit, b, n - 1);
	__asm__ volatile("" ::: "memory");
	return r + 1;
}

int main(int argc, char **argv)
{
	double plain_ns;

	captures = argc > 1 ? atol(argv[1]) : 20000;
	if (tp_stacks_init(0, 0, 32, 1.0) < 0 || jit_make(tramp, NULL) < 0)
		return 1;
	descend(NULL, NULL, 40);
	plain_ns = result_ns;
	descend(tramp, NULL, 40);
	if (plain_ns < 0 || result_ns < 0)
		return 1;
	printf("capture_ns %.1f\ncapture_jit_ns %.1f\ndepth 32\nstacks %u\n",
	       plain_ns, result_ns, tp_stacks_count());
	return 0;
}
