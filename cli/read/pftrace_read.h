/* Reading a Perfetto protobuf trace (a Trace message: a stream of
 * TracePackets, as Perfetto's SDK, traced and tprof write it) as the
 * Kineto-style JSON trace text the CLI's readers already parse, so that
 * check, report, merge and convert take .pftrace(.gz) with their own
 * logic (docs/reference/perfetto-format.md, "What tprof reads").
 *
 * Streaming: one packet is decoded at a time into the JSON of its events;
 * what must outlive a packet (interned strings per sequence, tracks,
 * slices begun and not yet ended, open flow ids) is held in tables with
 * fixed bounds (pftrace_int.h). Malformed input is one error, "offset N:
 * why", N the byte offset in the (decompressed) protobuf stream. */
#ifndef TP_CLI_PFTRACE_READ_H
#define TP_CLI_PFTRACE_READ_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/* The protobuf input: fill buf with up to len bytes, 0 at the end, -1 on
 * an error (its reason is the caller's). */
typedef ssize_t (*tp_pfr_read_fn)(void *ctx, void *buf, size_t len);

struct tp_pfr;

/* Nonzero when the first bytes of a (decompressed) file are a protobuf
 * TracePacket stream rather than JSON: the first byte is Trace.packet's
 * tag (0x0a) and the first byte that is not JSON whitespace is not '{' or
 * '['. */
int tp_pfr_sniff(const void *head, size_t n);

struct tp_pfr *tp_pfr_new(tp_pfr_read_fn read, void *ctx);
/* Up to len bytes of the JSON text; 0 at its end, -1 on an error (see
 * tp_pfr_error; NULL when the input's reader failed). */
ssize_t tp_pfr_read(struct tp_pfr *r, void *buf, size_t len);
const char *tp_pfr_error(const struct tp_pfr *r);
void tp_pfr_free(struct tp_pfr *r);

/* What the input holds that a JSON trace cannot say, counted while
 * reading; tp_pfr_note writes the line for kind k into buf when its
 * count is not 0 (then returns 1). `tprof check` reports them. */
enum {
	PFR_NOTE_UNMATCHED_END,	/* SLICE_END with no slice open */
	PFR_NOTE_UNENDED,	/* SLICE_BEGIN never ended */
	PFR_NOTE_NEEDS_STATE,	/* packets skipped: state never cleared */
	PFR_NOTE_BAD_IID,	/* an interned id not defined */
	PFR_NOTE_NO_CLOCK,	/* timestamps on a clock with no snapshot */
	PFR_NOTE_SKIPPED,	/* types without a JSON form, stray counters */
	PFR_NOTE_BAD_TIME,	/* 2^61 ns (73 years) from the base */
	PFR_NOTE_LOST,		/* slices open across lost packets */
	PFR_NOTE_KINDS
};
int tp_pfr_note(const struct tp_pfr *r, int k, char *buf, size_t len);

#endif
