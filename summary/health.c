/* summary/: the summary aggregator: per-name statistics, histograms, steps,
 * groups, memory, and its JSON/markdown output; on util/ .. session/ and
 * stacks/. */
/* The "gpu_health" member (health.h): per device, each counter's
 * min/mean/max/last over its samples and each clock event reason's share
 * of the samples. Bounded: HEALTH_DEVICES devices, HEALTH_KEYS counters,
 * HEALTH_UNAVAIL unavailable entries each; past those, counted as
 * left out, never guessed. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "health.h"

#define HEALTH_DEVICES 64
#define HEALTH_KEYS 48
#define HEALTH_UNAVAIL 24
#define HEALTH_KEYLEN 32
#define HEALTH_WHYLEN 64

struct hkey {
	char key[HEALTH_KEYLEN];
	int reason;		/* an arg of TP_HEALTH_REASONS_EVENT */
	uint64_t n, on;		/* samples, samples with a non-zero value */
	double sum, min, max, last;
};

struct hunav {
	char metric[HEALTH_KEYLEN];
	char why[HEALTH_WHYLEN];
};

struct hdev {
	int64_t device;
	char uuid[96];
	struct hkey keys[HEALTH_KEYS];
	unsigned nkeys;
	struct hunav unav[HEALTH_UNAVAIL];
	unsigned nunav;
	uint64_t left_out;		/* counters past HEALTH_KEYS */
};

struct tp_health {
	char state[160];
	int64_t hz;
	struct hdev *dev[HEALTH_DEVICES];
	unsigned ndev;
	uint64_t devices_left_out;
};

static struct tp_health *get(struct tp_health **h)
{
	if (!*h)
		*h = calloc(1, sizeof(**h));
	return *h;
}

static struct hdev *dev_of(struct tp_health **hp, int64_t device)
{
	struct tp_health *h = get(hp);
	unsigned i;

	if (!h)
		return NULL;
	for (i = 0; i < h->ndev; i++)
		if (h->dev[i]->device == device)
			return h->dev[i];
	if (h->ndev == HEALTH_DEVICES) {
		h->devices_left_out++;
		return NULL;
	}
	h->dev[h->ndev] = calloc(1, sizeof(struct hdev));
	if (!h->dev[h->ndev])
		return NULL;
	h->dev[h->ndev]->device = device;
	return h->dev[h->ndev++];
}

static void copy(char *dst, size_t size, const char *s, size_t len)
{
	if (len >= size)
		len = size - 1;
	memcpy(dst, s, len);
	dst[len] = '\0';
}

static struct hkey *key_of(struct hdev *d, const char *key, size_t len,
			   int reason)
{
	struct hkey *k;
	unsigned i;

	if (len >= HEALTH_KEYLEN)
		return NULL;
	for (i = 0; i < d->nkeys; i++) {
		k = &d->keys[i];
		if (k->reason == reason && !strncmp(k->key, key, len) &&
		    !k->key[len])
			return k;
	}
	if (d->nkeys == HEALTH_KEYS) {
		d->left_out++;
		return NULL;
	}
	k = &d->keys[d->nkeys++];
	copy(k->key, sizeof(k->key), key, len);
	k->reason = reason;
	k->min = INFINITY;
	k->max = -INFINITY;
	return k;
}

void tp_health_sample(struct tp_health **h, int64_t device,
		      const char *event, const char *key, size_t keylen,
		      double v)
{
	int reason = !strcmp(event, TP_HEALTH_REASONS_EVENT);
	struct hdev *d = dev_of(h, device);
	struct hkey *k;

	if (!d || !(k = key_of(d, key, keylen, reason)))
		return;
	k->n++;
	k->on += v != 0;
	k->sum += v;
	k->last = v;
	if (v < k->min)
		k->min = v;
	if (v > k->max)
		k->max = v;
}

void tp_health_state(struct tp_health **hp, const char *state, size_t len,
		     int64_t hz)
{
	struct tp_health *h = get(hp);

	if (!h)
		return;
	copy(h->state, sizeof(h->state), state, len);
	h->hz = hz;
}

void tp_health_device(struct tp_health **h, int64_t device,
		      const char *uuid, size_t len)
{
	struct hdev *d = dev_of(h, device);

	if (d)
		copy(d->uuid, sizeof(d->uuid), uuid, len);
}

void tp_health_unavailable(struct tp_health **h, int64_t device,
			   const char *metric, size_t mlen, const char *why,
			   size_t wlen)
{
	struct hdev *d = dev_of(h, device);
	struct hunav *u;
	unsigned i;

	if (!d)
		return;
	for (i = 0; i < d->nunav; i++)
		if (!strncmp(d->unav[i].metric, metric, mlen) &&
		    !d->unav[i].metric[mlen])
			return;
	if (d->nunav == HEALTH_UNAVAIL) {
		d->left_out++;
		return;
	}
	u = &d->unav[d->nunav++];
	copy(u->metric, sizeof(u->metric), metric, mlen);
	copy(u->why, sizeof(u->why), why, wlen);
}

/* The samples of the reasons event: each carries every reason. */
static uint64_t reason_samples(const struct hdev *d)
{
	uint64_t n = 0;
	unsigned i;

	for (i = 0; i < d->nkeys; i++)
		if (d->keys[i].reason && d->keys[i].n > n)
			n = d->keys[i].n;
	return n;
}

static uint64_t samples(const struct hdev *d)
{
	uint64_t n = 0;
	unsigned i;

	for (i = 0; i < d->nkeys; i++)
		if (d->keys[i].n > n)
			n = d->keys[i].n;
	return n;
}

static void put_num(struct tp_buf *b, double v)
{
	if (v == floor(v) && fabs(v) < 9e15)
		tp_json_i64(b, (int64_t)v);
	else
		tp_json_double(b, v);
}

/* "key": {"n": N, "min": .., "mean": .., "max": .., "last": ..} */
static void put_counter(struct tp_buf *b, const struct hkey *k)
{
	tp_json_str(b, k->key);
	tp_buf_lit(b, ": {\"n\": ");
	tp_json_u64(b, k->n);
	tp_buf_lit(b, ", \"min\": ");
	put_num(b, k->min);
	tp_buf_lit(b, ", \"mean\": ");
	/* three decimals: a mean of integers written the same by the
	 * library and by a report over the trace */
	put_num(b, round(k->sum / (double)k->n * 1000.0) / 1000.0);
	tp_buf_lit(b, ", \"max\": ");
	put_num(b, k->max);
	tp_buf_lit(b, ", \"last\": ");
	put_num(b, k->last);
	tp_buf_char(b, '}');
}

static void put_device(struct tp_buf *b, const struct hdev *d)
{
	uint64_t rs = reason_samples(d);
	unsigned i, n;

	tp_buf_lit(b, "{\"device\": ");
	tp_json_i64(b, d->device);
	tp_buf_lit(b, ", \"uuid\": ");
	if (d->uuid[0])
		tp_json_str(b, d->uuid);
	else
		tp_buf_lit(b, "null");
	tp_buf_lit(b, ", \"samples\": ");
	tp_json_u64(b, samples(d));
	tp_buf_lit(b, ",\n   \"counters\": {");
	for (i = 0, n = 0; i < d->nkeys; i++) {
		if (d->keys[i].reason || !d->keys[i].n)
			continue;
		tp_buf_cstr(b, n++ ? ",\n    " : "\n    ");
		put_counter(b, &d->keys[i]);
	}
	tp_buf_lit(b, "},\n   \"clock_event_samples\": ");
	tp_json_u64(b, rs);
	/* share of the reasons event's samples with the reason active */
	tp_buf_lit(b, ", \"clock_events\": {");
	for (i = 0, n = 0; i < d->nkeys; i++) {
		if (!d->keys[i].reason || !rs)
			continue;
		tp_buf_cstr(b, n++ ? ", " : "");
		tp_json_str(b, d->keys[i].key);
		tp_buf_lit(b, ": ");
		tp_json_double(b, round((double)d->keys[i].on / (double)rs *
					10000.0) / 10000.0);
	}
	tp_buf_lit(b, "},\n   \"unavailable\": {");
	for (i = 0; i < d->nunav; i++) {
		tp_buf_cstr(b, i ? ", " : "");
		tp_json_str(b, d->unav[i].metric);
		tp_buf_lit(b, ": ");
		tp_json_str(b, d->unav[i].why);
	}
	tp_buf_lit(b, "}, \"left_out\": ");
	tp_json_u64(b, d->left_out);
	tp_buf_char(b, '}');
}

void tp_health_write_json(const struct tp_health *h, struct tp_buf *b)
{
	unsigned i;

	if (!h)
		return;
	tp_buf_lit(b, ",\n\"gpu_health\": {\"source\": \"nvml\", \"state\": ");
	if (h->state[0])
		tp_json_str(b, h->state);
	else
		tp_buf_lit(b, "null");
	tp_buf_lit(b, ", \"hz\": ");
	tp_json_i64(b, h->hz);
	tp_buf_lit(b, ", \"devices_left_out\": ");
	tp_json_u64(b, h->devices_left_out);
	tp_buf_lit(b, ", \"devices\": [");
	for (i = 0; i < h->ndev; i++) {
		tp_buf_cstr(b, i ? ",\n  " : "\n  ");
		put_device(b, h->dev[i]);
	}
	tp_buf_lit(b, "]}");
}

void tp_health_free(struct tp_health *h)
{
	unsigned i;

	if (!h)
		return;
	for (i = 0; i < h->ndev; i++)
		free(h->dev[i]);
	free(h);
}
