/* tprof report: one entry per process, sorted and labelled (shared
 * with tprof diff, which reads each of its two runs the same way). */
#ifndef TP_CLI_REPORT_RANKS_H
#define TP_CLI_REPORT_RANKS_H

#include "report_data.h"

/* Several inputs of one process become one entry (the one that covers
 * most); entries are sorted by rank, the rank's own file before its -pid
 * files, and labelled "R", or "R#2", "R#3" for further inputs of one
 * rank (with a warning on stderr). */
void rp_label_ranks(struct rp_report *rep);

#endif
