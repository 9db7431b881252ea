/* tprof convert: a JSON(.gz) trace (tprof's, or torch.profiler's Kineto
 * trace) to Perfetto protobuf (.pftrace, .pftrace.gz) or JSON, streamed
 * through the typed event model (trace/tev.h). */
#ifndef TP_CLI_CONVERT_H
#define TP_CLI_CONVERT_H

int tp_cmd_convert(int argc, char **argv);

#endif
