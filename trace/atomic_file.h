/* trace/: the recording core: records, per-thread rings, threads, clock and
 * timeline, configuration, JSON and gzip, file naming; calls no other
 * folder. */
/* Whole files written so that a reader never sees half of one: the
 * summaries at exit, tprof report's HTML and computed summaries. */
#ifndef TP_ATOMIC_FILE_H
#define TP_ATOMIC_FILE_H

#include <stddef.h>

/* write(2) until all n bytes are out, again after EINTR: 0, or -1 with
 * errno. */
int tp_write_all(int fd, const void *p, size_t n);
/* n bytes to path, through path.tmp.<pid> renamed over it; a failure
 * leaves no file. 0, or -1 with errno. */
int tp_write_file_atomic(const char *path, const void *p, size_t n);

#endif
