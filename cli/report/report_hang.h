/* tprof report's hang section: reads the hang dumps the library writes
 * (TPROF_HANG, `tprof dump`: <dir>/hangs/<stem>.hang.json, schema
 * "tprof.hang") of every rank and names the stuck collective: per
 * communicator the last collective each rank entered and completed, the
 * ranks that never entered the one the others wait in, a mismatch of call,
 * count or type, and ranks stuck in ncclCommInitRank with the ranks that
 * never joined. */
#ifndef TP_REPORT_HANG_H
#define TP_REPORT_HANG_H

#include <stddef.h>

#include "encode/json.h"

/* Takes the hang dumps out of the report's inputs: files named
 * *.hang.json, and DIR/hangs/ (and DIR itself) for each directory.
 * Appends the Markdown section to out. Returns the number of dumps read,
 * or -1 after one error line. */
int rp_hang_section(char **files, size_t *nfiles, struct tp_buf *out);

#endif
