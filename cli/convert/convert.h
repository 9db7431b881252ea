/* tprof convert: a JSON(.gz) trace (tprof's, or torch.profiler's Kineto
 * trace) or a Perfetto protobuf one (read as JSON by pftrace_read.c) to
 * Perfetto protobuf (.pftrace, .pftrace.gz) or JSON, streamed through the
 * typed event model (encode/tev.h). */
#ifndef TP_CLI_CONVERT_H
#define TP_CLI_CONVERT_H

int tp_cmd_convert(int argc, char **argv);

/* IN to OUT, the format by OUT's suffix (.pftrace[.gz], else JSON; .gz
 * gzipped at gzip_level, 1 to 9). 0, or 1 with one line on stderr and
 * no OUT. quiet: no "converted" line. `tprof merge` uses it for
 * Perfetto output. */
int tp_convert_file(const char *in, const char *out, int gzip_level,
		    int quiet);

/* --gzip-level N or --gzip-level=N at argv[*i] (convert's and merge's
 * option): 1 and *level set (*i past the value), 0 if argv[*i] is not
 * it, -1 with cmd's usage error line on stderr if its value is not 1
 * to 9. */
int tp_gzip_level_opt(const char *cmd, int argc, char **argv, int *i,
		      int *level);

#endif
