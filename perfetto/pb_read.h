/* perfetto/: the Perfetto protobuf encoder of typed events: packets,
 * interning, tracks, annotations; on encode/ and below. */
/* Reading protobuf wire format, for what tprof reads back of its own
 * Perfetto output: the flight recorder's trim (perfetto_trim.c) and `tprof
 * recover`'s cut of a killed writer's stream (cli/recover/recover_cut.c). Bounds
 * are checked on every read: the input may be cut anywhere. */
#ifndef TP_PB_READ_H
#define TP_PB_READ_H

#include <stddef.h>
#include <stdint.h>

/* A varint at *p (before e) into *v, *p moved past it: 0, or -1 when it
 * is cut or longer than ten bytes. */
static inline int tp_pb_get_varint(const unsigned char **p,
				   const unsigned char *e, uint64_t *v)
{
	const unsigned char *s = *p;
	uint64_t x = 0;
	unsigned sh;

	for (sh = 0; s < e && sh < 70; sh += 7) {
		x |= (uint64_t)(*s & 0x7f) << sh;
		if (!(*s++ & 0x80)) {
			*v = x;
			*p = s;
			return 0;
		}
	}
	return -1;
}

/* One field at *p: its number and wire type; a varint's value in *v, a
 * length-delimited field's bytes as [*body, *body + *v); *p moved past
 * it. 0, or -1 when cut or of a wire type tprof never writes (groups). */
static inline int tp_pb_get_field(const unsigned char **p,
				  const unsigned char *e, uint32_t *field,
				  unsigned *wire, uint64_t *v,
				  const unsigned char **body)
{
	uint64_t tag;

	if (tp_pb_get_varint(p, e, &tag) < 0)
		return -1;
	*field = (uint32_t)(tag >> 3);
	*wire = (unsigned)(tag & 7);
	*body = *p;
	switch (*wire) {
	case 0:
		return tp_pb_get_varint(p, e, v);
	case 1:
		*v = 8;
		break;
	case 2:
		if (tp_pb_get_varint(p, e, v) < 0)
			return -1;
		*body = *p;
		break;
	case 5:
		*v = 4;
		break;
	default:
		return -1;
	}
	if (*v > (uint64_t)(e - *p))
		return -1;
	*p += *v;
	return 0;
}

#endif
