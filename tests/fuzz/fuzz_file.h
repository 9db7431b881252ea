/* tests/fuzz: the fuzzed input as a file. The CLI's readers take paths
 * (they open plain or gzipped files and stream them), so each input is
 * written to a file of a private temporary directory, removed at exit.
 */
#ifndef TP_FUZZ_FILE_H
#define TP_FUZZ_FILE_H

#include <fcntl.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static char fz_dir[1024];
static char fz_paths[8][PATH_MAX];
static int fz_npaths;

static void fz_cleanup(void)
{
	for (int i = 0; i < fz_npaths; i++)
		unlink(fz_paths[i]);
	if (fz_dir[0])
		rmdir(fz_dir);
}

/* DIR/name holding data; NULL when the file cannot be written. */
static const char *fz_file(const char *name, const uint8_t *data,
			   size_t size)
{
	static char path[PATH_MAX];
	const char *tmp = getenv("TMPDIR");
	int fd, i;

	if (!fz_dir[0]) {
		snprintf(fz_dir, sizeof(fz_dir), "%s/tprof-fuzz-XXXXXX",
			 tmp && *tmp ? tmp : "/tmp");
		if (!mkdtemp(fz_dir)) {
			fz_dir[0] = 0;
			return NULL;
		}
		atexit(fz_cleanup);
	}
	snprintf(path, sizeof(path), "%s/%s", fz_dir, name);
	for (i = 0; i < fz_npaths && strcmp(fz_paths[i], path); i++)
		;
	if (i == fz_npaths && fz_npaths < 8)
		strcpy(fz_paths[fz_npaths++], path);
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	if (fd < 0)
		return NULL;
	while (size) {
		ssize_t n = write(fd, data, size);

		if (n <= 0) {
			close(fd);
			return NULL;
		}
		data += n;
		size -= (size_t)n;
	}
	close(fd);
	return path;
}

#endif
