/* Protobuf wire-format decoding over a bounded buffer, for the Perfetto
 * reader (pftrace_read.c). A cursor never reads past its end, and a
 * length-delimited field's sub-cursor is checked against its parent's
 * end before it is made, so a malformed length cannot reach outside the
 * packet. Calls nothing. */
#ifndef TP_CLI_PBR_H
#define TP_CLI_PBR_H

#include <stddef.h>
#include <stdint.h>

enum { PBR_VARINT = 0, PBR_I64 = 1, PBR_LEN = 2, PBR_I32 = 5 };

struct pbr {
	const uint8_t *p, *end;
};

/* One field: its number, wire type and value (varints and fixed-width
 * numbers in v; a length-delimited field's bytes in sub). */
struct pbr_field {
	uint32_t num;
	int wt;
	uint64_t v;
	struct pbr sub;
};

static inline struct pbr pbr_make(const void *p, size_t n)
{
	struct pbr c;

	if (!p)		/* an empty buffer's: no arithmetic on NULL */
		p = "";
	c.p = (const uint8_t *)p;
	c.end = c.p + n;
	return c;
}

/* 0, or -1 when the varint runs past the end or past 10 bytes. */
static inline int pbr_varint(struct pbr *c, uint64_t *out)
{
	uint64_t v = 0;
	int shift;

	for (shift = 0; shift < 70 && c->p < c->end; shift += 7) {
		uint8_t b = *c->p++;

		v |= (uint64_t)(b & 0x7f) << (shift < 64 ? shift : 63);
		if (!(b & 0x80)) {
			*out = v;
			return 0;
		}
	}
	return -1;
}

/* The next field; 1 when there is one, 0 at the end, -1 when malformed
 * (a reason in *why). Groups (wire types 3 and 4) are malformed: no
 * message of Perfetto's trace schema uses them. */
static inline int pbr_next(struct pbr *c, struct pbr_field *f,
			   const char **why)
{
	uint64_t tag, n;
	int i;

	if (c->p >= c->end)
		return 0;
	if (pbr_varint(c, &tag)) {
		*why = "truncated field tag";
		return -1;
	}
	f->num = (uint32_t)(tag >> 3);
	f->wt = (int)(tag & 7);
	if (!f->num || tag >> 32) {
		*why = "bad field number";
		return -1;
	}
	switch (f->wt) {
	case PBR_VARINT:
		if (pbr_varint(c, &f->v)) {
			*why = "truncated varint";
			return -1;
		}
		return 1;
	case PBR_I64:
	case PBR_I32:
		n = f->wt == PBR_I64 ? 8 : 4;
		if ((size_t)(c->end - c->p) < n) {
			*why = "truncated fixed-width field";
			return -1;
		}
		f->v = 0;
		for (i = (int)n - 1; i >= 0; i--)
			f->v = f->v << 8 | c->p[i];
		c->p += n;
		return 1;
	case PBR_LEN:
		if (pbr_varint(c, &n)) {
			*why = "truncated length";
			return -1;
		}
		if (n > (uint64_t)(c->end - c->p)) {
			*why = "length past the end of its message";
			return -1;
		}
		f->sub = pbr_make(c->p, (size_t)n);
		c->p += n;
		return 1;
	}
	*why = "unsupported wire type";
	return -1;
}

static inline int64_t pbr_zigzag(uint64_t v)
{
	return (int64_t)(v >> 1) ^ -(int64_t)(v & 1);
}

#endif
