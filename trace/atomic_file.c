#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "atomic_file.h"

int tp_write_all(int fd, const void *p, size_t n)
{
	const char *c = p;

	while (n) {
		ssize_t w = write(fd, c, n);

		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0) {
			if (!w)
				errno = EIO;
			return -1;
		}
		c += w;
		n -= (size_t)w;
	}
	return 0;
}

int tp_write_file_atomic(const char *path, const void *p, size_t n)
{
	char *tmp = NULL;
	int fd, err = 0;

	if (asprintf(&tmp, "%s.tmp.%ld", path, (long)getpid()) < 0)
		return -1;
	fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (fd < 0) {
		err = errno;
		goto out;
	}
	if (tp_write_all(fd, p, n) < 0)
		err = errno;
	if (close(fd) < 0 && !err)
		err = errno;
	if (!err && rename(tmp, path) < 0)
		err = errno;
	if (err)
		unlink(tmp);
out:
	free(tmp);
	errno = err;
	return err ? -1 : 0;
}

int tp_open_subdir(const char *dir, const char *sub)
{
	struct stat st;
	char *path = NULL;
	int fd = -1, err = 0;

	if (asprintf(&path, "%s/%s", dir, sub) < 0)
		return -1;
	if (mkdir(path, 0755) < 0 && errno != EEXIST) {
		err = errno;
		goto out;
	}
	fd = open(path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0) {
		err = errno;
		goto out;
	}
	/* one planted by someone else in a shared directory is not ours */
	if (fstat(fd, &st) < 0)
		err = errno;
	else if (st.st_uid != geteuid() || (st.st_mode & 0022))
		err = EPERM;
	if (err) {
		close(fd);
		fd = -1;
	}
out:
	free(path);
	errno = err;
	return fd;
}

int tp_write_file_atomic_at(int dirfd, const char *name, const void *p,
			    size_t n)
{
	char *tmp = NULL;
	int fd, err = 0;

	if (asprintf(&tmp, "%s.tmp.%ld", name, (long)getpid()) < 0)
		return -1;
	fd = openat(dirfd, tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW |
		    O_CLOEXEC, 0644);
	if (fd < 0) {
		err = errno;
		goto out;
	}
	if (tp_write_all(fd, p, n) < 0)
		err = errno;
	if (close(fd) < 0 && !err)
		err = errno;
	if (!err && renameat(dirfd, tmp, dirfd, name) < 0)
		err = errno;
	if (err)
		unlinkat(dirfd, tmp, 0);
out:
	free(tmp);
	errno = err;
	return err ? -1 : 0;
}
