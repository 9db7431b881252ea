/* The flight recorder's trim of a Perfetto chunk (perfetto/perfetto_trim.c):
 * events encoded with absolute timestamps, trimmed at a cut; the complete
 * slices that ended before it are gone, everything else is there in
 * order, and every interned name an event uses is still defined before
 * it (the first use of a name was in a slice left out). */
#include <stdlib.h>
#include <string.h>

#include "perfetto/pb_read.h"
#include "perfetto/perfetto_ids.h"
#include "encode/tev.h"
#include "tp_test.h"

static void put(struct tp_enc *e, int phase, const char *name, int64_t ts,
		int64_t dur)
{
	struct tp_tev ev;

	memset(&ev, 0, sizeof(ev));
	ev.track.kind = TP_TEV_THREAD;
	ev.track.pid = 7;
	ev.track.tid = 8;
	ev.phase = phase;
	ev.name = name;
	ev.namelen = strlen(name);
	ev.cat = "cuda";
	ev.catlen = 4;
	ev.ts_ns = ts;
	ev.dur_ns = dur;
	tp_enc_event(e, &ev);
}

struct seen {
	char out[256];		/* "type@ts=name " for each event */
	int undefined;		/* events naming an iid not defined */
};

/* Names interned so far, by iid (small: this test's). */
static const char *names[16];

static void interned(const unsigned char *p, const unsigned char *e)
{
	const unsigned char *b, *q, *qe, *x, *s = NULL;
	uint64_t v, y, iid = 0;
	uint32_t f;
	unsigned w;

	while (p < e && tp_pb_get_field(&p, e, &f, &w, &v, &b) == 0) {
		if (f != PF_ID_EVENT_NAMES)
			continue;
		for (q = b, qe = b + v; q < qe &&
		     tp_pb_get_field(&q, qe, &f, &w, &y, &x) == 0;)
			if (f == PF_INTERNED_IID)
				iid = y;
			else if (f == PF_INTERNED_NAME)
				s = x, v = y;
		if (iid < 16 && s)
			names[iid] = strndup((const char *)s, v);
	}
}

static void event(struct seen *sn, uint64_t ts, const unsigned char *p,
		  const unsigned char *e)
{
	const unsigned char *b;
	uint64_t v, type = 0, iid = 0;
	uint32_t f;
	unsigned w;
	size_t n = strlen(sn->out);

	while (p < e && tp_pb_get_field(&p, e, &f, &w, &v, &b) == 0)
		if (f == PF_TE_TYPE)
			type = v;
		else if (f == PF_TE_NAME_IID)
			iid = v;
	if (iid && (iid >= 16 || !names[iid]))
		sn->undefined++;
	snprintf(sn->out + n, sizeof(sn->out) - n, "%llu@%llu=%s ",
		 (unsigned long long)type, (unsigned long long)ts,
		 iid && iid < 16 && names[iid] ? names[iid] : "-");
}

static void walk(const char *buf, size_t len, struct seen *sn)
{
	const unsigned char *p = (const unsigned char *)buf, *e = p + len;
	const unsigned char *b, *q, *qe, *x, *te;
	uint64_t v, y, ts, telen;
	uint32_t f;
	unsigned w;

	for (f = 0; f < 16; f++) {
		free((char *)names[f]);
		names[f] = NULL;
	}
	while (p < e && tp_pb_get_field(&p, e, &f, &w, &v, &b) == 0) {
		ts = 0;
		te = NULL;
		telen = 0;
		for (q = b, qe = b + v; q < qe &&
		     tp_pb_get_field(&q, qe, &f, &w, &y, &x) == 0;) {
			if (f == PF_PKT_TIMESTAMP)
				ts = y;
			else if (f == PF_PKT_INTERNED_DATA)
				interned(x, x + y);
			else if (f == PF_PKT_TRACK_EVENT)
				te = x, telen = y;
		}
		if (te)
			event(sn, ts, te, te + telen);
	}
}

static void trim_window(void)
{
	struct tp_enc_meta m = { .trace_name = "t", .base_unix_ns = 1000,
				 .absolute_ts = 1 };
	struct tp_enc *e = tp_enc_perfetto_new();
	struct seen all, kept;
	uint64_t left = 0;
	size_t len;

	if (!e) {
		TP_CHECK("pf_trim: encoder", 0, "no memory");
		return;
	}
	tp_enc_begin(e, &m);
	put(e, TP_TEV_INSTANT, "i", 50, 0);
	put(e, TP_TEV_COMPLETE, "a", 100, 100);		/* out */
	put(e, TP_TEV_COMPLETE, "b", 300, 100);		/* out */
	put(e, TP_TEV_COMPLETE, "a", 900, 600);		/* ends after */
	put(e, TP_TEV_COMPLETE, "b", 999, 1);		/* ends at the cut */
	put(e, TP_TEV_COMPLETE, "c", 2000, 100);
	memset(&all, 0, sizeof(all));
	walk(e->out.p, e->out.len, &all);
	TP_CHECK_STR("pf_trim: the chunk as encoded", all.out,
		     "3@50=i 1@100=a 2@200=- 1@300=b 2@400=- 1@900=a "
		     "2@1500=- 1@999=b 2@1000=- 1@2000=c 2@2100=- ");
	len = tp_pf_trim(e->out.p, e->out.len, 1000, &left);
	memset(&kept, 0, sizeof(kept));
	walk(e->out.p, len, &kept);
	TP_CHECK_STR("pf_trim: slices that ended before the cut left out, "
		     "the rest in order", kept.out,
		     "3@50=i 1@900=a 2@1500=- 1@999=b 2@1000=- 1@2000=c "
		     "2@2100=- ");
	TP_CHECK_INT("pf_trim: the left-out count", (int)left, 2);
	TP_CHECK_INT("pf_trim: every name still defined", kept.undefined, 0);
	TP_CHECK("pf_trim: shorter", len < e->out.len, "%zu", len);
	left = 0;
	TP_CHECK_INT("pf_trim: a cut before everything keeps all",
		     (int)tp_pf_trim(e->out.p, len, 0, &left), (int)len);
	tp_enc_free(e);
	walk(NULL, 0, &kept);	/* frees the names */
}

int main(void)
{
	trim_window();
	return TP_TEST_DONE();
}
