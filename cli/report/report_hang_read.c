/* tprof report's hang section: finds and parses the hang dumps (schema
 * "tprof.hang") among the report's inputs. */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <string.h>
#include <sys/stat.h>

#include "report_hang_int.h"
#include "report_input.h"

#define MAX_DUMPS 65536
#define SUFFIX ".hang.json"

static int ends_with(const char *s, const char *suf)
{
	size_t a = strlen(s), b = strlen(suf);

	return a >= b && !strcmp(s + a - b, suf);
}

static int read_file(const char *path, char **text, size_t *len)
{
	FILE *f = fopen(path, "re");
	struct tp_buf b = { 0 };
	size_t n;

	if (!f)
		return -1;
	do {
		if (tp_buf_reserve(&b, 1 << 16))
			break;
		n = fread(b.p + b.len, 1, 1 << 16, f);
		b.len += n;
	} while (n);
	fclose(f);
	if (b.oom) {
		tp_buf_free(&b);
		errno = ENOMEM;
		return -1;
	}
	*text = b.p;
	*len = b.len;
	return 0;
}

static int is_false(const struct tp_json_node *n)
{
	return n && n->type == TP_JSON_FALSE;
}

/* A stop from outside (the job was ended while it hung), not an end of
 * the process's own. */
static int stopped(const char *reason)
{
	static const char *const live[] = { "hang", "peer", "signal",
					    "SIGTERM", "SIGINT", "SIGHUP" };
	size_t i;

	for (i = 0; i < sizeof(live) / sizeof(*live); i++)
		if (!strcmp(reason, live[i]))
			return 1;
	return 0;
}

static void drop(struct dump *d)
{
	free(d->path);
	free(d->text);
	tp_json_arena_free(&d->a);
	memset(d, 0, sizeof(*d));
}

static int add_dump(struct hangs *h, const char *path)
{
	struct tp_json_node *root;
	struct dump *d;
	size_t len;

	if (h->n == h->cap) {
		size_t cap = h->cap ? 2 * h->cap : 16;
		struct dump *v = cap > MAX_DUMPS ? NULL :
				 realloc(h->d, cap * sizeof(*v));

		if (!v)
			return rp_fail(path, "out of memory");
		h->d = v;
		h->cap = cap;
	}
	d = &h->d[h->n];
	memset(d, 0, sizeof(*d));
	if (read_file(path, &d->text, &len) < 0)
		return rp_fail(path, "cannot read: %s", strerror(errno));
	if (tp_json_parse_mem(d->text, len, &d->a, &root, NULL) < 0 ||
	    !root || root->type != TP_JSON_OBJECT ||
	    !str(root, "schema") || strcmp(str(root, "schema"), "tprof.hang")) {
		free(d->text);
		tp_json_arena_free(&d->a);
		return rp_fail(path, "not a tprof hang dump (schema "
			       "\"tprof.hang\")");
	}
	d->root = root;
	d->path = strdup(path);
	d->rank = num(root, "rank", -1);
	d->time = num(root, "time_unix_ns", 0);
	d->reason = str(root, "reason") ? str(root, "reason") : "?";
	d->ended = is_false(tp_json_get(root, "alive")) && !stopped(d->reason);
	h->n++;
	return 0;
}

/* One dump per rank: a rank's process writes one file, rewritten at
 * each dump, and its last one wins over an older process's (a rank
 * started again). */
static void one_per_rank(struct hangs *h)
{
	size_t i, j, k = 0;

	for (i = 0; i < h->n; i++) {
		for (j = 0; j < k && h->d[j].rank != h->d[i].rank; j++)
			;
		if (j == k) {
			h->d[k++] = h->d[i];
			continue;
		}
		if (h->d[i].time > h->d[j].time) {
			struct dump t = h->d[j];

			h->d[j] = h->d[i];
			h->d[i] = t;
		}
		drop(&h->d[i]);
	}
	h->n = k;
}

static int scan_dir(struct hangs *h, const char *dir)
{
	struct dirent *e;
	char path[8192];
	DIR *dp = opendir(dir);
	int ret = 0;

	if (!dp)
		return 0;
	while (!ret && (e = readdir(dp))) {
		if (e->d_name[0] == '.' || !ends_with(e->d_name, SUFFIX))
			continue;
		snprintf(path, sizeof(path), "%s/%s", dir, e->d_name);
		ret = add_dump(h, path);
	}
	closedir(dp);
	return ret;
}

/* Whether the rest of the report has anything to read in dir: a trace or
 * summary (*.json, *.json.gz) or a summaries/ directory. A job that hangs
 * has only its traces' .tmp files there. */
static int has_inputs(const char *dir)
{
	DIR *dp = opendir(dir);
	struct dirent *e;
	int any = 0;

	if (!dp)
		return 1;	/* the report says why */
	while (!any && (e = readdir(dp)))
		any = e->d_name[0] != '.' &&
		      (!strcmp(e->d_name, "summaries") ||
		       ends_with(e->d_name, ".json") ||
		       ends_with(e->d_name, ".json.gz"));
	closedir(dp);
	return any;
}

/* Hang dumps out of the inputs; directories stay for the rest when they
 * hold anything else to report on. */
int rp_hang_collect(struct hangs *h, char **files, size_t *nfiles)
{
	char sub[8192];
	struct stat st;
	size_t i, k = 0, before;

	for (i = 0; i < *nfiles; i++) {
		if (ends_with(files[i], SUFFIX)) {
			if (add_dump(h, files[i]))
				return -1;
			continue;
		}
		if (stat(files[i], &st) || !S_ISDIR(st.st_mode)) {
			files[k++] = files[i];
			continue;
		}
		before = h->n;
		snprintf(sub, sizeof(sub), "%s/hangs", files[i]);
		if (scan_dir(h, sub) || scan_dir(h, files[i]))
			return -1;
		if (h->n == before || has_inputs(files[i]))
			files[k++] = files[i];
	}
	*nfiles = k;
	one_per_rank(h);
	return 0;
}

void rp_hang_free(struct hangs *h)
{
	size_t i;

	for (i = 0; i < h->n; i++)
		drop(&h->d[i]);
	free(h->d);
	memset(h, 0, sizeof(*h));
}
