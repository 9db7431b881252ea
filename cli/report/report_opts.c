/* tprof report: the options it shares with tprof diff (report_opts.h).
 * Calls nothing of tprof's. */
#include "cli/usage/usage.h"
#include "encode/json.h"
#include "files/atomic_file.h"
#include "report_input.h"
#include "report_opts.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

/* -o FILE's format, from its extension; -1 when it says none. */
int rp_out_format(const char *path)
{
	static const struct {
		const char *ext;
		int fmt;
	} ext[] = {
		{ ".md", RP_OUT_MD }, { ".markdown", RP_OUT_MD },
		{ ".html", RP_OUT_HTML }, { ".htm", RP_OUT_HTML },
		{ ".json", RP_OUT_JSON },
	};
	size_t n = strlen(path), i, k;

	for (i = 0; i < sizeof(ext) / sizeof(ext[0]); i++) {
		k = strlen(ext[i].ext);
		if (n > k && !strcasecmp(path + n - k, ext[i].ext))
			return ext[i].fmt;
	}
	return -1;
}

/* --top N: 1 to a million. */
int rp_top_of(const char *s, size_t *top)
{
	char *end;
	long v;

	errno = 0;
	v = strtol(s, &end, 10);
	if (errno || end == s || *end || v < 1 || v > 1000000)
		return -1;
	*top = (size_t)v;
	return 0;
}

/* An option with a value: "--name VALUE", "--name=VALUE" or, with a
 * short name, "-o VALUE"; *i moves past what it took. */
const char *rp_value_of(int argc, char **argv, int *i, const char *name,
			    const char *shrt)
{
	const char *a = argv[*i];
	size_t n = strlen(name);

	if ((!strcmp(a, name) || (shrt && !strcmp(a, shrt))) &&
	    *i + 1 < argc)
		return argv[++*i];
	if (!strncmp(a, name, n) && a[n] == '=' && a[n + 1])
		return a + n + 1;
	return NULL;
}

int rp_opt_output(const char *cmd, const char *v, const char **out, int *fmt)
{
	*out = v;
	*fmt = rp_out_format(v);
	if (*fmt >= 0)
		return 0;
	tp_usage_error(cmd, "-o %s: the extension says no format (.md, "
		       ".html or .json)", v);
	return -1;
}

int rp_opt_top(const char *cmd, const char *v, size_t *top)
{
	if (!rp_top_of(v, top))
		return 0;
	tp_usage_error(cmd, "--top %s: not a number from 1 to 1000000", v);
	return -1;
}

int rp_write_file(const char *path, const struct tp_buf *b)
{
	if (tp_write_file_atomic(path, b->p, b->len) < 0)
		return rp_fail(path, "cannot write: %s",
			       tp_out_strerror(errno));
	return 0;
}
