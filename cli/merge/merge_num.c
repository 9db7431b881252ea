/* tprof merge: numbers taken from their decimal text, never through a
 * double, so that shifted timestamps and rewritten ids are exact.
 * A leaf: it calls no other merge file. */
#include "merge_int.h"

#include <limits.h>
#include <string.h>

/* Ranks above this are not taken from names. */
#define RANK_MAX 1000000000LL
/* Exponents are clamped here: anything past it over- or underflows. */
#define EXP_MAX 100000

static int is_digit(char c)
{
	return c >= '0' && c <= '9';
}

static int hexval(char c)
{
	if (is_digit(c))
		return c - '0';
	c |= 0x20;
	return c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;
}

struct digits {
	const char *i, *f;	/* integer and fraction digits */
	size_t ni, nf;
};

static int digit_at(const struct digits *d, size_t k)
{
	return (k < d->ni ? d->i[k] : d->f[k - d->ni]) - '0';
}

/* The exponent after 'e'/'E' at p, clamped to +-EXP_MAX. */
static long exponent(const char *p, const char *end)
{
	int neg = 0;
	long e = 0;

	if (p < end && (*p == '+' || *p == '-'))
		neg = *p++ == '-';
	for (; p < end && is_digit(*p); p++)
		if (e < EXP_MAX)
			e = e * 10 + (*p - '0');
	return neg ? -e : e;
}

/* value = digits * 10^(exp - nf) us, so its nanoseconds are the first
 * ni + exp + 3 digits, rounded by the next one. */
int mg_us_to_ns(const char *s, size_t n, int64_t *ns)
{
	const char *p = s, *end = s + n;
	struct digits d = { 0 };
	long keep, k, exp = 0;
	uint64_t v = 0;
	int neg = 0, c;

	if (p < end && *p == '-')
		neg = *p++ == '-';
	for (d.i = p; p < end && is_digit(*p); p++)
		d.ni++;
	if (p < end && *p == '.')
		for (d.f = ++p; p < end && is_digit(*p); p++)
			d.nf++;
	if (p < end && (*p == 'e' || *p == 'E'))
		exp = exponent(p + 1, end);
	keep = (long)d.ni + exp + 3;
	for (k = 0; k < keep && k < (long)(d.ni + d.nf); k++) {
		c = digit_at(&d, (size_t)k);
		if (v > ((uint64_t)INT64_MAX - (uint64_t)c) / 10)
			return -1;
		v = v * 10 + (uint64_t)c;
	}
	for (; k < keep && v; k++) {
		if (v > (uint64_t)INT64_MAX / 10)
			return -1;
		v *= 10;
	}
	if (keep >= 0 && keep < (long)(d.ni + d.nf) &&
	    digit_at(&d, (size_t)keep) >= 5 && v++ == (uint64_t)INT64_MAX)
		return -1;
	*ns = neg ? -(int64_t)v : (int64_t)v;
	return 0;
}

size_t mg_fmt_us(char *buf, int64_t ns)
{
	uint64_t a = ns < 0 ? 0 - (uint64_t)ns : (uint64_t)ns;
	uint64_t ip = a / 1000, f = a % 1000;
	char t[24], *p = buf;
	size_t k = 0;

	if (ns < 0)
		*p++ = '-';
	do {
		t[k++] = (char)('0' + ip % 10);
		ip /= 10;
	} while (ip);
	while (k)
		*p++ = t[--k];
	*p++ = '.';
	*p++ = (char)('0' + f / 100);
	*p++ = (char)('0' + f / 10 % 10);
	*p++ = (char)('0' + f % 10);
	return (size_t)(p - buf);
}

/* The parser has checked the literal, so a '.' four from the end with
 * three digits after it can only be -?\d+\.\d{3}. */
int mg_three_decimals(const char *s, size_t n)
{
	return n >= 5 && s[n - 4] == '.' && is_digit(s[n - 3]) &&
	       is_digit(s[n - 2]) && is_digit(s[n - 1]);
}

int mg_parse_uint(const char *s, size_t n, int base, int64_t *v)
{
	const char *end = s + n;
	int64_t x = 0;
	int c;

	if (base == 16 && n > 2 && s[0] == '0' && (s[1] | 0x20) == 'x')
		s += 2;
	if (s == end)
		return -1;
	for (; s < end; s++) {
		c = base == 16 ? hexval(*s) : is_digit(*s) ? *s - '0' : -1;
		if (c < 0)
			return -1;
		x = x * base + c;
		if (x >= MG_ID_STRIDE)
			return -1;
	}
	*v = x;
	return 0;
}

static int parse_rank(const char *s, const char *end, int64_t *rank)
{
	int64_t r = 0;

	if (s == end || !is_digit(*s))
		return -1;
	for (; s < end && is_digit(*s); s++) {
		r = r * 10 + (*s - '0');
		if (r > RANK_MAX)
			return -1;
	}
	*rank = r;
	return 0;
}

int mg_rank_suffix(const char *s, size_t n, int64_t *rank)
{
	const char *end = s + n, *d = end;

	while (d > s && is_digit(d[-1]))
		d--;
	if (d == end || d - s < 5 || memcmp(d - 5, "-rank", 5))
		return -1;
	return parse_rank(d, end, rank);
}

/* The last "rank<digits>" in the file's base name. */
int mg_rank_in_name(const char *path, int64_t *rank)
{
	const char *base = strrchr(path, '/'), *p, *hit = NULL;

	base = base ? base + 1 : path;
	for (p = base; (p = strstr(p, "rank")); p++)
		if (is_digit(p[4]))
			hit = p + 4;
	if (!hit)
		return -1;
	return parse_rank(hit, hit + strlen(hit), rank);
}
