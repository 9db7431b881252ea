/* Telling a Chrome/Kineto trace by its content (trace_sniff.c). */
#ifndef TP_CLI_TRACE_SNIFF_H
#define TP_CLI_TRACE_SNIFF_H

/* Nonzero when name ends in .json or .json.gz but not .summary.json: a
 * file of a directory worth opening to see whether it is a trace. */
int tp_sniff_name(const char *name);

/* Nonzero when the file (plain or gzipped) is a JSON object whose first
 * top-level keys, within its first 64 KiB, include "traceEvents" or
 * "schemaVersion" (what tprof, Kineto and HTA's test data all write
 * first or early). */
int tp_sniff_trace(const char *path);

#endif
