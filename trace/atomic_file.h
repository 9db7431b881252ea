/* Whole files written so that a reader never sees half of one: the
 * summaries at exit (in the output directory's summaries/), tprof
 * report's HTML and computed summaries. */
#ifndef TP_ATOMIC_FILE_H
#define TP_ATOMIC_FILE_H

#include <stddef.h>

/* write(2) until all n bytes are out, again after EINTR: 0, or -1 with
 * errno. */
int tp_write_all(int fd, const void *p, size_t n);
/* n bytes to path, through path.tmp.<pid> renamed over it; a failure
 * leaves no file. 0, or -1 with errno. */
int tp_write_file_atomic(const char *path, const void *p, size_t n);

/* DIR/SUB, made 0755 when missing (never group- or world-writable,
 * whatever the umask), opened without following a symlink; refused when
 * it is not a directory of ours that only we can write. The directory's
 * descriptor, or -1 with errno. */
int tp_open_subdir(const char *dir, const char *sub);
/* tp_write_file_atomic for name in the directory dirfd; the temporary
 * file is created O_EXCL | O_NOFOLLOW. */
int tp_write_file_atomic_at(int dirfd, const char *name, const void *p,
			    size_t n);

#endif
