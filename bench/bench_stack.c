/* The cost of one captured call stack (TPROF_BACKTRACE) at a depth of 32
 * frames: unwinding with libunwind and interning the stack, as a hook
 * does on a slow call. Prints "capture_ns N" and "depth N".
 *
 *   bench_stack CAPTURES
 */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "../trace/stacks.h"

static long captures;
static double result_ns;

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

/* 40 frames of program below the hook, so depth 32 is reached. */
__attribute__((noinline)) static void descend(int n)
{
	if (n > 0)
		descend(n - 1);
	else
		measure();
	__asm__ volatile("" ::: "memory");
}

int main(int argc, char **argv)
{
	captures = argc > 1 ? atol(argv[1]) : 20000;
	if (tp_stacks_init(0, 0, 32, 1.0) < 0)
		return 1;
	descend(40);
	if (result_ns < 0)
		return 1;
	printf("capture_ns %.1f\ndepth 32\nstacks %u\n", result_ns,
	       tp_stacks_count());
	return 0;
}
