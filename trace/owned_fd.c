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
