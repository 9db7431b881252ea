/* tprof report: the entries of a report, one per process, sorted by
 * rank and labelled (report_ranks.h). Calls only the report's data. */
#include "report_ranks.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* A file of a further process of a rank (a forked child, an exec'd
 * image): tprof names it <name>-rank<R>-pid<P>... */
static int is_pid_file(const char *path)
{
	const char *base = strrchr(path, '/'), *p;

	base = base ? base + 1 : path;
	for (p = strstr(base, "-pid"); p; p = strstr(p + 1, "-pid"))
		if (p[4] >= '0' && p[4] <= '9')
			return 1;
	return 0;
}

/* By rank (unknown last), the rank's own file (the process the launcher
 * started) before its -pid files, then by file. */
static int rank_cmp(const void *a, const void *b)
{
	const struct rp_rank *x = *(struct rp_rank *const *)a;
	const struct rp_rank *y = *(struct rp_rank *const *)b;
	int px, py;

	if (x->rank != y->rank) {
		if (x->rank == RP_NONE || y->rank == RP_NONE)
			return x->rank == RP_NONE ? 1 : -1;
		return x->rank < y->rank ? -1 : 1;
	}
	px = is_pid_file(x->path);
	py = is_pid_file(y->path);
	if (px != py)
		return px - py;
	return strcmp(x->path, y->path);
}

/* Several inputs of one process (the flight recorder's dumps: at a hang,
 * then at the SIGTERM that stopped the job) are one rank: the entry kept
 * is the one that covers the most (a summary written at the end covers
 * the whole run, else the longest window). One process: the same host,
 * pid and time base (a pid used again later has another base). */
static int same_process(const struct rp_rank *a, const struct rp_rank *b)
{
	return a->rank == b->rank && a->pid == b->pid && a->pid != RP_NONE &&
	       a->pid > 0 && a->base_ns == b->base_ns &&
	       a->base_ns != RP_NONE && a->host && b->host &&
	       !strcmp(a->host, b->host);
}

static int covers_more(const struct rp_rank *a, const struct rp_rank *b)
{
	int sa = !strcmp(a->kind, "summary"), sb = !strcmp(b->kind, "summary");

	return sa != sb ? sa > sb : a->wall_ns > b->wall_ns;
}

static void merge_processes(struct rp_report *rep)
{
	struct rp_rank **v = rep->ranks, *t;
	size_t i, j, k = 0;

	for (i = 0; i < rep->nranks; i++) {
		for (j = 0; j < k && !same_process(v[j], v[i]); j++)
			;
		if (j == k) {
			v[k++] = v[i];
			continue;
		}
		if (covers_more(v[i], v[j])) {
			t = v[j];
			v[j] = v[i];
			v[i] = t;
		}
		rp_rank_free(v[i]);
	}
	rep->nranks = k;
}

/* Labels "R", and "R#2", "R#3" for further inputs of one rank, which are
 * kept as entries of their own. */
void rp_label_ranks(struct rp_report *rep)
{
	struct rp_rank *r, *first = NULL;
	size_t i, dup = 1;
	char rs[24];

	merge_processes(rep);
	/* No trace, only hang dumps: ranks is NULL (qsort of NULL is
	 * undefined even for none: UBSan). */
	if (rep->nranks)
		qsort(rep->ranks, rep->nranks, sizeof(*rep->ranks), rank_cmp);
	for (i = 0; i < rep->nranks; i++) {
		r = rep->ranks[i];
		r->entry = i;
		rp_rank_str(rs, sizeof(rs), r->rank);
		if (r->rank == RP_NONE)
			strcpy(rs, "?");
		if (!first || first->rank != r->rank) {
			first = r;
			dup = 1;
			snprintf(r->label, sizeof(r->label), "%s", rs);
			continue;
		}
		snprintf(r->label, sizeof(r->label), "%s#%zu", rs, ++dup);
		if (r->rank != RP_NONE)
			fprintf(stderr, "tprof: warning: %s and %s are both "
				"rank %s; reported as separate entries (%s "
				"and %s)\n", first->path, r->path, rs,
				first->label, r->label);
	}
}

