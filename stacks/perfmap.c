/* stacks/: call stacks: capture (libunwind, Python perf trampolines),
 * symbolization, interning; on util/ .. session/. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "util/log.h"
#include "perfmap.h"

struct entry {
	uintptr_t start;
	uintptr_t end;
	char *name;
};

static struct entry *v;
static size_t n;
static off_t loaded_size = -1;

static void clear(void)
{
	size_t i;

	for (i = 0; i < n; i++)
		free(v[i].name);
	free(v);
	v = NULL;
	n = 0;
}

static int by_start(const void *a, const void *b)
{
	const struct entry *x = a, *y = b;

	return x->start < y->start ? -1 : x->start > y->start;
}

/* The file only grows while the program runs: read it again when its
 * size changed since the last time. */
static void reload(const char *path, off_t size)
{
	char line[4096];
	size_t cap = 0;
	FILE *f;

	clear();
	loaded_size = size;
	f = fopen(path, "re");
	if (!f)
		return;
	while (fgets(line, sizeof(line), f)) {
		unsigned long start, len;
		int off = 0;

		if (sscanf(line, "%lx %lx %n", &start, &len, &off) != 2 || !off)
			continue;
		line[strcspn(line, "\n")] = '\0';
		if (n == cap) {
			struct entry *nv;

			cap = cap ? cap * 2 : 256;
			nv = realloc(v, cap * sizeof(*v));
			if (!nv)
				break;
			v = nv;
		}
		v[n].start = start;
		v[n].end = start + len;
		v[n].name = strdup(line + off);
		if (v[n].name)
			n++;
	}
	fclose(f);
	qsort(v, n, sizeof(*v), by_start);
}

static void map_path(char *path, size_t len)
{
	snprintf(path, len, "/tmp/perf-%d.map", (int)getpid());
}

static const char *find(uintptr_t ip)
{
	size_t lo = 0, hi = n;

	while (lo < hi) {
		size_t mid = (lo + hi) / 2;

		if (ip < v[mid].start)
			hi = mid;
		else if (ip >= v[mid].end)
			lo = mid + 1;
		else
			return v[mid].name;
	}
	return NULL;
}

const char *tp_perfmap_lookup(uintptr_t ip)
{
	const char *name = find(ip);
	char path[64];
	struct stat st;

	if (name)
		return name;
	map_path(path, sizeof(path));
	if (stat(path, &st) < 0 || st.st_size == loaded_size)
		return NULL;
	reload(path, st.st_size);
	return find(ip);
}

/* Pythons before 3.12 have no perf trampoline and ignore the variable;
 * without this the user is left to wonder why no Python function shows. */
void tp_perfmap_warn_missing(void)
{
	const char *(*py_version)(void);
	const char *e = getenv("PYTHONPERFSUPPORT"), *v;
	char path[64];

	if (!e || strcmp(e, "1"))
		return;
	*(void **)&py_version = dlsym(RTLD_DEFAULT, "Py_GetVersion");
	if (!py_version)
		return;
	map_path(path, sizeof(path));
	if (access(path, F_OK) == 0)
		return;
	v = py_version();
	tp_warn("--python-stacks (PYTHONPERFSUPPORT=1): Python %.*s wrote no "
		"%s, so the stacks show no Python function: the perf "
		"trampoline needs Python 3.12 or later", (int)strcspn(v, " "),
		v, path);
}
