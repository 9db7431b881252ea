/* tprof report: the options it shares with tprof diff: -o FILE's
 * format, --top N, options with a value, and writing -o's file. */
#ifndef TP_CLI_REPORT_OPTS_H
#define TP_CLI_REPORT_OPTS_H

#include <stddef.h>

enum { RP_OUT_MD, RP_OUT_HTML, RP_OUT_JSON };

/* -o FILE's format, from its extension (.md, .markdown, .html, .htm,
 * .json); -1 when it says none. */
int rp_out_format(const char *path);
/* --top N: 1 to a million; 0, or -1 when s is not one. */
int rp_top_of(const char *s, size_t *top);
/* An option with a value: "--name VALUE", "--name=VALUE" or, with a
 * short name, "-o VALUE"; *i moves past what it took. NULL when argv[*i]
 * is not that option with a value. */
const char *rp_value_of(int argc, char **argv, int *i, const char *name,
			const char *shrt);
/* -o FILE and --top N for command cmd: 0, or -1 after one usage error
 * line saying what is wrong. */
int rp_opt_output(const char *cmd, const char *v, const char **out,
		  int *fmt);
int rp_opt_top(const char *cmd, const char *v, size_t *top);
/* b written to path next to it and renamed over it (a reader never sees
 * half a file, a failure leaves none): 0, or -1 after one line. */
struct tp_buf;
int rp_write_file(const char *path, const struct tp_buf *b);

#endif
