/* cupti/: the CUPTI client: GPU activity, API callbacks, devices, GPU
 * tracks; on trace/ .. output/. */
/* CUPTI's clock against the ticks: samples, their window and its line
 * (clockmap.h says why). */
#include <pthread.h>
#include <string.h>

#include "cupti.h"
#include "clockmap.h"

/* A sample is rejected when its bracket is wider than this many times
 * the narrowest of the recent ones, plus SLACK_TICKS (a few hundred ns:
 * brackets of a few tens of ns vary by more than their ratio). */
#define REJECT_RATIO 3
#define SLACK_TICKS 512
/* Below this span of CUPTI time the window's slope is not trusted: the
 * line is flat through its samples. */
#define MIN_SPAN_NS 100000000ll
/* NTP slews by at most 500 ppm; a steeper fit is noise. */
#define MAX_SLOPE 1e-3

struct sample {
	uint64_t cupti;		/* cuptiGetTimestamp */
	uint64_t ticks;		/* the middle of its bracket */
	uint64_t width;		/* the bracket, ticks */
};

static struct {
	pthread_mutex_t lock;
	struct sample v[TP_CCLOCK_WINDOW];	/* kept samples, a ring */
	unsigned n, next;
	uint64_t widths[TP_CCLOCK_WINDOW];	/* every sample's, a ring */
	unsigned nw, wnext;
	int frozen;
	uint64_t samples, rejected;
} K = {
	.lock = PTHREAD_MUTEX_INITIALIZER,
};

/* The narrowest of TP_CCLOCK_TRIES brackets. */
static int take(struct sample *s)
{
	uint64_t t0, t1, c, best = UINT64_MAX;
	int i;

	for (i = 0; i < TP_CCLOCK_TRIES; i++) {
		t0 = tp_ticks();
		if (tp_cupti.get_timestamp(&c) != CUPTI_SUCCESS)
			return -1;
		t1 = tp_ticks();
		if (t1 - t0 >= best)
			continue;
		best = t1 - t0;
		s->cupti = c;
		s->ticks = t0 + best / 2;
	}
	s->width = best;
	return 0;
}

static uint64_t narrowest_recent(void)
{
	uint64_t w = UINT64_MAX;
	unsigned i;

	for (i = 0; i < K.nw; i++)
		if (K.widths[i] < w)
			w = K.widths[i];
	return w;
}

int tp_cclock_sample(void)
{
	struct sample s;
	int ret = -1;

	pthread_mutex_lock(&K.lock);
	if (K.frozen || take(&s) < 0)
		goto out;
	K.samples++;
	K.widths[K.wnext] = s.width;
	K.wnext = (K.wnext + 1) % TP_CCLOCK_WINDOW;
	if (K.nw < TP_CCLOCK_WINDOW)
		K.nw++;
	/* A bracket widened by a preemption says little about when CUPTI
	 * read its clock: the line stays as the others make it. */
	if (K.n && s.width > REJECT_RATIO * narrowest_recent() + SLACK_TICKS) {
		K.rejected++;
		goto out;
	}
	K.v[K.next] = s;
	K.next = (K.next + 1) % TP_CCLOCK_WINDOW;
	if (K.n < TP_CCLOCK_WINDOW)
		K.n++;
	ret = 0;
out:
	pthread_mutex_unlock(&K.lock);
	return ret;
}

void tp_cclock_freeze(void)
{
	pthread_mutex_lock(&K.lock);
	K.frozen = 1;
	pthread_mutex_unlock(&K.lock);
}

int tp_cclock_frozen(void)
{
	int f;

	pthread_mutex_lock(&K.lock);
	f = K.frozen;
	pthread_mutex_unlock(&K.lock);
	return f;
}

/* A bracket's weight: the inverse of its variance, with a floor so that
 * one read of a few ns does not stand for all. */
static double weight(const struct tp_clock_map *m, const struct sample *s)
{
	double w = (double)(tp_clock_to_ns(m, s->ticks + s->width) -
			    tp_clock_to_ns(m, s->ticks)) + 20.0;

	return 1.0 / (w * w);
}

/* Weighted least squares of the offset (Unix ns - CUPTI ns) against
 * CUPTI's time, both taken from the first sample so doubles hold them
 * exactly. */
static void fit(const struct tp_clock_map *m, struct tp_cclock_line *l)
{
	const struct sample *b = &K.v[0];
	int64_t y0 = (int64_t)(tp_clock_to_unix(m, b->ticks) - b->cupti);
	double sw = 0, sx = 0, sy = 0, sxx = 0, sxy = 0, cx, cy;
	int64_t lo = 0, hi = 0;
	unsigned i;

	for (i = 0; i < K.n; i++) {
		const struct sample *s = &K.v[i];
		double w = weight(m, s);
		int64_t dx = (int64_t)(s->cupti - b->cupti);
		double x = (double)dx;
		double y = (double)((int64_t)(tp_clock_to_unix(m, s->ticks) -
					      s->cupti) - y0);

		lo = dx < lo ? dx : lo;
		hi = dx > hi ? dx : hi;
		sw += w;
		sx += w * x;
		sy += w * y;
	}
	cx = sx / sw;
	cy = sy / sw;
	for (i = 0; i < K.n; i++) {
		const struct sample *s = &K.v[i];
		double w = weight(m, s);
		double x = (double)(int64_t)(s->cupti - b->cupti) - cx;
		double y = (double)((int64_t)(tp_clock_to_unix(m, s->ticks) -
					      s->cupti) - y0) - cy;

		sxx += w * x * x;
		sxy += w * x * y;
	}
	l->slope = hi - lo >= MIN_SPAN_NS && sxx > 0 ? sxy / sxx : 0;
	if (l->slope > MAX_SLOPE || l->slope < -MAX_SLOPE)
		l->slope = 0;
	l->ref = (int64_t)b->cupti + (int64_t)(cx + 0.5);
	l->off = y0 + (int64_t)(cy < 0 ? cy - 0.5 : cy + 0.5);
	l->ok = 1;
}

void tp_cclock_line(const struct tp_clock_map *m, struct tp_cclock_line *l)
{
	memset(l, 0, sizeof(*l));
	pthread_mutex_lock(&K.lock);
	if (K.n)
		fit(m, l);
	pthread_mutex_unlock(&K.lock);
}

void tp_cclock_get_stats(const struct tp_clock_map *m,
			 struct tp_cclock_stats *st)
{
	unsigned i;

	memset(st, 0, sizeof(*st));
	pthread_mutex_lock(&K.lock);
	st->samples = K.samples;
	st->rejected = K.rejected;
	st->narrowest_ns = K.n ? UINT64_MAX : 0;
	for (i = 0; i < K.n; i++) {
		const struct sample *s = &K.v[i];
		uint64_t w = tp_clock_to_ns(m, s->ticks + s->width) -
			     tp_clock_to_ns(m, s->ticks);

		if (w > st->widest_used_ns)
			st->widest_used_ns = w;
		if (w < st->narrowest_ns)
			st->narrowest_ns = w;
	}
	pthread_mutex_unlock(&K.lock);
}

/* After fork: the child has no CUPTI. */
void tp_cclock_reset(void)
{
	pthread_mutex_init(&K.lock, NULL);
	K.n = K.next = K.nw = K.wnext = 0;
	K.frozen = 0;
	K.samples = K.rejected = 0;
}
