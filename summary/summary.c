/* summary/: the summary aggregator: per-name statistics, histograms, steps,
 * groups, memory, and its JSON/markdown output; on util/ .. session/ and
 * stacks/. */
/* Folding events into the summary's tables; see summary.h. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gpu.h"
#include "health.h"
#include "host.h"
#include "summary_int.h"

#define STEP_PREFIX "ProfilerStep#"

struct tp_sum *tp_sum_new(void)
{
	struct tp_sum *s = calloc(1, sizeof(*s));

	if (!s)
		return NULL;
	s->start = INT64_MAX;
	s->end = INT64_MIN;
	s->info.rank = -1;
	/* without it the summary only lacks its "gpu" member */
	s->gpu = tp_gpu_new(TP_GPU_WINDOW);
	s->host = tp_host_new();
	if (s->gpu)
		tp_gpu_set_host(s->gpu, s->host);
	return s;
}

int tp_sum_gpu_window(struct tp_sum *s, size_t window)
{
	struct tp_gpu *g = tp_gpu_new(window);

	if (!g)
		return -1;
	tp_gpu_free(s->gpu);
	s->gpu = g;
	tp_gpu_set_host(g, s->host);
	return 0;
}

int tp_sum_gpu_exact(struct tp_sum *s, size_t budget)
{
	struct tp_gpu *g = tp_gpu_new_exact(budget);

	if (!g)
		return -1;
	tp_gpu_free(s->gpu);
	s->gpu = g;
	tp_gpu_set_host(g, s->host);
	return 0;
}

const char *tp_sum_gpu_error(const struct tp_sum *s)
{
	return s->gpu ? tp_gpu_error(s->gpu) : NULL;
}

static void row_free(void *p)
{
	struct sum_row *r = p;

	tp_hist_free(&r->hist);
	free(r->cat);
	free(r->name);
	free(r);
}

static void range_free(void *p)
{
	struct sum_range *r = p;

	free(r->name);
	free(r->domain);
	free(r);
}

static void group_free(void *p)
{
	struct sum_group *g = p;

	free(g->key);
	free(g->name);
	free(g->dtype);
	free(g);
}

static void info_free(struct tp_sum_info *i)
{
	free((char *)i->name);
	free((char *)i->host);
	free((char *)i->trace);
	free((char *)i->source);
}

void tp_sum_free(struct tp_sum *s)
{
	unsigned i;

	if (!s)
		return;
	tp_sum_tab_free(&s->rows, row_free);
	tp_sum_tab_free(&s->ranges, range_free);
	tp_sum_tab_free(&s->groups, group_free);
	tp_sum_tab_free(&s->tracks, free);
	for (i = 0; i < s->n_mem; i++)
		free(s->mem[i]);
	tp_health_free(s->health);
	free(s->corr);
	free(s->steps);
	tp_gpu_free(s->gpu);
	tp_host_free(s->host);
	info_free(&s->info);
	free(s);
}

static char *dup_or_null(const char *p)
{
	return p ? strdup(p) : NULL;
}

void tp_sum_set_info(struct tp_sum *s, const struct tp_sum_info *info)
{
	info_free(&s->info);
	s->info = *info;
	s->info.name = dup_or_null(info->name);
	s->info.host = dup_or_null(info->host);
	s->info.trace = dup_or_null(info->trace);
	s->info.source = dup_or_null(info->source);
}

void tp_sum_count_events(struct tp_sum *s, uint64_t n)
{
	s->events += n;
}

struct row_key {
	const char *cat, *name;
};

static int row_eq(const void *item, const void *key)
{
	const struct sum_row *r = item;
	const struct row_key *k = key;

	return !strcmp(r->name, k->name) && !strcmp(r->cat, k->cat);
}

static struct sum_row *row_get(struct tp_sum *s, const char *cat,
			       const char *name)
{
	struct row_key k = { cat, name };
	uint64_t h = tp_sum_hash(cat, name);
	struct sum_row *r = tp_sum_tab_find(&s->rows, h, row_eq, &k);

	if (r)
		return r;
	r = calloc(1, sizeof(*r));
	if (!r)
		return NULL;
	r->hash = h;
	r->cat = strdup(cat);
	r->name = strdup(name);
	r->min = UINT64_MAX;
	if (!r->cat || !r->name || tp_sum_tab_add(&s->rows, r) < 0) {
		row_free(r);
		return NULL;
	}
	return r;
}

/* One call of d ns: row_add's arithmetic with n = 1 folded (x * 1.0 is
 * x exactly, so the doubles are the same bits), and the histogram's
 * group already there in the common case. */
static void row_add1(struct sum_row *r, uint64_t d)
{
	unsigned b = tp_hist_bucket(d);
	uint64_t *grp = r->hist.group[b / TP_HIST_SUB];
	/* d is below 2^63 (a positive int64_t): its signed conversion is
	 * the same double, in fewer instructions. */
	double delta = (double)(int64_t)d - r->mean;
	uint64_t count = r->count + 1;

	if (__builtin_expect(!grp, 0)) {
		if (tp_hist_add(&r->hist, d, 1) < 0)
			return;
	} else {
		grp[b % TP_HIST_SUB]++;
		r->hist.count++;
	}
	r->mean += delta / (double)count;
	r->m2 += delta * delta * (double)r->count / (double)count;
	r->count = count;
	r->total += d;
	if (d < r->min)
		r->min = d;
	if (d > r->max)
		r->max = d;
}

/* n calls of d ns each (Welford's update, n at once). */
static void row_add(struct sum_row *r, uint64_t d, uint64_t n, int dropped)
{
	double delta = (double)d - r->mean;
	uint64_t count = r->count + n;

	if (!n || tp_hist_add(&r->hist, d, n) < 0)
		return;
	r->mean += delta * (double)n / (double)count;
	r->m2 += delta * delta * (double)r->count * (double)n / (double)count;
	r->count = count;
	r->dropped += dropped ? n : 0;
	r->total += d * n;
	if (d < r->min)
		r->min = d;
	if (d > r->max)
		r->max = d;
}

void tp_sum_dropped(struct tp_sum *s, const char *cat, const char *name,
		    int64_t dur_ns, uint64_t n)
{
	struct sum_row *r = row_get(s, cat, name);

	s->dropped += n;
	if (r)
		row_add(r, dur_ns > 0 ? (uint64_t)dur_ns : 0, n, 1);
}

void tp_sum_dropped_other(struct tp_sum *s, uint64_t n)
{
	s->dropped += n;
}

static int is_step(const struct tp_sum_span *e, enum tp_sum_cat k)
{
	return k == TP_SUM_CAT_USER_ANNOTATION &&
	       !strncmp(e->name, STEP_PREFIX, sizeof(STEP_PREFIX) - 1);
}

enum tp_sum_cat tp_sum_cat_of(const char *c)
{
	switch (c[0]) {
	case 'k':
		return strcmp(c, "kernel") ? TP_SUM_CAT_OTHER :
					     TP_SUM_CAT_KERNEL;
	case 'g':
		if (!strcmp(c, "gpu_memcpy"))
			return TP_SUM_CAT_MEMCPY;
		if (!strcmp(c, "gpu_memset"))
			return TP_SUM_CAT_MEMSET;
		return strcmp(c, "gpu_user_annotation") ?
		       TP_SUM_CAT_OTHER : TP_SUM_CAT_GPU_USER_ANNOTATION;
	case 'c':
		if (!strcmp(c, "cuda_runtime"))
			return TP_SUM_CAT_RUNTIME;
		if (!strcmp(c, "cuda_driver"))
			return TP_SUM_CAT_DRIVER;
		return strcmp(c, "cublas") ? TP_SUM_CAT_OTHER :
					     TP_SUM_CAT_CUBLAS;
	case 'u':
		return strcmp(c, "user_annotation") ?
		       TP_SUM_CAT_OTHER : TP_SUM_CAT_USER_ANNOTATION;
	case 'n':
		return strcmp(c, "nccl") ? TP_SUM_CAT_OTHER : TP_SUM_CAT_NCCL;
	case 'o':
		return strcmp(c, "osrt") ? TP_SUM_CAT_OTHER : TP_SUM_CAT_OSRT;
	}
	return TP_SUM_CAT_OTHER;
}

/* A static name's cache entry (its kind filled in; its row on first
 * use, row_of). */
static struct sum_name_cache *name_cached(struct tp_sum *s,
					  const struct tp_sum_span *e)
{
	unsigned i = (unsigned)((uintptr_t)e->name >> 3) % SUM_ROW_CACHE;
	struct sum_name_cache *c = &s->cache[i];

	if (c->name != e->name || c->cat != e->cat) {
		c->cat = e->cat;
		c->name = e->name;
		c->kind = tp_sum_cat_of(e->cat);
		c->row = NULL;
		c->row_known = 0;
	}
	return c;
}

static struct sum_row *row_of(struct tp_sum *s, const struct tp_sum_span *e,
			      struct sum_name_cache *c)
{
	if (!c)
		return row_get(s, e->cat, e->name);
	if (!c->row_known) {
		c->row = row_get(s, e->cat, e->name);
		c->row_known = 1;
	}
	return c->row;
}

/* Whether tp_sum_groups_span has anything to do with the event: the
 * same tests it starts with, so most calls are not made at all. */
static int groups_want(const struct tp_sum_span *e, enum tp_sum_cat k)
{
	return k == TP_SUM_CAT_KERNEL || k == TP_SUM_CAT_CUBLAS ||
	       k == TP_SUM_CAT_NCCL || tp_sum_is_call(e->corr, k);
}

static void step_add(struct tp_sum *s, int64_t step, int64_t ts_ns,
		     int64_t dur_ns, const char *name)
{
	if (s->gpu)
		tp_gpu_step(s->gpu, name, ts_ns, dur_ns);
	if (ts_ns < s->start)
		s->start = ts_ns;
	if (ts_ns + dur_ns > s->end)
		s->end = ts_ns + dur_ns;
	s->steps_seen++;
	if (s->n_steps == SUM_MAX_STEPS)
		return;
	if (s->n_steps == s->cap_steps) {
		size_t cap = s->cap_steps ? s->cap_steps * 2 : 64;
		struct sum_step *v = realloc(s->steps, cap * sizeof(*v));

		if (!v)
			return;
		s->steps = v;
		s->cap_steps = cap;
	}
	s->steps[s->n_steps++] = (struct sum_step){ step, ts_ns, dur_ns };
}

/* A step the library delimited: named as its trace event is. */
void tp_sum_step(struct tp_sum *s, int64_t step, int64_t ts_ns,
		 int64_t dur_ns)
{
	char name[48];

	snprintf(name, sizeof(name), STEP_PREFIX "%lld", (long long)step);
	step_add(s, step, ts_ns, dur_ns, name);
}

static void add_step(struct tp_sum *s, const struct tp_sum_span *e)
{
	struct sum_arg a = { "step", NULL, 0, NULL };
	int64_t n = -1;
	const char *p = e->name + sizeof(STEP_PREFIX) - 1;

	tp_sum_span_args(e, &a, 1);
	if (tp_sum_arg_i64(&a, &n) < 0) {
		char *end;
		long long v = strtoll(p, &end, 10);

		n = end != p && !*end ? v : -1;
	}
	step_add(s, n, e->ts_ns, e->dur_ns, e->name);
}

struct range_key {
	const char *name, *domain;
};

static int range_eq(const void *item, const void *key)
{
	const struct sum_range *r = item;
	const struct range_key *k = key;

	if (strcmp(r->name, k->name))
		return 0;
	if (!r->domain || !k->domain)
		return !r->domain && !k->domain;
	return !strcmp(r->domain, k->domain);
}

static struct sum_range *range_get(struct tp_sum *s, const char *name,
				   const char *domain)
{
	struct range_key k = { name, domain };
	uint64_t h = tp_sum_hash(domain ? domain : "", name);
	struct sum_range *r = tp_sum_tab_find(&s->ranges, h, range_eq, &k);

	if (r)
		return r;
	r = calloc(1, sizeof(*r));
	if (!r)
		return NULL;
	r->hash = h;
	r->name = strdup(name);
	r->domain = dup_or_null(domain);
	r->min = UINT64_MAX;
	r->mem_peak = INT64_MIN;
	if (!r->name || (domain && !r->domain) ||
	    tp_sum_tab_add(&s->ranges, r) < 0) {
		range_free(r);
		return NULL;
	}
	return r;
}

enum { A_DOMAIN, A_ENTRY, A_EXIT, A_PEAK, A_N_RANGE };

static void add_range(struct tp_sum *s, const struct tp_sum_span *e,
		      uint64_t d)
{
	struct sum_arg a[A_N_RANGE] = {
		[A_DOMAIN] = { "domain", NULL, 0, NULL },
		[A_ENTRY] = { "mem_entry", NULL, 0, NULL },
		[A_EXIT] = { "mem_exit", NULL, 0, NULL },
		[A_PEAK] = { "mem_peak", NULL, 0, NULL },
	};
	char domain[256];
	int64_t in, out, peak;
	struct sum_range *r;

	tp_sum_span_args(e, a, A_N_RANGE);
	r = range_get(s, e->name, tp_sum_arg_str(&a[A_DOMAIN], domain,
						 sizeof(domain)));
	if (!r)
		return;
	r->repeats++;
	r->total += d;
	if (d < r->min)
		r->min = d;
	if (d > r->max)
		r->max = d;
	if (tp_sum_arg_i64(&a[A_ENTRY], &in) < 0 ||
	    tp_sum_arg_i64(&a[A_EXIT], &out) < 0)
		return;
	r->mem_n++;
	r->mem_net += (double)out - (double)in;
	if (tp_sum_arg_i64(&a[A_PEAK], &peak) == 0 &&
	    (int64_t)((uint64_t)peak - (uint64_t)in) > r->mem_peak)
		r->mem_peak = (int64_t)((uint64_t)peak - (uint64_t)in);
}

void tp_sum_span(struct tp_sum *s, const struct tp_sum_span *e)
{
	uint64_t d = e->dur_ns > 0 ? (uint64_t)e->dur_ns : 0;
	struct sum_name_cache *c = e->static_names ? name_cached(s, e) : NULL;
	enum tp_sum_cat k = c ? c->kind : tp_sum_cat_of(e->cat);
	struct sum_row *r;

	/* Wrapping: a read trace's times may be anywhere (tprof report of
	 * a corrupt .pftrace; found by fuzz_pftrace). */
	int64_t end = (int64_t)((uint64_t)e->ts_ns + d);

	if (e->ts_ns < s->start)
		s->start = e->ts_ns;
	if (end > s->end)
		s->end = end;
	if (is_step(e, k)) {
		add_step(s, e);
		return;
	}
	if (k == TP_SUM_CAT_OSRT)
		tp_sum_osrt(s, e);
	else if (s->gpu)
		tp_gpu_span(s->gpu, e, k);
	if (k == TP_SUM_CAT_RUNTIME || k == TP_SUM_CAT_DRIVER)
		tp_sum_feeder_fast(s, e->tid);
	r = row_of(s, e, c);
	if (r)
		row_add1(r, d);
	if (k == TP_SUM_CAT_USER_ANNOTATION)
		add_range(s, e, d);
	if (groups_want(e, k))
		tp_sum_groups_span(s, e, k, d);
}

static struct sum_mem *mem_get(struct tp_sum *s, int64_t device)
{
	unsigned i;

	for (i = 0; i < s->n_mem; i++)
		if (s->mem[i]->device == device)
			return s->mem[i];
	if (s->n_mem == SUM_MAX_DEVICES)
		return NULL;
	s->mem[s->n_mem] = calloc(1, sizeof(struct sum_mem));
	if (!s->mem[s->n_mem])
		return NULL;
	s->mem[s->n_mem]->device = device;
	s->mem[s->n_mem]->peak = INT64_MIN;
	return s->mem[s->n_mem++];
}

/* Halves the points: each pair becomes one, keeping the first time and
 * the larger value, so a peak is never averaged away. */
static void mem_halve(struct sum_mem *m)
{
	unsigned i;

	for (i = 0; i < m->n / 2; i++) {
		int64_t a = m->pts[2 * i][1], b = m->pts[2 * i + 1][1];

		m->pts[i][0] = m->pts[2 * i][0];
		m->pts[i][1] = a > b ? a : b;
	}
	m->n /= 2;
	m->level++;
}

void tp_sum_memory(struct tp_sum *s, int64_t device, int64_t ts_ns,
		   int64_t bytes)
{
	struct sum_mem *m = mem_get(s, device);

	if (!m)
		return;
	if (bytes > m->peak)
		m->peak = bytes;
	if (!m->pending_n++) {
		m->pending_ts = ts_ns;
		m->pending_v = bytes;
	} else if (bytes > m->pending_v) {
		m->pending_v = bytes;
	}
	if (m->pending_n < 1u << m->level)
		return;
	if (m->n == SUM_MEM_POINTS)
		mem_halve(m);
	m->pts[m->n][0] = m->pending_ts;
	m->pts[m->n][1] = m->pending_v;
	m->n++;
	m->pending_n = 0;
}

void tp_sum_device_memory(struct tp_sum *s, int64_t device, int64_t bytes)
{
	unsigned i;

	if (bytes <= 0)
		return;
	for (i = 0; i < s->n_capacity; i++)
		if (s->capacity[i].device == device)
			break;
	if (i == SUM_MAX_DEVICES)
		return;
	s->capacity[i].device = device;
	s->capacity[i].bytes = bytes;
	if (i == s->n_capacity)
		s->n_capacity++;
}

/* What a coarser level still holds back, for the writer. */
void tp_sum_memory_flush(struct tp_sum *s)
{
	unsigned i;

	for (i = 0; i < s->n_mem; i++) {
		struct sum_mem *m = s->mem[i];

		if (!m->pending_n)
			continue;
		if (m->n == SUM_MEM_POINTS)
			mem_halve(m);
		m->pts[m->n][0] = m->pending_ts;
		m->pts[m->n][1] = m->pending_v;
		m->n++;
		m->pending_n = 0;
	}
}

struct tp_health **tp_sum_health(struct tp_sum *s)
{
	return &s->health;
}
