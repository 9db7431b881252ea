/* files/: the run's file names and their safe creation (O_EXCL,
 * O_NOFOLLOW), fds tprof owns; on gzip/ and util/. */
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

static int is_stream(mode_t m)
{
	return S_ISFIFO(m) || S_ISCHR(m) || S_ISSOCK(m);
}

/* A FIFO or device, opened as it is: never created, truncated or
 * replaced. follow: the path was a link, and where it leads is checked
 * once open (it may have changed since lstat). */
static int open_through(struct tp_out_file *f, int follow)
{
	struct stat st;
	int fd;

	fd = open(f->path, O_WRONLY | O_NOCTTY | O_CLOEXEC |
		  (follow ? 0 : O_NOFOLLOW));
	if (fd < 0)
		return -1;
	if (fstat(fd, &st) < 0 || !is_stream(st.st_mode)) {
		close(fd);
		errno = ELOOP;
		return -1;
	}
	f->fd = fd;
	f->tmp = NULL;
	return 0;
}

static int open_tmp(struct tp_out_file *f)
{
	if (asprintf(&f->tmp, "%s.tmp.XXXXXX", f->path) < 0) {
		f->tmp = NULL;
		errno = ENOMEM;
		return -1;
	}
	f->fd = mkostemp(f->tmp, O_CLOEXEC);
	if (f->fd < 0) {
		int err = errno;

		free(f->tmp);
		f->tmp = NULL;
		errno = err;
		return -1;
	}
	fchmod(f->fd, 0644);
	return 0;
}

int tp_out_create(struct tp_out_file *f, const char *path)
{
	struct stat st;

	f->fd = -1;
	f->tmp = NULL;
	f->path = path;
	if (lstat(path, &st) < 0)
		return errno == ENOENT ? open_tmp(f) : -1;
	if (S_ISREG(st.st_mode))
		return open_tmp(f);
	if (S_ISDIR(st.st_mode)) {
		errno = EISDIR;
		return -1;
	}
	if (S_ISLNK(st.st_mode))
		return open_through(f, 1);
	if (is_stream(st.st_mode))
		return open_through(f, 0);
	errno = EINVAL;
	return -1;
}

int tp_out_commit(struct tp_out_file *f)
{
	int err = 0;

	if (close(f->fd) < 0)
		err = errno;
	f->fd = -1;
	if (!f->tmp)
		goto out;
	if (!err && rename(f->tmp, f->path) < 0)
		err = errno;
	if (err)
		unlink(f->tmp);
	free(f->tmp);
	f->tmp = NULL;
out:
	errno = err;
	return err ? -1 : 0;
}

void tp_out_abandon(struct tp_out_file *f)
{
	if (f->fd >= 0)
		close(f->fd);
	f->fd = -1;
	if (f->tmp)
		unlink(f->tmp);
	free(f->tmp);
	f->tmp = NULL;
}

const char *tp_out_strerror(int err)
{
	switch (err) {
	case ELOOP:
		return "it is a symbolic link to a file, which tprof never "
		       "writes through or replaces; give the file's own path";
	case EINVAL:
		return "it is neither a regular file, a FIFO nor a character "
		       "device; give another path";
	default:
		return strerror(err);
	}
}

int tp_write_file_atomic(const char *path, const void *p, size_t n)
{
	struct tp_out_file f;
	int err;

	if (tp_out_create(&f, path) < 0)
		return -1;
	if (tp_write_all(f.fd, p, n) < 0) {
		err = errno;
		tp_out_abandon(&f);
		errno = err;
		return -1;
	}
	return tp_out_commit(&f);
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
