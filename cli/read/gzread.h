/* Read a file that may or may not be gzip-compressed, and that may be a
 * Perfetto protobuf trace: then what tp_gzr_read hands out is its JSON
 * form (pftrace_read.h), so every reader of JSON traces reads .pftrace
 * and .pftrace.gz files too, told by their content.
 *
 * The format is decided by the first two bytes (0x1f 0x8b), not by the file
 * name, so a renamed or uncompressed trace still reads. Concatenated gzip
 * members are joined, as gzip(1) and Python's gzip module do.
 */
#ifndef TP_CLI_GZREAD_H
#define TP_CLI_GZREAD_H

#include <stddef.h>
#include <sys/types.h>

struct tp_gzr;

/* Returns NULL on failure with a message in err (errlen bytes). */
struct tp_gzr *tp_gzr_open(const char *path, char *err, size_t errlen);

/* Reads up to len decompressed bytes. Returns the count, 0 at the end of
 * the data, -1 on a read or decompression error (see tp_gzr_error). */
ssize_t tp_gzr_read(struct tp_gzr *gz, void *buf, size_t len);

/* The reason for the last -1 from tp_gzr_read, or NULL if none. */
const char *tp_gzr_error(const struct tp_gzr *gz);

/* Nonzero if the file is gzip-compressed. */
int tp_gzr_is_gzip(const struct tp_gzr *gz);

/* Nonzero if the (decompressed) content is a Perfetto protobuf trace. */
int tp_gzr_is_perfetto(struct tp_gzr *gz);

/* A Perfetto trace's note k (pftrace_read.h, PFR_NOTE_*) into buf: 1 when
 * there is one, else 0. */
int tp_gzr_note(const struct tp_gzr *gz, int k, char *buf, size_t len);

void tp_gzr_close(struct tp_gzr *gz);

#endif
