/* libFuzzer harness: `tprof merge` (cli/merge*.c) over arbitrary bytes:
 * one input trace, merged with a valid one into a plain JSON output,
 * which is removed after each run. */
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "cli/merge/merge.h"
#include "fuzz_file.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static const char other[] =
	"{\"traceEvents\":[{\"name\":\"cudaLaunchKernel\",\"ph\":\"X\","
	"\"ts\":1.000,\"dur\":2.000,\"pid\":7,\"tid\":7,\"cat\":\"cuda_runtime\"}],"
	"\"distributedInfo\":{\"rank\":1,\"world_size\":2}}";

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char in[4096], in2[4096], out[4096];
	const char *p;
	char *argv[6];

	p = fz_file("a-rank0.trace.json", data, size);
	if (!p)
		return 0;
	snprintf(in, sizeof(in), "%s", p);
	p = fz_file("b-rank1.trace.json", (const uint8_t *)other,
		    sizeof(other) - 1);
	if (!p)
		return 0;
	snprintf(in2, sizeof(in2), "%s", p);
	/* The output's name, registered for cleanup, then left free. */
	p = fz_file("merged.json", (const uint8_t *)"", 0);
	if (!p)
		return 0;
	snprintf(out, sizeof(out), "%s", p);
	unlink(out);
	argv[0] = "merge";
	argv[1] = in;
	argv[2] = in2;
	argv[3] = "-o";
	argv[4] = out;
	argv[5] = NULL;
	tp_cmd_merge(5, argv);
	unlink(out);
	return 0;
}
