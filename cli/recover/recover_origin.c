/* tprof recover: the keys every recovered trace's trailer opens with;
 * see recover_origin.h. */
#include "encode/json.h"
#include "recover_origin.h"

void tp_recover_put_origin(struct tp_buf *b, int64_t rank, int64_t world,
			   int64_t pid, const char *run, const char *from)
{
	tp_buf_lit(b, "\"deviceProperties\": [],\n"
		   "\"distributedInfo\": {\"rank\": ");
	tp_json_i64(b, rank);
	tp_buf_lit(b, ", \"world_size\": ");
	tp_json_i64(b, world);
	tp_buf_lit(b, "},\n\"tprof\": {\"recovered\": true, \"pid\": ");
	tp_json_i64(b, pid);
	tp_buf_lit(b, ", \"run_id\": ");
	tp_json_str(b, run);
	tp_buf_lit(b, ", \"recovered_from\": ");
	tp_json_str(b, from);
}
