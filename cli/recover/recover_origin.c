/* tprof recover: the keys every recovered trace's trailer opens with;
 * see recover_origin.h. */
#include "encode/json.h"
#include "encode/tev.h"
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

void tp_recover_put_pf_trailer(struct tp_buf *b, const char *name,
			       int64_t base_ns, int64_t ts_ns,
			       const char *pairs, size_t len)
{
	struct tp_enc_meta m = { .trace_name = name, .base_unix_ns = base_ns,
				 .writer = 2, .trailer_ts_ns = ts_ns };
	struct tp_enc *e = tp_enc_perfetto_new();

	if (!e) {
		b->oom = 1;
		return;
	}
	tp_enc_begin(e, &m);
	tp_enc_trailer(e, pairs, len);
	tp_enc_end(e);
	tp_buf_put(b, e->out.p, e->out.len);
	if (e->out.oom)
		b->oom = 1;
	tp_enc_free(e);
}
