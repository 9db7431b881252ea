/* Sleeping and waking on a 32-bit word, with no file descriptor: the
 * program may close or dup2 over any descriptor number, so tprof keeps
 * none for its own wake-ups. Both calls are async-signal-safe. */
#ifndef TP_FUTEX_H
#define TP_FUTEX_H

#include <limits.h>
#include <linux/futex.h>
#include <stdint.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

/* Sleeps while *w == val, at most ms milliseconds (or until a wake or a
 * signal). */
static inline void tp_futex_wait(uint32_t *w, uint32_t val, int ms)
{
	struct timespec ts = { ms / 1000, (long)(ms % 1000) * 1000000L };

	syscall(SYS_futex, w, FUTEX_WAIT_PRIVATE, val, &ts, NULL, 0);
}

static inline void tp_futex_wake_all(uint32_t *w)
{
	syscall(SYS_futex, w, FUTEX_WAKE_PRIVATE, INT_MAX, NULL, NULL, 0);
}

#endif
