/* tprof recover: the rings file a killed process left beside its .tmp
 * (record/ringfile.h). The records it holds past the .tmp's last sync
 * point are decoded by libtprof.so's own formatters: the tprof binary
 * links only trace/ and summary/, so the library beside it (or in
 * ../lib) is dlopened with TPROF_DISABLE=1, which keeps its constructor
 * from starting anything, and its tprof_rings_decode is called. */
#define _GNU_SOURCE
#include <dirent.h>
#include <dlfcn.h>
#include <errno.h>
#include <libgen.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "recover_rings.h"

static int rings_pid(const char *name)
{
	int pid, n;

	if (strncmp(name, TP_RF_PREFIX, strlen(TP_RF_PREFIX)) ||
	    sscanf(name + strlen(TP_RF_PREFIX), "%d.%d", &pid, &n) != 2)
		return -1;
	return pid;
}

int tp_rings_find(const char *dir, int pid, const char *tmp_name,
		  struct tp_rings_found *f)
{
	struct tp_rf_view v;
	struct dirent *de;
	char why[256];
	DIR *d = opendir(dir);
	int rc = -1;

	memset(f, 0, sizeof(*f));
	if (!d)
		return -1;
	while (rc < 0 && (de = readdir(d))) {
		if (rings_pid(de->d_name) != pid)
			continue;
		snprintf(f->path, sizeof(f->path), "%s/%s", dir, de->d_name);
		if (tp_rf_open_view(f->path, &v, why, sizeof(why)) < 0)
			continue;
		if (v.h->gen && !strcmp(v.h->tmp_name, tmp_name)) {
			f->tmp_len = v.h->tmp_len[v.h->gen & 1];
			rc = 0;
		}
		tp_rf_close_view(&v);
	}
	closedir(d);
	if (rc < 0)
		f->path[0] = '\0';
	return rc;
}

/* libtprof.so beside this binary, or in ../lib (an installed prefix). */
static void *open_lib(char *why, size_t whylen)
{
	static const char *const rel[] = { "libtprof.so", "../lib/libtprof.so" };
	char self[4096], path[4200], *dir;
	ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 1);
	void *h = NULL;
	unsigned i;

	if (n <= 0) {
		snprintf(why, whylen, "cannot find this binary's directory");
		return NULL;
	}
	self[n] = '\0';
	dir = dirname(self);
	setenv("TPROF_DISABLE", "1", 1);
	for (i = 0; i < sizeof(rel) / sizeof(rel[0]) && !h; i++) {
		snprintf(path, sizeof(path), "%s/%s", dir, rel[i]);
		if (access(path, R_OK) == 0)
			h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
	}
	if (!h)
		snprintf(why, whylen, "no libtprof.so beside %s or in "
			 "../lib (%s)", self, dlerror() ? dlerror() : "absent");
	return h;
}

static int to_gz(const char *s, size_t len, void *arg)
{
	return tp_gz_write(arg, s, len);
}

int tp_rings_append(const char *path, struct tp_gz *g, struct tp_rf_counts *c,
		    char *why, size_t whylen)
{
	tp_rf_decode_fn decode;
	void *h = open_lib(why, whylen);
	int rc;

	memset(c, 0, sizeof(*c));
	if (!h)
		return -1;
	decode = (tp_rf_decode_fn)dlsym(h, TP_RF_DECODE_SYM);
	if (!decode) {
		snprintf(why, whylen, "libtprof.so has no %s (an older "
			 "build)", TP_RF_DECODE_SYM);
		return -1;
	}
	/* The library stays loaded: its names and tables are small. */
	rc = decode(path, to_gz, g, c, why, whylen);
	return rc;
}

static int gone(int pid)
{
	return pid > 0 && kill(pid, 0) < 0 && errno == ESRCH;
}

int tp_rings_remove_orphans(const char *dir)
{
	char path[4200], tmp[4800];
	struct tp_rf_view v;
	struct dirent *de;
	char why[256];
	int n = 0, pid, has_tmp;
	DIR *d = opendir(dir);

	if (!d)
		return 0;
	while ((de = readdir(d))) {
		pid = rings_pid(de->d_name);
		if (pid < 0 || !gone(pid))
			continue;
		snprintf(path, sizeof(path), "%s/%s", dir, de->d_name);
		has_tmp = 0;
		if (tp_rf_open_view(path, &v, why, sizeof(why)) == 0) {
			snprintf(tmp, sizeof(tmp), "%s/%s", dir,
				 v.h->tmp_name);
			has_tmp = v.h->tmp_name[0] && access(tmp, F_OK) == 0;
			tp_rf_close_view(&v);
		}
		if (has_tmp)
			continue;
		if (unlink(path) == 0) {
			fprintf(stderr, "tprof: %s: removed (process %d is "
				"gone and left no trace to recover)\n", path,
				pid);
			n++;
		}
	}
	closedir(d);
	return n;
}
