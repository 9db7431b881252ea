/* tprof report: what the host did while the GPU was idle, per rank, from
 * each summary's "host_activity" member (docs/reference/summary-format.md): the
 * top functions (native and Python) and blocking calls over the GPU's
 * idle intervals, as tables, an icicle of the stacks in the HTML, and a
 * finding per rank (report_host.c). */
#ifndef TP_CLI_REPORT_HOST_H
#define TP_CLI_REPORT_HOST_H

#include <stdint.h>

#include "report_data.h"

/* One call each from the Markdown, HTML and JSON outputs: nothing when
 * no rank has a "host_activity" member. */
void rp_host_md(const struct rp_report *rep, struct tp_buf *b);
void rp_host_html(const struct rp_report *rep, struct tp_buf *b);
void rp_host_json(const struct rp_report *rep, struct tp_buf *b);

/* What a finding about one rank says: its GPU idle share and where the
 * host's time went meanwhile, as shares of the idle time (CPU samples
 * of a function, time blocked in a call, over all threads). */
struct rp_host_finding {
	const char *rank;		/* the rank's label */
	double idle_share;		/* GPU idle / its span, 0..1 */
	int64_t idle_ns, host_ns;	/* host_ns: sampled + blocked */
	const char *function;		/* the top one, or NULL */
	int python;			/* it is a Python function */
	const char *file;		/* Python: its file, or NULL */
	int64_t line;			/* Python: its line, or 0 */
	double function_share;		/* of idle_ns */
	const char *blocking;		/* the top blocking call, or NULL */
	const char *blocking_file;	/* its file, or NULL */
	double blocking_share;		/* of idle_ns */
};

/* The finding for entry e: 1 when the rank has GPU idle time and host
 * data over it, else 0. The strings live as long as the report. */
int rp_host_finding(const struct rp_report *rep, size_t e,
		    struct rp_host_finding *f);
/* Its one-line text: "rank 2: GPU idle 67 % of its span; during it the
 * host spent 45 % in decode (Python, Image.py:12) and 20 % blocked in
 * read on /data/x". */
void rp_host_finding_text(const struct rp_host_finding *f, char *buf,
			  size_t len);

#endif
