/* encode/: the typed event model (tev.h) and the JSON encoder; on
 * util/ and gzip/. */
/* Appending JSON text to a growable buffer, fast enough for the writer's
 * millions of events per second: no printf on the per-event path. */
#ifndef TP_JSON_H
#define TP_JSON_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

struct tp_buf {
	char *p;
	size_t len;
	size_t cap;
	int oom;	/* an allocation failed: content is truncated */
};

void tp_buf_free(struct tp_buf *b);
int tp_buf_grow(struct tp_buf *b, size_t need);

static inline int tp_buf_reserve(struct tp_buf *b, size_t n)
{
	if (__builtin_expect(b->len + n <= b->cap, 1))
		return 0;
	return tp_buf_grow(b, n);
}

static inline void tp_buf_put(struct tp_buf *b, const char *s, size_t n)
{
	if (tp_buf_reserve(b, n))
		return;
	memcpy(b->p + b->len, s, n);
	b->len += n;
}

#define tp_buf_lit(b, s) tp_buf_put((b), (s), sizeof(s) - 1)

static inline void tp_buf_char(struct tp_buf *b, char c)
{
	if (tp_buf_reserve(b, 1))
		return;
	b->p[b->len++] = c;
}

void tp_buf_cstr(struct tp_buf *b, const char *s);
void tp_json_str(struct tp_buf *b, const char *s);
void tp_json_strn(struct tp_buf *b, const char *s, size_t n);
/* The inside of a JSON string (tp_json_strn without the quotes), so one
 * string can be made of several pieces. */
void tp_json_escape(struct tp_buf *b, const char *s, size_t n);
void tp_json_u64(struct tp_buf *b, uint64_t v);
/* "00" to "99". */
extern const char tp_json_digit_pairs[200];
char *tp_json_u64_at_any(char *p, uint64_t v);

/* The two digits of v < 100 at p. */
static inline void tp_json_put2(char *p, unsigned v)
{
	memcpy(p, tp_json_digit_pairs + 2 * v, 2);
}

/* v < 10000 in exactly four digits, leading zeros kept. */
static inline void tp_json_put4z(char *p, unsigned v)
{
	tp_json_put2(p, v / 100);
	tp_json_put2(p + 2, v % 100);
}

/* v < 10000 in one to four digits; returns the end. */
static inline char *tp_json_put4(char *p, unsigned v)
{
	unsigned h;

	if (v < 100) {
		if (v < 10) {
			*p = (char)('0' + v);
			return p + 1;
		}
		tp_json_put2(p, v);
		return p + 2;
	}
	h = v / 100;
	if (h < 10) {
		*p = (char)('0' + h);
		tp_json_put2(p + 1, v % 100);
		return p + 3;
	}
	tp_json_put2(p, h);
	tp_json_put2(p + 2, v % 100);
	return p + 4;
}

/* v at p (room for 20 bytes, not checked); returns the end. Inline for
 * values under 100 (a launch's grid and block, return codes, flags),
 * which are most of the numbers the writer prints. */
static inline char *tp_json_u64_at(char *p, uint64_t v)
{
	if (v < 10) {
		*p = (char)('0' + v);
		return p + 1;
	}
	if (v < 100) {
		memcpy(p, tp_json_digit_pairs + 2 * v, 2);
		return p + 2;
	}
	return tp_json_u64_at_any(p, v);
}

/* tp_json_u64_at inline up to four digits (a launch's grid and block
 * dimensions). */
static inline char *tp_json_u64_at4(char *p, uint64_t v)
{
	if (v < 10000)
		return tp_json_put4(p, (unsigned)v);
	return tp_json_u64_at_any(p, v);
}

/* v at p, signed (room for 21 bytes, not checked); returns the end. */
static inline char *tp_json_i64_at(char *p, int64_t v)
{
	if (v >= 0)
		return tp_json_u64_at(p, (uint64_t)v);
	*p++ = '-';
	return tp_json_u64_at(p, (uint64_t)0 - (uint64_t)v);
}
void tp_json_i64(struct tp_buf *b, int64_t v);
/* A double as JSON: shortest round-trip form; null for NaN/inf. */
void tp_json_double(struct tp_buf *b, double v);
void tp_json_hex(struct tp_buf *b, uint64_t v);
void tp_json_us(struct tp_buf *b, int64_t ns);
/* tp_json_us at p (room for 25 bytes, not checked); returns the end. */
char *tp_json_us_at(char *p, int64_t ns);
/* The text of a timestamp's digits above its last eight nanosecond
 * digits (its 100 ms), kept by the caller: consecutive events' times
 * share it, so it is written once per 100 ms. len 0: none yet. */
struct tp_json_us_hi {
	uint64_t hi;
	uint8_t len;
	char text[16];		/* hi < 2^64 / 10^8 has 12 digits */
};
/* tp_json_us_at through c: the same bytes (room for 16 + 9 bytes). */
char *tp_json_us_at_hi(char *p, int64_t ns, struct tp_json_us_hi *c);

/* ,"key": for a literal key that needs no escaping. */
#define tp_json_key(b, key) tp_buf_lit((b), ",\"" key "\":")

#endif
