/* files/: the run's file names and their safe creation (O_EXCL,
 * O_NOFOLLOW), fds tprof owns; on gzip/ and util/. */
/* Whole files written so that a reader never sees half of one (the
 * summaries at exit, tprof report's HTML and computed summaries, tprof
 * merge's output), and so that nobody who can write to the directory can
 * turn them against the user:
 *
 * - the temporary file has an unpredictable name and is created with
 *   O_CREAT|O_EXCL|O_NOFOLLOW (mkostemp), so a planted link is never
 *   followed;
 * - the final rename replaces only a regular file or nothing: a FIFO or a
 *   character device at the path (/dev/stdout, a pipe) is written through,
 *   never replaced; a symbolic link is written through only when it leads
 *   to a FIFO or a device, and otherwise refused (ELOOP), so a link planted
 *   in a shared directory never makes tprof write over its target or
 *   replace it. */
#ifndef TP_ATOMIC_FILE_H
#define TP_ATOMIC_FILE_H

#include <stddef.h>

struct tp_out_file {
	int fd;
	char *tmp;		/* NULL: written straight through to path */
	const char *path;
};

/* write(2) until all n bytes are out, again after EINTR: 0, or -1 with
 * errno. */
int tp_write_all(int fd, const void *p, size_t n);
/* Opens an output for path: 0, or -1 with errno (ELOOP: a link to a
 * regular file, EISDIR, EINVAL: a block device or other kind). */
int tp_out_create(struct tp_out_file *f, const char *path);
/* Completes it: close, and rename over path unless written through. */
int tp_out_commit(struct tp_out_file *f);
/* Closes it and removes the temporary file. */
void tp_out_abandon(struct tp_out_file *f);
/* The cause and fix for an errno of tp_out_create, for the one line. */
const char *tp_out_strerror(int err);
/* n bytes to path as above; a failure leaves no file. 0, or -1 with
 * errno. */
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
