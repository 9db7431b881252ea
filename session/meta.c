/* session/: the run's session: configuration applied, the timeline
 * (ticks to trace time), metadata, how the run ended; on record/ and below. */
/* Metadata events of this process (see meta.h). */
#include <stdint.h>
#include <string.h>

#include "meta.h"
#include "session.h"
#include "encode/tev.h"

static void meta(struct tp_tev *ev, enum tp_tev_phase ph, pid_t tid,
		 const char *name, int64_t index)
{
	memset(ev, 0, sizeof(*ev));
	ev->track.kind = TP_TEV_THREAD;
	ev->track.pid = tp_sess.pid;
	ev->track.tid = tid;
	ev->phase = ph;
	if (name) {
		ev->name = name;
		ev->namelen = strlen(name);
	}
	ev->flow_id = (uint64_t)index;
}

void tp_meta_thread_name(struct tp_buf *b, pid_t tid, const char *name)
{
	struct tp_tev ev;

	meta(&ev, TP_TEV_THREAD_NAME, tid, name, 0);
	tp_tev_put(b, &ev);
}

void tp_meta_thread_sort(struct tp_buf *b, pid_t tid, int64_t index)
{
	struct tp_tev ev;

	meta(&ev, TP_TEV_THREAD_SORT_INDEX, tid, NULL, index);
	tp_tev_put(b, &ev);
}

void tp_meta_process(struct tp_buf *b, const char *name, int64_t index)
{
	struct tp_tev ev;

	meta(&ev, TP_TEV_PROCESS_NAME, 0, name, 0);
	if (!tp_tev_sink)
		tp_tev_json_first(b, &ev);
	else
		tp_enc_event_into(tp_tev_sink, b, &ev);
	meta(&ev, TP_TEV_SORT_INDEX, 0, NULL, index);
	tp_tev_put(b, &ev);
}
