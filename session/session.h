/* session/: the run's session: configuration applied, the timeline
 * (ticks to trace time), metadata, how the run ended; on record/ and below. */
/* The state of tracing in this process: configuration in force, run
 * identity, rank, and the clock anchor every timestamp is mapped from. */
#ifndef TP_SESSION_H
#define TP_SESSION_H

#include <stdint.h>
#include <sys/types.h>

#include "record/clock.h"
#include "config/config.h"

#include <tprof.h>

#define TP_VERSION TPROF_VERSION

struct tp_session {
	struct tp_config cfg;
	char run_id[128];
	char host[256];
	pid_t pid;
	struct tp_clock_point anchor;
	int64_t base_ns;	/* baseTimeNanoseconds */
	int active;		/* tracing is on for this process */
	int forked;		/* a fork child: never owns the rank's name */
};

extern struct tp_session tp_sess;

/* Parses the environment; 0 when tracing is on. On a bad value prints
 * one "tprof: error:" line and leaves tracing off. */
int tp_session_init(void);
/* The fork child keeps the configuration, gets its own identity. */
void tp_session_after_fork(void);
/* Unix time floored to a boundary all ranks of a job normally share. */
int64_t tp_session_base_ns(uint64_t unix_ns);

/* The NCCL world, from the communicators the program created: the
 * largest one (the job's world, normally), and how many there were. */
struct tp_nccl_world {
	int rank;
	int size;
	unsigned comms;
	char version[32];
};

/* A communicator was created (any thread). */
void tp_session_note_nccl(int rank, int size, const char *version);
/* 1 and the world, or 0 when no communicator was created. */
int tp_session_nccl(struct tp_nccl_world *w);

#define TP_BASE_BOUNDARY_NS 100000000000000ll	/* 10^14 ns, ~27.8 h */

#endif
