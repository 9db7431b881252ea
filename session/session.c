/* session/: the run's session: configuration applied, the timeline
 * (ticks to trace time), metadata, how the run ended; on record/ and below. */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "util/log.h"
#include "files/naming.h"
#include "record/flightfile.h"
#include "record/ringfile.h"
#include "record/spill.h"
#include "gzip/gzip_isal.h"
#include "session.h"
#include "record/thread.h"

struct tp_session tp_sess;

int64_t tp_session_base_ns(uint64_t unix_ns)
{
	return (int64_t)(unix_ns / TP_BASE_BOUNDARY_NS * TP_BASE_BOUNDARY_NS);
}

/* Run ids go into file headers and are compared as words. */
static void sanitize(char *s)
{
	for (; *s; s++)
		if (!((*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z') ||
		      (*s >= '0' && *s <= '9') || *s == '-' || *s == '.' ||
		      *s == '_'))
			*s = '_';
}

/* The first preloaded process of a job names the run; everything it
 * starts (torchrun workers, exec'd programs) inherits the name, which is
 * how a second process of the same run is told from a rerun. */
static void set_run_id(void)
{
	const char *env = getenv("TPROF_RUN_ID");

	if (env && *env) {
		snprintf(tp_sess.run_id, sizeof(tp_sess.run_id), "%s", env);
	} else {
		snprintf(tp_sess.run_id, sizeof(tp_sess.run_id),
			 "%.60s-%d-%llu", tp_sess.host, (int)getpid(),
			 (unsigned long long)tp_sess.anchor.unix_ns);
		sanitize(tp_sess.run_id);
		setenv("TPROF_RUN_ID", tp_sess.run_id, 0);
	}
	sanitize(tp_sess.run_id);
}

static int check_dir(const char *dir)
{
	if (tp_mkdir_p(dir) < 0) {
		tp_error("TPROF_OUTPUT_DIR='%s' cannot be created: %s; "
			 "choose a writable directory. Tracing is off for "
			 "this process", dir, strerror(errno));
		return -1;
	}
	if (access(dir, W_OK | X_OK) < 0) {
		tp_error("TPROF_OUTPUT_DIR='%s' is not writable: %s; choose "
			 "a writable directory. Tracing is off for this "
			 "process", dir, strerror(errno));
		return -1;
	}
	return 0;
}

static const char *env(const char *name)
{
	return getenv(name);
}

int tp_session_init(void)
{
	char err[512];

	tp_sess.active = 0;
	if (tp_config_parse(&tp_sess.cfg, env, err, sizeof(err)) < 0) {
		tp_error("%s. Tracing is off for this process", err);
		return -1;
	}
	tp_log_level = tp_sess.cfg.log_level;
	if (tp_sess.cfg.disabled)
		return -1;
	if (tp_config_unknown(environ, err, sizeof(err)))
		tp_warn("%s", err);
	if (check_dir(tp_sess.cfg.dir) < 0)
		return -1;
	tp_clock_init();
	tp_sess.anchor = tp_clock_sample();
	tp_sess.base_ns = tp_session_base_ns(tp_sess.anchor.unix_ns);
	tp_sess.pid = getpid();
	if (gethostname(tp_sess.host, sizeof(tp_sess.host) - 1) < 0)
		strcpy(tp_sess.host, "unknown");
	set_run_id();
	tp_thread_set_ring_bytes((size_t)tp_sess.cfg.buffer_mb << 20);
	tp_spill_configure((size_t)tp_sess.cfg.spill_mb << 20);
	/* Now, at start, not when the writer opens the trace: dlopen takes
	 * the loader lock, which a thread running a new library's
	 * constructors holds; if that thread then waits in a hook after
	 * SIGTERM, a writer still to load ISA-L could never finish. */
	tp_isal_load("libisal.so.2");
	tp_rf_configure(tp_sess.cfg.dir, !tp_sess.cfg.ring_file ?
			"TPROF_RING_FILE=0" : NULL);
	/* The flight recorder's window on disk too, beside the rings: what
	 * a SIGKILL leaves for tprof recover. */
	if (tp_sess.cfg.fl.flight_ns && tp_sess.cfg.ring_file)
		tp_ff_configure(tp_sess.cfg.dir,
				(uint64_t)tp_sess.cfg.fl.flight_mb << 20,
				tp_sess.cfg.fl.flight_ns,
				tp_sess.cfg.format == TP_FORMAT_PERFETTO);
	tp_sess.active = 1;
	return 0;
}

static pthread_mutex_t nccl_lock = PTHREAD_MUTEX_INITIALIZER;
static struct tp_nccl_world nccl;

void tp_session_after_fork(void)
{
	tp_sess.pid = getpid();
	/* Decided here, before the child can record anything: the rank's
	 * file is its parent's, whichever records first. */
	tp_sess.forked = 1;
	/* The child has none of its parent's communicators. */
	pthread_mutex_init(&nccl_lock, NULL);
	memset(&nccl, 0, sizeof(nccl));
}

void tp_session_note_nccl(int rank, int size, const char *version)
{
	pthread_mutex_lock(&nccl_lock);
	nccl.comms++;
	if (size > nccl.size) {
		nccl.rank = rank;
		nccl.size = size;
	}
	if (version && version[0])
		snprintf(nccl.version, sizeof(nccl.version), "%s", version);
	pthread_mutex_unlock(&nccl_lock);
}

int tp_session_nccl(struct tp_nccl_world *w)
{
	pthread_mutex_lock(&nccl_lock);
	*w = nccl;
	pthread_mutex_unlock(&nccl_lock);
	return w->comms > 0;
}
