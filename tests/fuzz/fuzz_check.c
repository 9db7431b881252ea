/* libFuzzer harness: the CLI's JSON reader (cli/read/json.c, the DOM and the
 * pull parser) and `tprof check` (cli/check/check.c) over arbitrary bytes, in
 * tprof's own mode and --foreign. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "cli/check/check.h"
#include "cli/read/json.h"
#include "fuzz_file.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void walk(const uint8_t *data, size_t size)
{
	struct tp_json *j = tp_json_open_mem(data, size);
	struct tp_json_arena a = { 0 };
	struct tp_json_node *n;
	int tok;

	if (!j)
		return;
	/* A DOM per value of the top-level container, as check does. */
	tok = tp_json_next(j);
	if (tok == TP_JSON_ARRAY || tok == TP_JSON_OBJECT) {
		while ((tok = tp_json_next(j)) > 0 &&
		       tok != TP_JSON_ARRAY_END && tok != TP_JSON_OBJECT_END) {
			if (tok == TP_JSON_KEY)
				continue;
			if (tp_json_build(j, tok, &a, &n))
				break;
			tp_json_arena_reset(&a);
		}
	}
	tp_json_close(j);
	tp_json_arena_free(&a);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static FILE *devnull;
	struct tp_json_arena a = { 0 };
	struct tp_json_node *root;
	struct tp_json_err err;
	const char *path;
	int64_t v;

	if (!tp_json_parse_mem(data, size, &a, &root, &err) &&
	    root->type == TP_JSON_OBJECT) {
		const struct tp_json_node *ev = tp_json_get(root, "traceEvents");

		for (const struct tp_json_node *c = ev ? ev->child : NULL; c;
		     c = c->next)
			tp_json_int64(tp_json_get(c, "pid"), &v);
	}
	tp_json_arena_free(&a);
	walk(data, size);

	if (!devnull)
		devnull = fopen("/dev/null", "w");
	path = fz_file("in.trace.json", data, size);
	if (path && devnull) {
		tp_check_file(path, 0, devnull);
		tp_check_file(path, TP_CHECK_FOREIGN, devnull);
	}
	return 0;
}
