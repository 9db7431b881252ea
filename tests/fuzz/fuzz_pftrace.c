/* libFuzzer harness: the Perfetto protobuf reader (cli/pftrace_*.c) over
 * arbitrary bytes, read from memory in small pieces (so that packets
 * straddle reads), and the JSON it hands out, which must be one valid
 * JSON document whenever the reader reports no error; then `tprof check`
 * and `report`'s reader on the bytes as a file (cli/read/gzread.c sniffs
 * them as Perfetto). */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/check/check.h"
#include "cli/read/json.h"
#include "cli/read/pftrace_read.h"
#include "cli/read/trace_summary.h"
#include "fuzz_file.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

struct mem {
	const uint8_t *p;
	size_t n, pos;
};

static ssize_t mem_read(void *ctx, void *buf, size_t len)
{
	struct mem *m = ctx;
	size_t k = m->n - m->pos;

	if (k > len)
		k = len;
	if (k > 7)	/* odd sizes: packets straddle reads */
		k = 7 + (m->pos % 13);
	if (k > m->n - m->pos)
		k = m->n - m->pos;
	memcpy(buf, m->p + m->pos, k);
	m->pos += k;
	return (ssize_t)k;
}

static void direct(const uint8_t *data, size_t size)
{
	struct mem m = { data, size, 0 };
	struct tp_pfr *r = tp_pfr_new(mem_read, &m);
	char *json = NULL, buf[4096];
	size_t len = 0, cap = 0;
	struct tp_json_arena a = { 0 };
	struct tp_json_node *root;
	ssize_t n;

	if (!r)
		return;
	while ((n = tp_pfr_read(r, buf, sizeof(buf))) > 0) {
		if (len + (size_t)n > cap) {
			cap = (len + (size_t)n) * 2;
			json = realloc(json, cap);
			if (!json)
				abort();
		}
		memcpy(json + len, buf, (size_t)n);
		len += (size_t)n;
	}
	for (int k = 0; k < PFR_NOTE_KINDS; k++)
		tp_pfr_note(r, k, buf, sizeof(buf));
	/* What the reader finishes without an error is valid JSON. */
	if (n == 0 && tp_json_parse_mem(json ? json : "", len, &a, &root,
					NULL))
		abort();
	tp_json_arena_free(&a);
	free(json);
	tp_pfr_free(r);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static FILE *devnull;
	struct tp_buf out = { 0 };
	const char *path;
	char err[256];

	direct(data, size);
	if (!devnull)
		devnull = fopen("/dev/null", "w");
	path = fz_file("in.pftrace", data, size);
	if (!path || !devnull)
		return 0;
	tp_check_file(path, TP_CHECK_FOREIGN, devnull);
	tp_trace_summary(path, &out, err, sizeof(err));
	tp_buf_free(&out);
	return 0;
}
