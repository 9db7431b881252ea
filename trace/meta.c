/* trace/: the recording core: records, per-thread rings, threads, clock and
 * timeline, configuration, JSON and gzip, file naming; calls no other
 * folder. */
/* Metadata events of this process (see meta.h). */
#include <stdint.h>

#include "meta.h"
#include "session.h"

void tp_meta_put(struct tp_buf *b, const char *what, pid_t tid,
		 const char *name)
{
	tp_buf_lit(b, "{\"ph\":\"M\",\"name\":\"");
	tp_buf_cstr(b, what);
	tp_buf_lit(b, "\",\"pid\":");
	tp_json_u64(b, (uint64_t)tp_sess.pid);
	tp_buf_lit(b, ",\"tid\":");
	tp_json_u64(b, (uint64_t)tid);
	tp_buf_lit(b, ",\"args\":{\"name\":");
	tp_json_str(b, name);
	tp_buf_lit(b, "}}");
}

void tp_meta_thread_name(struct tp_buf *b, pid_t tid, const char *name)
{
	tp_meta_put(b, "thread_name", tid, name);
}
