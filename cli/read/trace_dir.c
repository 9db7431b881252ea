/* The traces of a directory (trace_dir.h): by their names, or by their
 * content for other JSON files (trace_sniff.c). Calls only down, into
 * trace_sniff.c. Used by merge.c and check_cmd.c; report_input.c has its
 * own listing, as it takes summaries too. */
#define _GNU_SOURCE
#include "trace_dir.h"
#include "trace_sniff.h"

#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

static int ends_with(const char *s, const char *suffix)
{
	size_t n = strlen(s), k = strlen(suffix);

	return n >= k && !strcmp(s + n - k, suffix);
}

static int is_trace_name(const char *name)
{
	return ends_with(name, ".trace.json.gz") ||
	       ends_with(name, ".trace.json") ||
	       ends_with(name, ".pftrace.gz") || ends_with(name, ".pftrace");
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* path, when it is a regular file holding a trace; else freed. */
static char *take(char *path, int named)
{
	struct stat st;

	if (stat(path, &st) || !S_ISREG(st.st_mode) ||
	    (!named && !tp_sniff_trace(path))) {
		free(path);
		return NULL;
	}
	return path;
}

static int push(struct tp_trace_dir *out, size_t *cap, char *path)
{
	char **t;

	if (out->n == *cap) {
		t = realloc(out->paths, (2 * *cap + 16) * sizeof(*t));
		if (!t)
			return -1;
		out->paths = t;
		*cap = 2 * *cap + 16;
	}
	out->paths[out->n++] = path;
	return 0;
}

int tp_trace_dir_list(const char *dir, struct tp_trace_dir *out)
{
	const char *sep = ends_with(dir, "/") ? "" : "/";
	struct dirent *de;
	size_t cap = 0;
	char *path;
	int named;
	DIR *d;

	out->paths = NULL;
	out->n = 0;
	d = opendir(dir);
	if (!d)
		return -1;
	while ((de = readdir(d))) {
		named = is_trace_name(de->d_name);
		if (!named && !tp_sniff_name(de->d_name))
			continue;
		if (asprintf(&path, "%s%s%s", dir, sep, de->d_name) < 0)
			goto oom;
		path = take(path, named);
		if (path && push(out, &cap, path)) {
			free(path);
			goto oom;
		}
	}
	closedir(d);
	if (out->n)
		qsort(out->paths, out->n, sizeof(*out->paths), cmp_str);
	return 0;
oom:
	closedir(d);
	tp_trace_dir_free(out);
	errno = ENOMEM;
	return -1;
}

void tp_trace_dir_free(struct tp_trace_dir *d)
{
	size_t i;

	for (i = 0; i < d->n; i++)
		free(d->paths[i]);
	free(d->paths);
	d->paths = NULL;
	d->n = 0;
}
