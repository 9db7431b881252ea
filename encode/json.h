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

/* ,"key": for a literal key that needs no escaping. */
#define tp_json_key(b, key) tp_buf_lit((b), ",\"" key "\":")

#endif
