/* tprof report: the findings engine. Computes each rank's figures per
 * step (metrics.c), runs every rule (rule_*.c), orders what they found,
 * most costly per step first, puts the caveat of an incomplete trace on
 * each finding it touches, and indexes the findings by rank for the
 * per-rank table.
 */
#define _GNU_SOURCE	/* vasprintf, qsort_r */
#include "findings_int.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *const kind_names[RP_F_NKINDS] = {
	[RP_F_SLOW_GPU] = "slow_gpu",
	[RP_F_HOST_BOUND] = "host_bound",
	[RP_F_SLOW_OTHER] = "slow_other",
	[RP_F_COLL_WAIT] = "collective_wait",
	[RP_F_EXPOSED_COMM] = "exposed_communication",
	[RP_F_SYNC] = "sync_in_steps",
	[RP_F_PAGEABLE] = "pageable_copies",
	[RP_F_LAUNCH] = "launch_bound",
	[RP_F_MEMORY] = "memory_near_capacity",
	[RP_F_HOST_IDLE] = "host_while_idle",
	[RP_F_INCOMPLETE] = "incomplete_trace",
	[RP_F_GPU_THROTTLED] = "gpu_throttled",
	[RP_F_GPU_HEALTHY] = "gpu_healthy",
};

static const char *const kind_labels[RP_F_NKINDS] = {
	[RP_F_SLOW_GPU] = "slower kernels",
	[RP_F_HOST_BOUND] = "host-bound",
	[RP_F_SLOW_OTHER] = "slower",
	[RP_F_COLL_WAIT] = "waits in collectives",
	[RP_F_EXPOSED_COMM] = "exposed communication",
	[RP_F_SYNC] = "syncs in steps",
	[RP_F_PAGEABLE] = "pageable copies",
	[RP_F_LAUNCH] = "launch-bound",
	[RP_F_MEMORY] = "memory near capacity",
	[RP_F_HOST_IDLE] = "host while GPU idle",
	[RP_F_INCOMPLETE] = "incomplete trace",
	[RP_F_GPU_THROTTLED] = "GPU throttled",
	[RP_F_GPU_HEALTHY] = "GPU healthy",
};

const char *rp_fkind_name(enum rp_fkind k)
{
	return k < RP_F_NKINDS ? kind_names[k] : "unknown";
}

const char *rp_fkind_label(enum rp_fkind k)
{
	return k < RP_F_NKINDS ? kind_labels[k] : "?";
}

/* Most costly first; findings without a time cost after, by kind; then
 * by kind and first rank, so the order is total. */
static int finding_cmp(const void *a, const void *b)
{
	const struct rp_finding *x = a, *y = b;

	if ((x->cost < 0) != (y->cost < 0))
		return x->cost < 0 ? 1 : -1;
	if (x->cost != y->cost)
		return x->cost > y->cost ? -1 : 1;
	if (x->kind != y->kind)
		return x->kind < y->kind ? -1 : 1;
	if (x->nranks && y->nranks && x->ranks[0] != y->ranks[0])
		return x->ranks[0] < y->ranks[0] ? -1 : 1;
	return 0;
}

static int is_cause(enum rp_fkind k)
{
	return k == RP_F_SLOW_GPU || k == RP_F_HOST_BOUND ||
	       k == RP_F_SLOW_OTHER;
}

/* The waiting in collectives is the slow ranks' doing, and costs as much
 * as they lose: it comes after their findings, which say why. */
static void causes_first(struct rp_findings *fs)
{
	struct rp_finding w;
	size_t i, k, last = 0;
	int any = 0;

	for (i = 0; i < fs->n; i++)
		if (is_cause(fs->v[i].kind)) {
			last = i;
			any = 1;
		}
	for (i = 0; any && i < last; i++) {
		if (fs->v[i].kind != RP_F_COLL_WAIT)
			continue;
		w = fs->v[i];
		for (k = i; k < last; k++)
			fs->v[k] = fs->v[k + 1];
		fs->v[last] = w;
		break;
	}
}

/* Each rank's findings, by id, for its row in the per-rank table. */
static int index_ranks(struct rp_report *rep)
{
	const struct rp_finding *f;
	struct rp_rankm *m;
	size_t i, k, *v;

	for (i = 0; i < rep->fs->n; i++) {
		f = &rep->fs->v[i];
		for (k = 0; k < f->nranks; k++) {
			m = &rep->m[f->ranks[k]];
			v = realloc(m->findings, (m->nfindings + 1) *
				    sizeof(*v));
			if (!v)
				return -1;
			m->findings = v;
			m->findings[m->nfindings++] = f->id;
		}
	}
	return 0;
}

int rp_findings_run(struct rp_report *rep)
{
	struct rp_findings *fs = calloc(1, sizeof(*fs));
	size_t i;

	rep->fs = fs;
	if (!fs || rp_f_metrics(rep))
		return -1;
	if (rp_rule_slow(rep, fs))
		return -1;
	rp_rule_health(rep, fs);
	rp_rule_exposed_comm(rep, fs);
	rp_rule_sync(rep, fs);
	rp_rule_pageable(rep, fs);
	rp_rule_launch(rep, fs);
	rp_rule_memory(rep, fs);
	rp_rule_host_idle(rep, fs);
	rp_rule_incomplete(rep, fs);
	if (fs->oom)
		return -1;
	if (fs->n)
		qsort(fs->v, fs->n, sizeof(*fs->v), finding_cmp);
	causes_first(fs);
	for (i = 0; i < fs->n; i++)
		fs->v[i].id = i + 1;
	rp_caveats(rep, fs);
	return fs->oom || index_ranks(rep) ? -1 : 0;
}

void rp_findings_free(struct rp_report *rep)
{
	struct rp_finding *f;
	size_t i;

	for (i = 0; rep->m && i < rep->nranks; i++)
		free(rep->m[i].findings);
	free(rep->m);
	free(rep->order);
	rep->m = NULL;
	rep->order = NULL;
	if (!rep->fs)
		return;
	for (i = 0; i < rep->fs->n; i++) {
		f = &rep->fs->v[i];
		free(f->ranks);
		free(f->waited);
		free(f->title);
		free(f->where);
		free(f->evidence);
		free(f->try_);
		free(f->caveat);
		free(f->names);
	}
	free(rep->fs->v);
	free(rep->fs);
	rep->fs = NULL;
}
