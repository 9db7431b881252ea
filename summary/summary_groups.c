/* summary/: the summary aggregator: per-name statistics, histograms, steps,
 * groups, memory, and its JSON/markdown output; on util/ .. session/ and
 * stacks/. */
/* GEMMs by shape and type, NCCL collectives by operation and size, and
 * the GPU time of the kernels they launched.
 *
 * A library call's launches are the runtime (or driver) calls with a
 * correlation id on the same thread inside its time span. tprof writes a
 * call after the calls nested in it (they end first), torch.profiler
 * before them: so each thread keeps its last few unclaimed launches for a
 * call that comes later, and its last call for launches that come later.
 * A kernel then finds its group through a table indexed by the low bits
 * of its correlation id (ids are sequential: it holds the latest 65536).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "summary_int.h"

#define CORR_SLOTS (1u << SUM_CORR_BITS)

struct track_key {
	int64_t pid, tid;
};

static int track_eq(const void *item, const void *key)
{
	const struct sum_track *t = item;
	const struct track_key *k = key;

	return t->pid == k->pid && t->tid == k->tid;
}

static struct sum_track *track_get(struct tp_sum *s, int64_t pid,
				   int64_t tid)
{
	struct track_key k = { pid, tid };
	uint64_t h = ((uint64_t)pid * 0x9e3779b97f4a7c15ull) ^
		     ((uint64_t)tid * 0xff51afd7ed558ccdull);
	struct sum_track *t = s->track_last;

	/* a thread's calls come in runs: no hashing for the next one */
	if (t && t->pid == pid && t->tid == tid)
		return t;
	h = h ? h : 1;
	t = tp_sum_tab_find(&s->tracks, h, track_eq, &k);
	if (t)
		return s->track_last = t;
	t = calloc(1, sizeof(*t));
	if (!t)
		return NULL;
	t->hash = h;
	t->pid = pid;
	t->tid = tid;
	if (tp_sum_tab_add(&s->tracks, t) < 0) {
		free(t);
		return NULL;
	}
	return s->track_last = t;
}

static void corr_set(struct tp_sum *s, uint64_t corr, uint32_t g)
{
	if (!s->corr)
		s->corr = calloc(CORR_SLOTS, sizeof(*s->corr));
	if (!s->corr)
		return;
	s->corr[corr & (CORR_SLOTS - 1)] = (struct sum_corr){ corr, g };
}

static struct sum_group *corr_group(struct tp_sum *s, uint64_t corr)
{
	struct sum_corr *c;

	if (!s->corr)
		return NULL;
	c = &s->corr[corr & (CORR_SLOTS - 1)];
	if (c->corr != corr || !c->g)
		return NULL;
	return tp_sum_tab_get(&s->groups, c->g - 1);
}

static void launch(struct tp_sum *s, const struct tp_sum_span *e)
{
	struct sum_track *t = track_get(s, e->pid, e->tid);

	if (!t)
		return;
	if (t->last_g && e->ts_ns >= t->last_s && e->ts_ns <= t->last_e) {
		corr_set(s, e->corr, t->last_g);
		return;
	}
	t->recent[t->next].corr = e->corr;
	t->recent[t->next].ts = e->ts_ns;
	t->next = (t->next + 1) % SUM_RECENT;
}

static void claim(struct tp_sum *s, const struct tp_sum_span *e, uint64_t d,
		  uint32_t g)
{
	struct sum_track *t = track_get(s, e->pid, e->tid);
	int64_t end = e->ts_ns + (int64_t)d;
	unsigned i;

	if (!t)
		return;
	for (i = 0; i < SUM_RECENT; i++) {
		if (!t->recent[i].corr || t->recent[i].ts < e->ts_ns ||
		    t->recent[i].ts > end)
			continue;
		corr_set(s, t->recent[i].corr, g);
		t->recent[i].corr = 0;
	}
	t->last_s = e->ts_ns;
	t->last_e = end;
	t->last_g = g;
}

static int group_eq(const void *item, const void *key)
{
	return !strcmp(((const struct sum_group *)item)->key, key);
}

/* The group named by key, made from proto when new; its index + 1. */
static uint32_t group_get(struct tp_sum *s, const char *key,
			  const struct sum_group *proto)
{
	uint64_t h = tp_sum_hash("group", key);
	struct sum_group *g = tp_sum_tab_find(&s->groups, h, group_eq, key);

	if (!g) {
		g = malloc(sizeof(*g));
		if (!g)
			return 0;
		*g = *proto;
		g->hash = h;
		g->key = strdup(key);
		g->name = strdup(proto->name);
		g->dtype = proto->dtype ? strdup(proto->dtype) : NULL;
		if (!g->key || !g->name || tp_sum_tab_add(&s->groups, g) < 0) {
			free(g->key);
			free(g->name);
			free(g->dtype);
			free(g);
			return 0;
		}
		g->idx = (uint32_t)s->groups.n;
	}
	return g->idx;
}

enum { G_M, G_N, G_K, G_BATCH, G_DTYPE, G_CTYPE, G_FLOPS, G_NESTED, G_NG };

/* The call's group, and its FLOPs in *flops. */
static uint32_t gemm(struct tp_sum *s, const struct tp_sum_span *e,
		     unsigned __int128 *flops)
{
	struct sum_arg a[G_NG] = {
		[G_M] = { "m", NULL, 0, NULL },
		[G_N] = { "n", NULL, 0, NULL },
		[G_K] = { "k", NULL, 0, NULL },
		[G_BATCH] = { "batch", NULL, 0, NULL },
		[G_DTYPE] = { "d type", NULL, 0, NULL },
		[G_CTYPE] = { "c type", NULL, 0, NULL },
		[G_FLOPS] = { "flops", NULL, 0, NULL },
		[G_NESTED] = { "nested", NULL, 0, NULL },
	};
	struct sum_group g = { .kind = SUM_GEMM, .name = (char *)e->name };
	char dtype[64], key[512];

	tp_sum_span_args(e, a, G_NG);
	if (tp_sum_arg_has(&a[G_NESTED]) ||
	    tp_sum_arg_u128(&a[G_FLOPS], &g.flops) < 0 ||
	    tp_sum_arg_i64(&a[G_M], &g.m) < 0 ||
	    tp_sum_arg_i64(&a[G_N], &g.n) < 0 ||
	    tp_sum_arg_i64(&a[G_K], &g.k) < 0)
		return 0;
	if (tp_sum_arg_i64(&a[G_BATCH], &g.batch) < 0)
		g.batch = 1;
	g.dtype = (char *)tp_sum_arg_str(&a[G_DTYPE], dtype, sizeof(dtype));
	if (!g.dtype)
		g.dtype = (char *)tp_sum_arg_str(&a[G_CTYPE], dtype,
						 sizeof(dtype));
	snprintf(key, sizeof(key), "%s|%lld|%lld|%lld|%lld|%s", e->name,
		 (long long)g.m, (long long)g.n, (long long)g.k,
		 (long long)g.batch, g.dtype ? g.dtype : "");
	*flops = g.flops;
	g.flops = 0;
	return group_get(s, key, &g);
}

enum { C_BYTES, C_IN, C_OUT, C_DTYPE, C_SIZE, C_NC };

static uint32_t collective(struct tp_sum *s, const struct tp_sum_span *e)
{
	struct sum_arg a[C_NC] = {
		[C_BYTES] = { "bytes", NULL, 0, NULL },
		[C_IN] = { "in bytes", NULL, 0, NULL },
		[C_OUT] = { "out bytes", NULL, 0, NULL },
		[C_DTYPE] = { "dtype", NULL, 0, NULL },
		[C_SIZE] = { "size", NULL, 0, NULL },
	};
	struct sum_group g = { .kind = SUM_NCCL, .name = (char *)e->name };
	const struct sum_arg *by = &a[C_BYTES];
	char dtype[64], key[512];
	int64_t v;

	tp_sum_span_args(e, a, C_NC);
	/* nccl-tests counts the whole buffer of these two. */
	if (!strcmp(e->name, "ncclAllGather") && tp_sum_arg_has(&a[C_OUT]))
		by = &a[C_OUT];
	else if (!strcmp(e->name, "ncclReduceScatter") &&
		 tp_sum_arg_has(&a[C_IN]))
		by = &a[C_IN];
	if (tp_sum_arg_i64(by, &v) < 0 || v < 0)
		return 0;
	g.bytes = (uint64_t)v;
	if (tp_sum_arg_i64(&a[C_SIZE], &g.nranks) < 0)
		g.nranks = 0;
	g.dtype = (char *)tp_sum_arg_str(&a[C_DTYPE], dtype, sizeof(dtype));
	snprintf(key, sizeof(key), "%s|%llu|%s|%lld", e->name,
		 (unsigned long long)g.bytes, g.dtype ? g.dtype : "",
		 (long long)g.nranks);
	return group_get(s, key, &g);
}

void tp_sum_groups_span(struct tp_sum *s, const struct tp_sum_span *e,
			enum tp_sum_cat k, uint64_t d)
{
	struct sum_group *grp;
	unsigned __int128 flops = 0;
	uint32_t g = 0;

	if (k == TP_SUM_CAT_KERNEL) {
		grp = e->corr ? corr_group(s, e->corr) : NULL;
		if (grp) {
			grp->kernels++;
			grp->gpu_ns += d;
		}
		return;
	}
	if (tp_sum_is_call(e->corr, k)) {
		launch(s, e);
		return;
	}
	if (k == TP_SUM_CAT_CUBLAS)
		g = gemm(s, e, &flops);
	else if (k == TP_SUM_CAT_NCCL)
		g = collective(s, e);
	if (!g)
		return;
	grp = tp_sum_tab_get(&s->groups, g - 1);
	grp->calls++;
	grp->cpu_ns += d;
	grp->flops += flops;
	claim(s, e, d, g);
}
