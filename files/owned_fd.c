#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include "owned_fd.h"

/* Programs allocate descriptors from the bottom: start a quarter below
 * the soft limit (at most 1000, so select()-sized programs keep theirs
 * below 1024 free), leaving the top for a program that counts down. */
static int high_floor(void)
{
	struct rlimit rl;
	rlim_t floor;

	if (getrlimit(RLIMIT_NOFILE, &rl) < 0 || rl.rlim_cur == RLIM_INFINITY)
		return 1000;
	floor = rl.rlim_cur - rl.rlim_cur / 4;
	if (floor > 1000)
		floor = 1000;
	return floor < 3 ? 3 : (int)floor;
}

int tp_fd_high(int fd)
{
	int saved = errno, hi;

	if (fd < 0)
		return fd;
	hi = fcntl(fd, F_DUPFD_CLOEXEC, high_floor());
	if (hi < 0) {
		errno = saved;
		return fd;
	}
	close(fd);
	errno = saved;
	return hi;
}

static int same_as_path(int fd, const char *path)
{
	struct stat a, b;

	return fstat(fd, &a) == 0 && lstat(path, &b) == 0 &&
	       a.st_dev == b.st_dev && a.st_ino == b.st_ino;
}

/* The program may close the new descriptor and reuse its number between
 * open and the move (a close-all loop running while the writer opens the
 * trace): the high copy is checked against the path before anything is
 * written, the low number is closed only while it is still this file,
 * and the file is opened again (it exists now) when the copy is not. */
int tp_fd_open_high(const char *path, int flags, mode_t mode)
{
	int tries, fd, hi;

	for (tries = 0; tries < 4; tries++) {
		fd = open(path, flags | O_CLOEXEC | O_NOFOLLOW, mode);
		if (fd < 0)
			return -1;
		hi = fcntl(fd, F_DUPFD_CLOEXEC, high_floor());
		if (hi < 0)
			hi = fd;
		if (same_as_path(hi, path)) {
			if (hi != fd && same_as_path(fd, path))
				close(fd);
			return hi;
		}
		if (hi != fd)
			close(hi);
		flags &= ~(O_CREAT | O_EXCL | O_TRUNC);
	}
	errno = EBUSY;
	return -1;
}

int tp_fd_own(struct tp_owned_fd *o, int fd)
{
	struct stat st;

	o->fd = -1;
	if (fstat(fd, &st) < 0)
		return -1;
	o->fd = fd;
	o->dev = st.st_dev;
	o->ino = st.st_ino;
	return 0;
}

int tp_fd_same_file(const struct tp_owned_fd *o, int fd)
{
	struct stat st;
	int saved = errno, rc;

	rc = fd >= 0 && fstat(fd, &st) == 0 && st.st_dev == o->dev &&
	     st.st_ino == o->ino;
	errno = saved;
	return rc;
}

int tp_fd_is_ours(const struct tp_owned_fd *o)
{
	return o->fd >= 0 && tp_fd_same_file(o, o->fd);
}

int tp_fd_close(struct tp_owned_fd *o)
{
	int rc = 0;

	if (tp_fd_is_ours(o))
		rc = close(o->fd);
	o->fd = -1;
	return rc;
}
