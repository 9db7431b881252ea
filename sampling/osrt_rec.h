/* sampling/: the host side: CPU samples (signal handler, per-thread timers
 * or perf events) and the rings of blocking OS calls; on util/ ..
 * capture/. */
/* Recording a blocking OS call (TPROF_TRACE=osrt) into its thread's
 * osrt ring (hthread.h). A hook reads the clock around the real call;
 * only a call that took TPROF_OSRT_MIN_US or longer goes on to
 * tp_osrt_reserve, out of line, so a call under the threshold costs two
 * clock reads and a compare.
 *
 * The threshold is in ticks, set by the writer once the process is
 * traced (its first CUDA call): until then it is "never", and nothing
 * is recorded. tprof's own threads (the writer) record nothing.
 */
#ifndef TP_OSRT_REC_H
#define TP_OSRT_REC_H

#include <stdint.h>

#include "config/config.h"
#include "record/clock.h"
#include "record/event.h"
#include "record/thread.h"
#include "hthread.h"

/* Ticks a call must last to be recorded; UINT64_MAX: record none. */
extern uint64_t tp_osrt_min_ticks;

/* Writer: the threshold, once ticks can be converted (0 stops). */
void tp_osrt_set_threshold(uint64_t ticks);

/* Blocking calls are being recorded (the hook's fast path's test). */
static inline int tp_osrt_on(void)
{
	return __atomic_load_n(&tp_recording, __ATOMIC_RELAXED) & TP_SRC_OSRT;
}

/* A call about to be timed: 0 to call straight through (not recording,
 * or a tprof thread). */
static inline int tp_osrt_begin(uint64_t *t0)
{
	struct tp_thread *t;

	if (__builtin_expect(!(__atomic_load_n(&tp_recording,
					       __ATOMIC_RELAXED) &
			       TP_SRC_OSRT), 1))
		return 0;
	t = tp_self;
	if (__builtin_expect(t && t->internal, 0))
		return 0;
	*t0 = tp_ticks();
	return 1;
}

/* The call ended at *t1: 1 when it is to be recorded. */
static inline int tp_osrt_over(uint64_t t0, uint64_t *t1)
{
	*t1 = tp_ticks();
	return __builtin_expect(*t1 - t0 >= __atomic_load_n(&tp_osrt_min_ticks,
							    __ATOMIC_RELAXED),
				0);
}

/* One record being written. */
struct tp_osrt_rec {
	struct tp_hthread *h;
	unsigned n;		/* slots: the record and its extension */
};

/* The record to fill, with n_ext extension slots, or NULL (no ring, the
 * ring full, or a record of this thread already being written by the
 * code a signal handler interrupted: each counted). */
struct tp_event *tp_osrt_reserve(struct tp_osrt_rec *r, uint16_t api,
				 uint64_t t0, uint64_t t1, unsigned n_ext)
	__attribute__((noinline));
/* Copies a NUL-terminated string into the extension (at most n_ext
 * slots, cut with "..."). */
void tp_osrt_put_str(struct tp_osrt_rec *r, const char *s);
void tp_osrt_commit(struct tp_osrt_rec *r);
void tp_osrt_after_fork(void);

/* The extension slots a string takes (and its NUL), at most max. */
static inline unsigned tp_osrt_ext_for(const char *s, unsigned max)
{
	unsigned long len = s ? __builtin_strlen(s) + 1 : 0;
	unsigned n = (unsigned)((len + TP_EV_SLOT_BYTES - 1) /
				TP_EV_SLOT_BYTES);

	return n > max ? max : n;
}

#endif
