/* hooks/osrt/: the blocking OS calls of the C library (TPROF_TRACE=osrt),
 * on hooks/ and sampling/. */
/* A blocking call over the threshold, as a record: a.raw[0] the
 * descriptor (or the object waited on, the pid), a.raw[1] bytes asked
 * (flags, timeout, time asked for), a.raw[2] the full result, a.raw[3]
 * errno when it failed; the file of a descriptor (or the path opened) in
 * the extension slots. The stack, with TPROF_BACKTRACE, when the call
 * lasted its threshold too. Runs on the calling thread, out of line. */
#define _GNU_SOURCE
#include <stdio.h>
#include <unistd.h>

#include "stacks/stacks.h"
#include "osrt.h"

/* Path extension: up to three slots (239 characters). */
#define PATH_SLOTS 3

/* This function's frame and the hook's are left out of the stack. */
static inline __attribute__((always_inline)) uint32_t stack_of(uint64_t t0,
							   uint64_t t1)
{
	if (!tp_bt_on || t1 - t0 < tp_bt_threshold_ticks)
		return 0;
	return tp_stack_capture_skip(2);
}

static void put(uint16_t api, uint64_t t0, uint64_t t1, uint32_t stack,
		uint64_t a, uint64_t b, int64_t ret, int err, const char *s)
{
	struct tp_osrt_rec r;
	struct tp_event *e;

	e = tp_osrt_reserve(&r, api, t0, t1, tp_osrt_ext_for(s, PATH_SLOTS));
	if (!e)
		return;
	e->ret = (int32_t)ret;
	e->a.raw[0] = a;
	e->a.raw[1] = b;
	e->a.raw[2] = (uint64_t)ret;
	e->a.raw[3] = ret < 0 ? (uint64_t)err : 0;
	e->stack = stack;
	if (s)
		tp_osrt_put_str(&r, s);
	tp_osrt_commit(&r);
}

void tp_osrt_rec_fd(uint16_t api, uint64_t t0, uint64_t t1, int fd,
		    uint64_t bytes, int64_t ret, int err)
{
	uint32_t stack = stack_of(t0, t1);
	char link[PATH_SLOTS * TP_EV_SLOT_BYTES], path[40];
	ssize_t n;

	snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
	n = fd >= 0 ? readlink(path, link, sizeof(link) - 1) : -1;
	if (n >= 0)
		link[n] = '\0';
	put(api, t0, t1, stack, (uint64_t)(int64_t)fd, bytes, ret, err,
	    n >= 0 ? link : NULL);
	__asm__ volatile("" ::: "memory");	/* not a tail call */
}

void tp_osrt_rec_path(uint16_t api, uint64_t t0, uint64_t t1,
		      const char *path, uint64_t flags, int64_t ret, int err)
{
	uint32_t stack = stack_of(t0, t1);

	put(api, t0, t1, stack, (uint64_t)-1, flags, ret, err, path);
	__asm__ volatile("" ::: "memory");
}

void tp_osrt_rec_val(uint16_t api, uint64_t t0, uint64_t t1, uint64_t a,
		     uint64_t b, int64_t ret, int err)
{
	uint32_t stack = stack_of(t0, t1);

	put(api, t0, t1, stack, a, b, ret, err, NULL);
	__asm__ volatile("" ::: "memory");
}
