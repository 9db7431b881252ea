/* perfetto/: the Perfetto protobuf encoder of typed events: packets,
 * interning, tracks, annotations; on encode/ and below. */
/* Protocol buffers wire format, only what the Perfetto encoder needs:
 * varints, zigzag-free signed ints (int64 as two's complement, as
 * protobuf's int64 is), fixed64/double, and length-delimited fields.
 *
 * A nested message is written with a one-byte length placeholder
 * (tp_pb_open) and patched when it ends (tp_pb_close); a message over 127
 * bytes moves its body to make room for the longer varint, which is rare
 * for trace packets and cheap (a memmove of the body). */
#ifndef TP_PB_H
#define TP_PB_H

#include <stddef.h>
#include <stdint.h>

#include "encode/json.h"

enum tp_pb_wire {
	TP_PB_VARINT = 0,
	TP_PB_I64 = 1,
	TP_PB_LEN = 2,
	TP_PB_I32 = 5,
};

/* Bytes of v as a varint, 1..10. */
static inline size_t tp_pb_varint_len(uint64_t v)
{
	size_t n = 1;

	while (v >= 0x80) {
		v >>= 7;
		n++;
	}
	return n;
}

/* Writes v at p (room for 10 bytes); returns the bytes written. */
static inline size_t tp_pb_varint_at(unsigned char *p, uint64_t v)
{
	size_t n = 0;

	while (v >= 0x80) {
		p[n++] = (unsigned char)(v | 0x80);
		v >>= 7;
	}
	p[n++] = (unsigned char)v;
	return n;
}

static inline void tp_pb_varint(struct tp_buf *b, uint64_t v)
{
	if (tp_buf_reserve(b, 10))
		return;
	b->len += tp_pb_varint_at((unsigned char *)b->p + b->len, v);
}

static inline void tp_pb_tag(struct tp_buf *b, uint32_t field,
			     enum tp_pb_wire w)
{
	tp_pb_varint(b, (uint64_t)field << 3 | w);
}

/* A varint field at q (room for 20 bytes); returns its end. */
static inline unsigned char *tp_pb_u64_at(unsigned char *q, uint32_t field,
					  uint64_t v)
{
	q += tp_pb_varint_at(q, (uint64_t)field << 3 | TP_PB_VARINT);
	return q + tp_pb_varint_at(q, v);
}

/* One check of room for the tag and the value, not one each. */
static inline void tp_pb_u64(struct tp_buf *b, uint32_t field, uint64_t v)
{
	if (tp_buf_reserve(b, 20))
		return;
	b->len = (size_t)(tp_pb_u64_at((unsigned char *)b->p + b->len, field,
				       v) - (unsigned char *)b->p);
}

/* int64/int32 fields: negative values take ten bytes, as protobuf says. */
static inline void tp_pb_i64(struct tp_buf *b, uint32_t field, int64_t v)
{
	tp_pb_u64(b, field, (uint64_t)v);
}

/* A fixed64 field at q (room for 18 bytes), little-endian as the wire
 * format says; returns its end. */
static inline unsigned char *tp_pb_fixed64_at(unsigned char *q,
					      uint32_t field, uint64_t v)
{
	int i;

	q += tp_pb_varint_at(q, (uint64_t)field << 3 | TP_PB_I64);
	for (i = 0; i < 8; i++)
		q[i] = (unsigned char)(v >> (8 * i));
	return q + 8;
}

static inline void tp_pb_fixed64(struct tp_buf *b, uint32_t field,
				 uint64_t v)
{
	if (tp_buf_reserve(b, 18))
		return;
	b->len = (size_t)(tp_pb_fixed64_at((unsigned char *)b->p + b->len,
					   field, v) - (unsigned char *)b->p);
}

void tp_pb_double(struct tp_buf *b, uint32_t field, double v);
void tp_pb_bytes(struct tp_buf *b, uint32_t field, const void *p, size_t n);

/* Starts a nested message; returns the offset tp_pb_close needs. */
static inline size_t tp_pb_open(struct tp_buf *b, uint32_t field)
{
	tp_pb_tag(b, field, TP_PB_LEN);
	tp_buf_char(b, 0);
	return b->len;
}

/* A body over 127 bytes: its length takes more than the placeholder. */
void tp_pb_close_long(struct tp_buf *b, size_t mark);

static inline void tp_pb_close(struct tp_buf *b, size_t mark)
{
	size_t body = b->len - mark;

	if (__builtin_expect(!b->oom && mark && mark <= b->len &&
			     body < 128, 1)) {
		b->p[mark - 1] = (char)body;
		return;
	}
	tp_pb_close_long(b, mark);
}

#endif
