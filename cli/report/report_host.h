/* tprof report: what the host did while the GPU was idle, per rank, from
 * each summary's "host_activity" member (docs/reference/summary-format.md,
 * read by report_host_read.c into struct rp_host): the top functions
 * (native and Python) and blocking calls over the GPU's idle intervals,
 * as rows the Markdown, JSON and HTML outputs share (report_host.c); the
 * HTML's icicle is html/report_icicle.c, the finding
 * findings/rule_host_idle.c.
 */
#ifndef TP_CLI_REPORT_HOST_H
#define TP_CLI_REPORT_HOST_H

#include <stdint.h>

#include "report_data.h"

/* report_host_read.c: the member (NULL or null: none) into h, copied
 * out of the tree. 0, or -1 with a message in err. */
int rp_host_read(struct rp_host *h, const struct tp_json_node *member,
		 char *err, size_t errlen);
void rp_host_free(struct rp_host *h);

/* Whether any rank has the member. */
int rp_host_any(const struct rp_report *rep);

/* One row of the section: rank, kind ("Python", "native", "blocked"),
 * what, its time and its share of the idle time (of the wall time for
 * a rank without GPU activity). */
struct rp_hrow {
	const char *rank, *kind;
	char what[640];
	int64_t ns;
	double share;
};

/* Calls fn for each of rank r's rows: its top Python functions, native
 * functions, then blocking calls, RP_HOST_ROWS of each at most. */
#define RP_HOST_ROWS 10
void rp_host_rows(const struct rp_rank *r,
		  void (*fn)(const struct rp_hrow *row, void *ctx), void *ctx);
/* "rank 0: GPU idle 1.2 s of 3.4 s (35.3 %); meanwhile CPU samples
 * 800 ms, blocked 120 ms", or the run's figures without GPU activity. */
void rp_host_rank_line(const struct rp_rank *r, char *buf, size_t len);
/* A function as shown: "decode (Image.py:12)" for Python, else its
 * name ("f (lib.so)"). */
void rp_host_fn_label(const struct rp_hfn *f, char *buf, size_t len);
/* A blocking call as shown: "read on pipe:[123]", or "nanosleep". */
void rp_host_call_label(const struct rp_hcall *c, char *buf, size_t len);

/* The section, appended to b: the Markdown's nothing when no rank has
 * the member, the JSON's "host" member an empty list. */
void rp_host_md(const struct rp_report *rep, struct tp_buf *b);
void rp_host_json(const struct rp_report *rep, struct tp_buf *b);

#endif
