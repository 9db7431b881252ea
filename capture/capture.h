/* capture/: when events are kept: steps, the schedule over them, and the
 * gates; on summary/ and the folders below it. */
/* When events are kept: steps, the schedule over them, and the gates
 * that open and close recording.
 *
 * The program's side moves the phase (off, warmup, active) and sets
 * tp_recording to match, so a hooked call costs one predictable branch
 * while nothing is recorded. Each change of phase is logged with its
 * time; the writer keeps an event only when the phase at its start was
 * active (warmup events are recorded, then discarded), and writes each
 * kept step as a ProfilerStep#N event on a track of its own.
 *
 * Phase = off unless every gate is open (tprof_enable/disable, the
 * TPROF_DELAY/TPROF_DURATION window, cudaProfilerStart/Stop with
 * TPROF_CAPTURE, the TPROF_SIGNAL toggle); with them open, the schedule
 * of the current step decides (active when there is no schedule).
 */
#ifndef TP_CAPTURE_H
#define TP_CAPTURE_H

#include <stdint.h>

#include "config/config.h"

enum tp_phase { TP_PHASE_OFF, TP_PHASE_WARMUP, TP_PHASE_ACTIVE };

/* The track of ProfilerStep events: above any Linux thread id. */
#define TP_STEPS_TID 1000000000u

/* torch.profiler.schedule's rule: the phase of step n (counted from 0,
 * the steps before the first tprof_step()); *last is set when no step
 * after n can be kept. */
enum tp_phase tp_schedule_phase(const struct tp_capture_config *c, long n,
				int *last);

/* ---- the program's side (any thread) ---- */

/* Notified on the thread that changes the phase or ends a step, under
 * the capture lock: TPROF_NSYS's cudaProfilerStart/Stop and NVTX. */
struct tp_capture_hooks {
	void (*window)(int active);
	void (*step)(long n, int begin);
};

/* At load: the first phase; sets tp_recording. */
void tp_capture_init(const struct tp_capture_config *c, unsigned sources);
void tp_capture_set_hooks(const struct tp_capture_hooks *h);
/* Ends the current step; returns the number of the one beginning. */
long tp_capture_step(void);
void tp_capture_user(int on);
void tp_capture_profiler_api(int on);
/* From the TPROF_SIGNAL handler: async-signal-safe; the writer applies
 * it (tp_capture_poll). */
void tp_capture_signal(void);
/* The time gates and signals need the writer's clock from the start. */
int tp_capture_needs_poll(void);
/* The writer, each cycle: applies due time gates and signals. */
void tp_capture_poll(void);
/* Warnings at exit: a schedule that saw no step, a gate never opened;
 * used: the process called a hooked library. */
void tp_capture_exit_notes(int used);
void tp_capture_after_fork(void);
int tp_capture_recording(void);

/* ---- the writer's side ---- */

/* Takes in phase changes published so far; call after reading a ring's
 * head, so every event read is covered. */
void tp_capture_sync(void);
/* Whether an event starting at this tick (or at this trace time, ns
 * after baseTimeNanoseconds) is kept. */
int tp_capture_kept(uint64_t ticks);
/* 0 while every event is kept (no schedule or gate has closed yet). */
int tp_capture_filtering(void);
int tp_capture_kept_ns(int64_t ts_ns);
/* Steps kept since the last call, as ProfilerStep#N events; returns how
 * many were written. */
struct tp_buf;
unsigned tp_capture_put_steps(struct tp_buf *b);
void tp_capture_put_meta(struct tp_buf *b);
void tp_capture_put_stats(struct tp_buf *b);
/* 1 when no event will be kept any more, with the tick that happened at
 * and the longest kept step (ticks), for the GPU teardown's grace. */
int tp_capture_finished(uint64_t *at_ticks, uint64_t *longest_step_ticks);

#endif
