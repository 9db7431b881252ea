/* tprof convert to Perfetto: JSON's flows that fan out. */
#ifndef TP_CLI_CONVERT_FLOWS_H
#define TP_CLI_CONVERT_FLOWS_H

#include "encode/tev.h"

struct tp_conv_flows;

struct tp_conv_flows *tp_conv_flows_new(void);
void tp_conv_flows_free(struct tp_conv_flows *f);

/* Sees a flow event before it is written: its id tagged with its
 * category and name unless it is "ac2g" (convert_flows.c). For the k-th end (k >= 1) of
 * an id whose start was seen, fills *start with a flow start of id
 * | k << 32 at that start's place and time, gives ev the same id, and
 * returns 1: write *start first. Else 0. */
int tp_conv_flows_see(struct tp_conv_flows *f, struct tp_tev *ev,
		      struct tp_tev *start);

#endif
