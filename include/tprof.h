/* tprof public C API.
 *
 * libtprof.so is normally preloaded (LD_PRELOAD or tprof-run) into an
 * unchanged program; nothing here is needed for that. A program that
 * wants to mark its steps or ranges itself calls these functions. They
 * are cheap, thread-safe, never fail the caller, and do nothing when
 * tracing is off. A program that must also run without tprof looks them
 * up with dlsym(RTLD_DEFAULT, "tprof_step") instead of linking to them.
 */
#ifndef TPROF_H
#define TPROF_H

#include <stdint.h>

#define TPROF_VERSION "0.1.0"

#ifdef __cplusplus
extern "C" {
#endif

/* Ends the current step (step 0 starts when the library loads) and
 * returns the number of the step that begins. The schedule
 * (TPROF_WAIT, TPROF_WARMUP, TPROF_ACTIVE, ...) counts these. */
long tprof_step(void);

/* A range on the calling thread, written as a user_annotation event;
 * pops end the innermost range the thread opened with tprof_range_push. */
void tprof_range_push(const char *name);
void tprof_range_pop(void);
/* As tprof_range_pop, recording device memory in bytes: allocated at the
 * range's entry and exit, and the peak inside it. */
void tprof_range_pop_memory(int64_t at_entry, int64_t at_exit, int64_t peak);

/* An instant event on the calling thread. */
void tprof_mark(const char *name);

/* Turn recording off and on again (it starts on). Both gate what the
 * environment's schedule and capture range allow; they do not override
 * them. */
void tprof_enable(void);
void tprof_disable(void);

/* 1 while events are being recorded, else 0. */
int tprof_recording(void);

#ifdef __cplusplus
}
#endif

#endif
