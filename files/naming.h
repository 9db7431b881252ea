/* files/: the run's file names and their safe creation (O_EXCL,
 * O_NOFOLLOW), fds tprof owns; on gzip/ and util/. */
/* Output file naming: <dir>/<name>-rank<R>.trace.json.gz (or, with
 * TPROF_FORMAT=perfetto, .pftrace.gz), written as <final>.tmp and renamed
 * when complete.
 *
 * A second process of the same run that would write an existing rank's
 * file (a forked child, an unranked helper) gets -pid<PID> added instead;
 * nothing is overwritten mid-run. A forked child never claims the rank's
 * name (claim 0): the process the launcher started owns it, however the
 * two race to their first event. Each image a process exec()s writes its
 * own file: the first free of -pid<P>, -pid<P>-exec2, -exec3, ...
 * Which run a file belongs to is read from
 * its gzip header comment, so no lock or marker file is left behind.
 */
#ifndef TP_NAMING_H
#define TP_NAMING_H

#include <stddef.h>
#include <sys/types.h>

#include "gzip/gzip.h"

#define TP_PATH_MAX 4352
#define TP_MAX_IMAGES 1000	/* files one pid may write (exec chains) */

struct tp_output {
	char final[TP_PATH_MAX - 16];
	char tmp[TP_PATH_MAX];
	char base[TP_PATH_MAX - 32];	/* without the suffix */
};

/* ".trace.json.gz" (the default) or ".pftrace.gz": set before the
 * first file is named. */
extern const char *tp_output_suffix;

int tp_mkdir_p(const char *dir);
/* A file of this process's own beside the trace (the rings file, the
 * flight file): dir (made if missing)/<prefix><pid>.<n><suffix>, the
 * first n from 0 to 99 not taken, created read-write, O_EXCL and
 * O_NOFOLLOW, mode 0600. Its descriptor, or -1 with errno; path (len
 * bytes) has its path, *name (if not NULL) points at its file name in
 * path. */
int tp_create_own_file(const char *dir, const char *prefix,
		       const char *suffix, char *path, size_t len,
		       const char **name);
/* Creates the tmp file and writes its gzip header; 0 or -1 with errno.
 * claim: this process may take the rank's own name (not a fork child). */
int tp_output_open(struct tp_output *o, struct tp_gz *g, const char *dir,
		   const char *name, int rank, int world_size,
		   const char *run_id, pid_t pid, int claim, int level);
void tp_output_names(struct tp_output *o, const char *dir, const char *name,
		     int rank, pid_t pid);

#endif
