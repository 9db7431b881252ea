/* libFuzzer harness: `tprof report`'s readers over arbitrary bytes: the
 * same file read as a trace (cli/read/trace_summary.c: streamed, folded by the
 * preload's aggregator, GPU analyses) and as a summary.json
 * (cli/report/report_input.c, cli/report/report_summary.c). */
#include <stdint.h>
#include <stdlib.h>

#include "cli/report/report_data.h"
#include "cli/report/report_input.h"
#include "fuzz_file.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const char *names[] = { "in-rank0.trace.json",
				       "in-rank0.summary.json" };

	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		const char *path = fz_file(names[i], data, size);
		struct rp_rank *r;
		char err[512];

		if (!path)
			continue;
		r = rp_read_input(path, err, sizeof(err));
		if (r)
			rp_rank_free(r);
	}
	return 0;
}
