/* perfetto/: the Perfetto protobuf encoder of typed events: packets,
 * interning, tracks, annotations; on encode/ and below. */
/* Protocol buffers wire format: the out-of-line parts (pb.h). */
#include <string.h>

#include "pb.h"

void tp_pb_double(struct tp_buf *b, uint32_t field, double v)
{
	uint64_t u;

	memcpy(&u, &v, sizeof(u));
	tp_pb_fixed64(b, field, u);
}

void tp_pb_bytes(struct tp_buf *b, uint32_t field, const void *p, size_t n)
{
	tp_pb_tag(b, field, TP_PB_LEN);
	tp_pb_varint(b, n);
	tp_buf_put(b, p, n);
}

void tp_pb_close_long(struct tp_buf *b, size_t mark)
{
	size_t body, extra;
	unsigned char *p;

	/* An allocation failed on the way: the buffer is marked oom and
	 * its content is dropped by its owner; do not patch past it. */
	if (b->oom || mark > b->len || mark == 0)
		return;
	body = b->len - mark;
	extra = tp_pb_varint_len(body) - 1;
	if (extra) {
		if (tp_buf_reserve(b, extra))
			return;
		memmove(b->p + mark + extra, b->p + mark, body);
		b->len += extra;
	}
	p = (unsigned char *)b->p + mark - 1;
	tp_pb_varint_at(p, body);
}
