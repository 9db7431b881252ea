/* tprof report: numbers as text.
 *
 * Every time is rounded to whole nanoseconds first and then written with
 * integer arithmetic (halves rounded up), so the text never depends on
 * how a binary fraction happens to round: tests can predict it exactly.
 * A leaf of report: it calls no other report file.
 */
#include "report_data.h"

#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>

static uint64_t abs_round(long double v)
{
	if (v < 0)
		v = -v;
	if (!(v < 9.2e18L))
		return (uint64_t)9.2e18;
	return (uint64_t)llroundl(v);
}

static const char *fmt_abs(char *buf, size_t size, const char *sign,
			   uint64_t n)
{
	uint64_t r;

	if (n < 1000) {
		snprintf(buf, size, "%s%" PRIu64 " ns", sign, n);
	} else if (n < 1000000) {
		snprintf(buf, size, "%s%" PRIu64 ".%03" PRIu64 " \u00b5s",
			 sign, n / 1000, n % 1000);
	} else if (n < 999999500) {
		r = (n + 500) / 1000;
		snprintf(buf, size, "%s%" PRIu64 ".%03" PRIu64 " ms", sign,
			 r / 1000, r % 1000);
	} else {
		r = (n + 500000) / 1000000;
		snprintf(buf, size, "%s%" PRIu64 ".%03" PRIu64 " s", sign,
			 r / 1000, r % 1000);
	}
	return buf;
}

const char *rp_fmt_ns(char *buf, size_t size, long double ns)
{
	uint64_t n = abs_round(ns);

	return fmt_abs(buf, size, ns < 0 && n ? "-" : "", n);
}

/* A difference: always signed. */
const char *rp_fmt_diff(char *buf, size_t size, long double ns)
{
	uint64_t n = abs_round(ns);

	return fmt_abs(buf, size, ns < 0 && n ? "-" : "+", n);
}

void rp_json_milli(struct tp_buf *b, long double v)
{
	/* tp_json_us writes an integer with three decimals */
	tp_json_us(b, (int64_t)llroundl(v * 1000.0L));
}

void rp_json_ratio(struct tp_buf *b, long double v)
{
	char s[40];
	int64_t m;

	if (!isfinite((double)v) || fabsl(v) > 1e14L) {
		tp_buf_lit(b, "null");
		return;
	}
	m = (int64_t)llroundl(v * 10000.0L);
	snprintf(s, sizeof(s), "%s%" PRId64 ".%04" PRId64, m < 0 ? "-" : "",
		 (m < 0 ? -m : m) / 10000, (m < 0 ? -m : m) % 10000);
	tp_buf_cstr(b, s);
}

void rp_json_i64_or_null(struct tp_buf *b, int64_t v)
{
	if (v == RP_NONE)
		tp_buf_lit(b, "null");
	else
		tp_json_i64(b, v);
}

void rp_bprintf(struct tp_buf *b, const char *fmt, ...)
{
	char tmp[512];
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(tmp, sizeof(tmp), fmt, ap);
	va_end(ap);
	if (n < 0)
		return;
	if ((size_t)n < sizeof(tmp)) {
		tp_buf_put(b, tmp, (size_t)n);
		return;
	}
	/* long: format straight into the buffer */
	if (tp_buf_reserve(b, (size_t)n + 1))
		return;
	va_start(ap, fmt);
	vsnprintf(b->p + b->len, (size_t)n + 1, fmt, ap);
	va_end(ap);
	b->len += (size_t)n;
}

/* A ratio with three decimals, "1.209". */
const char *rp_fmt_ratio(char *buf, size_t size, long double v)
{
	int64_t m;

	if (!isfinite((double)v) || fabsl(v) > 1e14L) {
		snprintf(buf, size, "-");
		return buf;
	}
	m = (int64_t)llroundl(v * 1000.0L);
	snprintf(buf, size, "%" PRId64 ".%03" PRId64, m / 1000, m % 1000);
	return buf;
}

/* The label of a rank, "-" when unknown. */
const char *rp_fmt_pct(char *buf, size_t size, int64_t num, int64_t den)
{
	__int128 bp;

	if (den <= 0 || num < 0) {
		snprintf(buf, size, "-");
		return buf;
	}
	bp = ((__int128)num * 10000 * 2 + den) / ((__int128)den * 2);
	snprintf(buf, size, "%lld.%02lld%%", (long long)(bp / 100),
		 (long long)(bp % 100));
	return buf;
}

const char *rp_rank_str(char *buf, size_t size, int64_t rank)
{
	if (rank == RP_NONE)
		snprintf(buf, size, "-");
	else
		snprintf(buf, size, "%" PRId64, rank);
	return buf;
}

/* Bytes in binary units, "3.000 MiB". */
const char *rp_fmt_bytes(char *buf, size_t size, int64_t bytes)
{
	static const char *const unit[] = { "KiB", "MiB", "GiB", "TiB" };
	double v = (double)bytes;
	int i = -1;

	if (bytes < 1024 && bytes > -1024) {
		snprintf(buf, size, "%" PRId64 " B", bytes);
		return buf;
	}
	while (i < 3 && (v >= 1024 || v <= -1024)) {
		v /= 1024;
		i++;
	}
	snprintf(buf, size, "%.3f %s", v, unit[i]);
	return buf;
}

/* The largest peak over a rank's devices, RP_NONE without any. */
int64_t rp_mem_peak(const struct rp_rank *r)
{
	int64_t peak = RP_NONE;
	size_t i;

	for (i = 0; i < r->nmem; i++)
		if (r->mem[i].peak != RP_NONE && r->mem[i].peak > peak)
			peak = r->mem[i].peak;
	return peak;
}
