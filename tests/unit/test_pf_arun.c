/* The Perfetto encoder's reuse of a stable run of annotations
 * (perfetto/perfetto_arun.c): its bytes are exactly those the run encodes
 * to without reuse, a new string behind the same address is not taken
 * for the old one, and a cleared interning state encodes the run anew.
 * Each case is encoded twice, by an encoder that reuses (stable range
 * set) and one that does not (range empty): the outputs must be equal
 * byte for byte. */
#include <stdlib.h>

#include "encode/tev.h"
#include "tp_test.h"

/* A kernel name as the writer caches it: JSON text at an address that
 * stays the same while its bytes may be replaced. */
static char kname[32];

static void launch(struct tp_targs *w, struct tp_tev *ev, uint32_t grid,
		   int stable)
{
	uint32_t g[3] = { grid, 1, 1 }, b[3] = { 256, 1, 1 };

	tp_targs_reset(w);
	tp_targs_int(w, "ret", 0);
	ev->stable_from = stable ? w->n : 0;
	tp_targs_json(w, "kernel", kname, strlen(kname));
	tp_targs_uint3(w, "grid", g);
	tp_targs_uint3(w, "block", b);
	tp_targs_uint(w, "shared memory", 0);
	tp_targs_ptr(w, "stream", 0x55d4c3a1f2b0ull);
	ev->stable_to = stable ? w->n : 0;
	ev->args = w->a;
	ev->nargs = w->n;
}

/* The whole sequence of events, with or without reuse. */
static void encode(struct tp_buf *out, int stable)
{
	static const uint32_t grids[] = { 64, 64, 128, 64, 128 };
	struct tp_enc *e = tp_enc_perfetto_new();
	struct tp_enc_meta m = { .trace_name = "t", .base_unix_ns = 1 };
	struct tp_targs *w = malloc(sizeof(*w));
	struct tp_tev ev = {
		.track.kind = TP_TEV_THREAD, .track.pid = 7, .track.tid = 7,
		.phase = TP_TEV_COMPLETE, .name = "cudaLaunchKernel",
		.namelen = 16, .cat = "cuda_runtime", .catlen = 12,
		.static_names = 1, .static_keys = 1,
	};
	struct tp_buf restart = { 0 };
	unsigned i;

	memset(out, 0, sizeof(*out));
	if (!e || !w)
		goto out;
	tp_enc_begin(e, &m);
	strcpy(kname, "\"k_one\"");
	for (i = 0; i < 5; i++) {
		ev.ts_ns = 1000 * i;
		ev.dur_ns = 500;
		launch(w, &ev, grids[i], stable);
		tp_enc_event(e, &ev);
	}
	/* The same address, another name of the same length. */
	strcpy(kname, "\"k_two\"");
	launch(w, &ev, 64, stable);
	ev.ts_ns = 6000;
	tp_enc_event(e, &ev);
	/* A cleared state: the run's iids are gone with it. */
	tp_enc_perfetto_restart(e, &restart);
	tp_buf_put(&e->out, restart.p, restart.len);
	ev.ts_ns = 7000;
	tp_enc_event(e, &ev);
	tp_buf_put(out, e->out.p, e->out.len);
out:
	tp_buf_free(&restart);
	free(w);
	if (e)
		tp_enc_free(e);
}

static size_t count(const struct tp_buf *b, const char *s)
{
	size_t n = 0, k = strlen(s), i;

	for (i = 0; i + k <= b->len; i++)
		n += !memcmp(b->p + i, s, k);
	return n;
}

int main(void)
{
	struct tp_buf plain, reused;

	encode(&plain, 0);
	encode(&reused, 1);
	TP_CHECK("arun: output made", plain.len > 0 && !plain.oom &&
		 !reused.oom, "len %zu", plain.len);
	TP_CHECK("arun: reused bytes equal the plain encoding",
		 plain.len == reused.len &&
		 !memcmp(plain.p, reused.p, plain.len),
		 "%zu vs %zu bytes", plain.len, reused.len);
	/* Interned once, then once more after the clear. */
	TP_CHECK_INT("arun: the first name interned once",
		     count(&reused, "k_one"), 1);
	TP_CHECK_INT("arun: the second name at the same address interned, "
		     "and again after the clear", count(&reused, "k_two"), 2);
	tp_buf_free(&plain);
	tp_buf_free(&reused);
	return TP_TEST_DONE();
}
