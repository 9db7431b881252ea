/* record/: the recording core: records, per-thread rings, threads,
 * drops, the clock, the rings file; on files/ .. util/. */
#include <fcntl.h>
#include <sys/resource.h>
#include <unistd.h>

#include "ring_budget.h"

static size_t reserved;		/* bytes of the rings that exist */

int tp_as_limited(void)
{
	struct rlimit rl;

	return getrlimit(RLIMIT_AS, &rl) == 0 && rl.rlim_cur != RLIM_INFINITY;
}

/* The process's address space now (VmSize); 0 when unknown. Read with
 * open and read, not stdio: on a new thread malloc would reserve a
 * 64 MiB arena, the very address space this is about. */
static size_t vm_bytes(void)
{
	char buf[64];
	size_t pages = 0;
	ssize_t n, i;
	int fd = open("/proc/self/statm", O_RDONLY | O_CLOEXEC);

	if (fd < 0)
		return 0;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	for (i = 0; i < n && buf[i] >= '0' && buf[i] <= '9'; i++)
		pages = pages * 10 + (size_t)(buf[i] - '0');
	return pages * (size_t)sysconf(_SC_PAGESIZE);
}

static size_t min_size(size_t a, size_t b)
{
	return a < b ? a : b;
}

/* Read at every new thread's first event, not once: the program may
 * change its limit (setrlimit) as it goes. One allocation may have
 * limit / one_share of it (and what is left of the rings' share). */
static size_t take(size_t want, size_t one_share)
{
	struct rlimit rl;
	size_t limit, vm, headroom, total, now, bytes;

	if (getrlimit(RLIMIT_AS, &rl) < 0 || rl.rlim_cur == RLIM_INFINITY) {
		__atomic_add_fetch(&reserved, want, __ATOMIC_RELAXED);
		return want;
	}
	limit = (size_t)rl.rlim_cur;
	vm = vm_bytes();
	headroom = limit > vm ? limit - vm : 0;
	now = __atomic_load_n(&reserved, __ATOMIC_RELAXED);
	total = min_size(limit / TP_RING_SHARE,
			 now + headroom / TP_RING_HEADROOM_SHARE);
	bytes = min_size(want, limit / one_share);
	bytes = min_size(bytes, total > now ? total - now : 0);
	if (bytes < TP_RING_MIN_BYTES)
		return 0;
	__atomic_add_fetch(&reserved, bytes, __ATOMIC_RELAXED);
	return bytes;
}

size_t tp_ring_budget_take(size_t want)
{
	return take(want, TP_RING_ONE_SHARE);
}

size_t tp_ring_budget_take_pool(size_t want)
{
	return take(want, TP_RING_POOL_SHARE);
}

void tp_ring_budget_give(size_t bytes)
{
	__atomic_sub_fetch(&reserved, bytes, __ATOMIC_RELAXED);
}
