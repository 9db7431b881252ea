/* The rings' share of an address-space limit (record/ring_budget.c). */
#include <stdio.h>
#include <sys/resource.h>
#include <unistd.h>

#include "record/ring_budget.h"
#include "tp_test.h"

static size_t vm_now(void)
{
	unsigned long pages = 0;
	FILE *f = fopen("/proc/self/statm", "r");

	if (f && fscanf(f, "%lu", &pages) != 1)
		pages = 0;
	if (f)
		fclose(f);
	return pages * (size_t)sysconf(_SC_PAGESIZE);
}

int main(void)
{
	size_t want = 16u << 20, limit, got, total = 0, one;
	struct rlimit rl;
	size_t n = 0, max;

	TP_CHECK_INT("ring budget: no limit, the size asked",
		     tp_ring_budget_take(want), want);
	tp_ring_budget_give(want);

	limit = vm_now() + (1u << 30);
	rl.rlim_cur = rl.rlim_max = limit;
	if (setrlimit(RLIMIT_AS, &rl) < 0)
		return 1;
	TP_CHECK("ring budget: limited", tp_as_limited(), "not seen");
	one = tp_ring_budget_take(want);
	TP_CHECK("ring budget: one ring at most limit / 4096",
		 one <= limit / TP_RING_ONE_SHARE &&
		 one >= TP_RING_MIN_BYTES, "%zu of %zu", one, limit);
	total = one;
	/* The loop ends when the budget says no; the bound only stops a
	 * broken budget. It is the most rings limit / 32 can hold, not a
	 * fixed count: under TSan the address space, and so the limit, is
	 * its shadow's 128 TiB, and limit / 32 holds 250k rings. */
	max = limit / TP_RING_SHARE / one + 2;
	while ((got = tp_ring_budget_take(want)) && n++ < max)
		total += got;
	TP_CHECK("ring budget: all rings at most limit / 32",
		 total <= limit / TP_RING_SHARE && total >= limit / 64,
		 "%zu of %zu", total, limit);
	tp_ring_budget_give(one);
	TP_CHECK("ring budget: a ring freed makes room again",
		 tp_ring_budget_take(want) == one, "no room");
	return TP_TEST_DONE();
}
