/* trace/: the recording core: records, per-thread rings, threads, clock and
 * timeline, configuration, JSON and gzip, file naming; calls no other
 * folder. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
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
