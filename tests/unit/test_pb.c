/* Protobuf wire helpers (perfetto/pb.h), the typed args writer and the JSON
 * encoder (encode/tev.h): exact bytes, edge cases of varints and of
 * nested lengths that outgrow their one-byte placeholder. */
#include <stdlib.h>

#include "perfetto/pb.h"
#include "encode/tev.h"
#include "tp_test.h"

static int bytes_eq(const struct tp_buf *b, const unsigned char *want,
		    size_t n)
{
	return b->len == n && !memcmp(b->p, want, n);
}

static void varints(void)
{
	static const struct {
		uint64_t v;
		size_t n;
		unsigned char b[10];
	} c[] = {
		{ 0, 1, { 0 } },
		{ 1, 1, { 1 } },
		{ 127, 1, { 0x7f } },
		{ 128, 2, { 0x80, 0x01 } },
		{ 300, 2, { 0xac, 0x02 } },
		{ 16383, 2, { 0xff, 0x7f } },
		{ 16384, 3, { 0x80, 0x80, 0x01 } },
		{ UINT32_MAX, 5, { 0xff, 0xff, 0xff, 0xff, 0x0f } },
		{ UINT64_MAX, 10, { 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff,
				    0xff, 0xff, 0x01 } },
	};
	char name[64];
	size_t i;

	for (i = 0; i < sizeof(c) / sizeof(c[0]); i++) {
		struct tp_buf b = { 0 };

		tp_pb_varint(&b, c[i].v);
		snprintf(name, sizeof(name), "pb_varint_%zu", i);
		TP_CHECK(name, bytes_eq(&b, c[i].b, c[i].n) &&
			 tp_pb_varint_len(c[i].v) == c[i].n,
			 "%" PRIu64 ": %zu bytes", c[i].v, b.len);
		tp_buf_free(&b);
	}
}

static void fields(void)
{
	/* int64 -1: ten bytes, as protobuf's int64 (not sint64) encodes. */
	static const unsigned char neg[] = { 0x20, 0xff, 0xff, 0xff, 0xff,
		0xff, 0xff, 0xff, 0xff, 0xff, 0x01 };
	/* field 47 (flow_ids), fixed64 1000: tag 47<<3|1 = 377. */
	static const unsigned char fix[] = { 0xf9, 0x02, 0xe8, 0x03, 0, 0, 0,
		0, 0, 0 };
	/* double 1.0 in field 44. */
	static const unsigned char dbl[] = { 0xe1, 0x02, 0, 0, 0, 0, 0, 0,
		0xf0, 0x3f };
	struct tp_buf b = { 0 };

	tp_pb_i64(&b, 4, -1);
	TP_CHECK("pb_int64_negative", bytes_eq(&b, neg, sizeof(neg)),
		 "%zu bytes", b.len);
	b.len = 0;
	tp_pb_fixed64(&b, 47, 1000);
	TP_CHECK("pb_fixed64", bytes_eq(&b, fix, sizeof(fix)), "%zu bytes",
		 b.len);
	b.len = 0;
	tp_pb_double(&b, 44, 1.0);
	TP_CHECK("pb_double", bytes_eq(&b, dbl, sizeof(dbl)), "%zu bytes",
		 b.len);
	tp_buf_free(&b);
}

/* A nested message of body bytes: its length prefix must be the varint
 * of body, the body intact after it, whatever its size. */
static void nested(size_t body, const char *name)
{
	struct tp_buf b = { 0 };
	size_t m, i, hdr;
	int ok = 1;

	tp_buf_char(&b, 'x');
	m = tp_pb_open(&b, 1);
	for (i = 0; i < body; i++)
		tp_buf_char(&b, (char)(i * 7));
	tp_pb_close(&b, m);
	tp_buf_char(&b, 'y');
	hdr = tp_pb_varint_len(body);
	ok = b.len == 1 + 1 + hdr + body + 1 && b.p[0] == 'x' &&
	     b.p[1] == 0x0a && b.p[b.len - 1] == 'y';
	for (i = 0; ok && i < body; i++)
		ok = b.p[2 + hdr + i] == (char)(i * 7);
	if (ok) {
		uint64_t v = 0;
		size_t k;

		for (k = 0; k < hdr; k++)
			v |= (uint64_t)((unsigned char)b.p[2 + k] & 0x7f) <<
			     (7 * k);
		ok = v == body;
	}
	TP_CHECK(name, ok, "body %zu: %zu bytes", body, b.len);
	tp_buf_free(&b);
}

static void nesting_twice(void)
{
	/* An inner message that grows its prefix inside an outer one that
	 * must grow too. */
	struct tp_buf b = { 0 };
	size_t o, in, i;

	o = tp_pb_open(&b, 1);
	in = tp_pb_open(&b, 2);
	for (i = 0; i < 200; i++)
		tp_buf_char(&b, 'a');
	tp_pb_close(&b, in);
	tp_pb_close(&b, o);
	/* outer: tag, len(203) = 2 bytes; inner: tag, len(200) = 2 bytes. */
	TP_CHECK("pb_nested_grow_twice", b.len == 1 + 2 + 1 + 2 + 200 &&
		 (unsigned char)b.p[1] == 0xcb && b.p[2] == 0x01 &&
		 b.p[3] == 0x12 && (unsigned char)b.p[4] == 0xc8 &&
		 b.p[5] == 0x01, "%zu bytes", b.len);
	tp_buf_free(&b);
}

static void args_writer(void)
{
	struct tp_targs *w = calloc(1, sizeof(*w));
	int i;

	tp_targs_int(w, "a", 1);
	tp_targs_open(w, "grid", 0);
	tp_targs_int(w, NULL, 64);
	tp_targs_int(w, NULL, 2);
	tp_targs_close(w);
	tp_targs_str(w, "s", "x", 1);
	TP_CHECK("targs_nested", w->n == 5 && w->a[1].v.n == 2 &&
		 tp_targ_span(w->a, w->n, 1) == 3 &&
		 tp_targ_span(w->a, w->n, 0) == 1 && !w->overflow,
		 "n %u", w->n);
	/* Nine levels: the ninth is dropped with what it holds, and its
	 * close pops only itself. */
	tp_targs_reset(w);
	for (i = 0; i < 9; i++)
		tp_targs_open(w, "d", 1);
	tp_targs_int(w, "deep", 1);
	for (i = 0; i < 9; i++)
		tp_targs_close(w);
	tp_targs_int(w, "after", 2);
	TP_CHECK("targs_too_deep", w->overflow && w->n == 9 &&
		 w->a[7].v.n == 0 && w->a[8].type == TP_TARG_INT &&
		 w->a[8].v.i == 2 && w->depth == 0, "n %u", w->n);
	tp_targs_reset(w);
	for (i = 0; i < TP_TARGS_MAX + 5; i++)
		tp_targs_int(w, "k", i);
	TP_CHECK("targs_full", w->overflow && w->n == TP_TARGS_MAX, "n %u",
		 w->n);
	free(w);
}

/* The JSON encoder writes the writer's launch line byte for byte. */
static void json_launch(void)
{
	static const char want[] =
		"{\"ph\":\"X\",\"cat\":\"cuda_runtime\",\"name\":"
		"\"cudaLaunchKernel\",\"pid\":29802,\"tid\":29802,"
		"\"ts\":79507282431.699,\"dur\":0.814,\"args\":{\"ret\":0,"
		"\"kernel\":\"void k<\\\"q\\\">\",\"grid\":[64,128,1],"
		"\"shared memory\":49152,\"stream\":\"0x55d4c3a1f2b0\","
		"\"flops\":340282366920938463463374607431768211455}}";
	struct tp_targs *w = calloc(1, sizeof(*w));
	struct tp_enc *e = tp_enc_json_new();
	struct tp_tev ev = { 0 };

	tp_targs_int(w, "ret", 0);
	tp_targs_str(w, "kernel", "void k<\"q\">", 11);
	tp_targs_open(w, "grid", 0);
	tp_targs_int(w, NULL, 64);
	tp_targs_int(w, NULL, 128);
	tp_targs_int(w, NULL, 1);
	tp_targs_close(w);
	tp_targs_int(w, "shared memory", 49152);
	tp_targs_ptr(w, "stream", 0x55d4c3a1f2b0ull);
	tp_targs_u128(w, "flops", ~(unsigned __int128)0);
	ev.track.pid = ev.track.tid = 29802;
	ev.phase = TP_TEV_COMPLETE;
	ev.name = "cudaLaunchKernel";
	ev.namelen = 16;
	ev.cat = "cuda_runtime";
	ev.catlen = 12;
	ev.ts_ns = 79507282431699;
	ev.dur_ns = 814;
	ev.args = w->a;
	ev.nargs = w->n;
	tp_enc_event(e, &ev);
	tp_buf_char(&e->out, 0);
	TP_CHECK_STR("tev_json_launch", e->out.p, want);
	tp_enc_free(e);
	free(w);
}

/* Every kind of arg, nested, dropped and cut: what tp_tev_json_open and
 * _close stream must be what tp_tev_json_put writes from the array. */
static void stream_args(struct tp_targs *w, int kind)
{
	static const uint32_t dim[3] = { 4294967295u, 0, 10 };
	int i;

	switch (kind) {
	case 0:		/* none */
		return;
	case 1:		/* every type, nested */
		tp_targs_int(w, "ret", -3);
		tp_targs_uint(w, "correlation", 18446744073709551615ull);
		tp_targs_json(w, "kernel", "\"k<1>\"", 6);
		tp_targs_uint3(w, "grid", dim);
		tp_targs_cstr(w, "s", "a\"b\n");
		tp_targs_bool(w, "b", 1);
		tp_targs_double(w, "d", 0.25);
		tp_targs_milli(w, "m", -12345);
		tp_targs_u128(w, "flops", ~(unsigned __int128)0);
		tp_targs_ptr(w, "stream", 0);
		tp_targs_open(w, "dict", 1);
		tp_targs_uint3(w, "in", dim);
		tp_targs_open(w, "arr", 0);
		tp_targs_open(w, NULL, 0);
		tp_targs_close(w);
		tp_targs_str(w, NULL, "x", 1);
		tp_targs_close(w);
		tp_targs_open(w, "empty", 1);
		tp_targs_close(w);
		tp_targs_int3(w, "in3", 7, 0, 2147483647);
		tp_targs_close(w);
		tp_targs_int3(w, "g3", 64, 128, 1);
		tp_targs_int3(w, "neg3", 1, -2147483647 - 1, 3);
		tp_targs_int(w, "last", 0);
		return;
	case 2:		/* nine levels: the ninth dropped */
		for (i = 0; i < 9; i++)
			tp_targs_open(w, "d", i & 1);
		tp_targs_int(w, "deep", 1);
		for (i = 0; i < 9; i++)
			tp_targs_close(w);
		tp_targs_int(w, "after", 2);
		return;
	default:	/* full: a dim3 that does not fit, a dropped array */
		for (i = 0; i < TP_TARGS_MAX - 6; i++)
			tp_targs_int(w, "k", i);
		tp_targs_uint3(w, "grid", dim);
		tp_targs_int3(w, "block", 1, 2, 3);
		tp_targs_open(w, "late", 0);
		tp_targs_int(w, NULL, 1);
		tp_targs_close(w);
		tp_targs_int(w, "cut", 1);
		return;
	}
}

static void json_streamed(void)
{
	struct tp_targs *w = calloc(1, sizeof(*w));
	struct tp_buf a = { 0 }, b = { 0 };
	struct tp_tev ev = { 0 };
	char name[64];
	int kind, always;

	ev.track.pid = 7;
	ev.track.tid = 8;
	ev.phase = TP_TEV_COMPLETE;
	ev.name = "cudaLaunchKernel";
	ev.namelen = 16;
	ev.cat = "cuda_runtime";
	ev.catlen = 12;
	ev.ts_ns = 79507282431699;
	ev.dur_ns = 814;
	ev.static_keys = 1;
	for (kind = 0; kind < 4; kind++)
		for (always = 0; always < 2; always++) {
			a.len = b.len = 0;
			ev.args_always = always;
			tp_targs_reset(w);
			stream_args(w, kind);
			ev.args = w->a;
			ev.nargs = w->n;
			tp_tev_json_put(&a, &ev);
			tp_buf_char(&a, 0);
			tp_targs_reset(w);
			tp_tev_json_open(&b, &ev, w);
			stream_args(w, kind);
			tp_tev_json_close(&b, &ev, w);
			tp_buf_char(&b, 0);
			snprintf(name, sizeof(name), "tev_json_streamed_%d_%d",
				 kind, always);
			TP_CHECK_STR(name, b.p, a.p);
		}
	tp_buf_free(&a);
	tp_buf_free(&b);
	free(w);
}

/* tp_targs_int3 stores and streams what open, three tp_targs_int and
 * close do, at the top level, nested, with negative values and near a
 * full writer. */
static void int3(void)
{
	static const int32_t v[][3] = {
		{ 264, 1, 1 }, { 0, 2147483647, 9 }, { -1, 5, 6 },
		{ 1, -2147483647 - 1, 0 },
	};
	struct tp_targs *a = calloc(1, sizeof(*a)), *b = calloc(1, sizeof(*b));
	struct tp_buf ja = { 0 }, jb = { 0 };
	char name[64];
	size_t i;
	int where, k, same;

	for (i = 0; i < sizeof(v) / sizeof(v[0]); i++)
		for (where = 0; where < 3; where++) {
			ja.len = jb.len = 0;
			tp_targs_reset(a);
			tp_targs_reset(b);
			a->json = &ja;
			b->json = &jb;
			a->jseen = a->jarr = b->jseen = b->jarr = 0;
			/* 1: inside a dict; 2: four entries left. */
			for (k = 0; where == 2 && k < TP_TARGS_MAX - 4; k++) {
				tp_targs_int(a, "f", k);
				tp_targs_int(b, "f", k);
			}
			if (where == 1) {
				tp_targs_open(a, "d", 1);
				tp_targs_open(b, "d", 1);
			}
			tp_targs_open(a, "grid", 0);
			tp_targs_int(a, NULL, v[i][0]);
			tp_targs_int(a, NULL, v[i][1]);
			tp_targs_int(a, NULL, v[i][2]);
			tp_targs_close(a);
			tp_targs_int3(b, "grid", v[i][0], v[i][1], v[i][2]);
			tp_targs_close(a);
			tp_targs_close(b);
			tp_targs_int(a, "after", 1);
			tp_targs_int(b, "after", 1);
			same = a->n == b->n && a->overflow == b->overflow;
			for (k = 0; same && k < (int)a->n; k++)
				same = a->a[k].type == b->a[k].type &&
				       a->a[k].keylen == b->a[k].keylen &&
				       (a->a[k].type == TP_TARG_ARRAY ||
					a->a[k].type == TP_TARG_DICT ?
					a->a[k].v.n == b->a[k].v.n :
					a->a[k].v.i == b->a[k].v.i);
			snprintf(name, sizeof(name), "targs_int3_%zu_%d", i,
				 where);
			tp_buf_char(&ja, 0);
			tp_buf_char(&jb, 0);
			TP_CHECK(name, same && !strcmp(ja.p, jb.p),
				 "entries %s, json \"%s\" want \"%s\"",
				 same ? "same" : "differ", jb.p, ja.p);
		}
	tp_buf_free(&ja);
	tp_buf_free(&jb);
	free(a);
	free(b);
}

/* Event heads and tracks as the JSON encoder keeps them: names copied
 * as they are (plain_names), escaped or kept (static_names), the
 * tracks' text from its caches, against each event printed independently, over tracks that
 * alternate and collide (more than the cache's slots) and every phase
 * a slice or flow has. */
static void json_heads_tracks(void)
{
	static const int64_t ids[] = {
		0, 1, 7, 8, 15, 100, 29802, -1, 4294967295ll,
		INT64_MAX, INT64_MIN + 1,
	};
	static const char *const ph = "XisfCbe";
	struct tp_buf b = { 0 };
	struct tp_tev ev = { 0 };
	char want[512], name[64];
	uint64_t rng = 88172645463325252ull;
	int i, bad = 0, n;

	for (i = 0; i < 3000 && !bad; i++) {
		int64_t pid, tid;
		int p;

		rng ^= rng << 13;
		rng ^= rng >> 7;
		rng ^= rng << 17;
		pid = ids[rng % 11];
		tid = ids[(rng >> 8) % 11];
		/* The encoder's first tracks: -1, -1 (once its sentinel,
		 * written as nothing) and 0, 0 (its initial track). */
		if (i < 2)
			pid = tid = i - 1;
		p = (int)((rng >> 16) % 7);
		memset(&ev, 0, sizeof(ev));
		ev.track.pid = pid;
		ev.track.tid = tid;
		ev.phase = p == 0 ? TP_TEV_COMPLETE : p == 1 ? TP_TEV_INSTANT :
			   p == 2 ? TP_TEV_FLOW_START : p == 3 ?
			   TP_TEV_FLOW_END : p == 4 ? TP_TEV_COUNTER_SET :
			   p == 5 ? TP_TEV_ASYNC_BEGIN : TP_TEV_ASYNC_END;
		ev.track.kind = p == 4 ? TP_TEV_COUNTER : p >= 5 ?
				TP_TEV_ASYNC : TP_TEV_THREAD;
		ev.plain_names = (int)(rng >> 24) & 1;
		ev.flow_binds_enclosing = p == 3 && (rng >> 25 & 1);
		ev.cat = (rng >> 26 & 3) ? "gpu_memcpy" : NULL;
		ev.catlen = ev.cat ? 10 : 0;
		if (rng >> 28 & 1) {
			ev.name_json = "\"k<\\\"q\\\">\"";
			ev.name_json_len = strlen(ev.name_json);
		}
		ev.name = "Memcpy HtoD (Pinned -> Device)";
		ev.namelen = strlen(ev.name);
		/* The head cache's key is the name's address: the writer's
		 * static names have no name_json. */
		ev.static_names = (rng >> 29 & 1) && !ev.name_json;
		ev.ts_ns = (int64_t)(rng >> 30);
		ev.dur_ns = 1001;
		ev.flow_id = ev.track.id = rng >> 40;
		b.len = 0;
		tp_tev_json_put(&b, &ev);
		tp_buf_char(&b, 0);
		n = snprintf(want, sizeof(want), ",\n{\"ph\":\"%c\"%s", ph[p],
			     ev.flow_binds_enclosing ? ",\"bp\":\"e\"" : "");
		if (ev.cat)
			n += snprintf(want + n, sizeof(want) - (size_t)n,
				      ",\"cat\":\"%s\"", ev.cat);
		n += snprintf(want + n, sizeof(want) - (size_t)n,
			      ",\"name\":%s%s%s", ev.name_json ? "" : "\"",
			      ev.name_json ? ev.name_json : ev.name,
			      ev.name_json ? "" : "\"");
		if (p >= 2 && p != 4)	/* flows and async ranges */
			n += snprintf(want + n, sizeof(want) - (size_t)n,
				      ",\"id\":%" PRIu64, rng >> 40);
		n += snprintf(want + n, sizeof(want) - (size_t)n,
			      ",\"pid\":%" PRId64 ",\"tid\":%" PRId64
			      ",\"ts\":%" PRId64 ".%03" PRId64, pid,
			      p == 4 && tid < 0 ? 0 : tid, ev.ts_ns / 1000,
			      ev.ts_ns % 1000);
		if (p == 0)
			n += snprintf(want + n, sizeof(want) - (size_t)n,
				      ",\"dur\":1.001");
		snprintf(want + n, sizeof(want) - (size_t)n, "%s}",
			 p == 1 ? ",\"s\":\"t\"" : "");
		bad = strcmp(b.p, want) != 0;
	}
	snprintf(name, sizeof(name), "tev_json_heads_tracks");
	TP_CHECK(name, !bad, "event %d: got %s, want %s", i - 1, b.p, want);
	tp_buf_free(&b);
}

int main(void)
{
	varints();
	fields();
	nested(0, "pb_nested_0");
	nested(127, "pb_nested_127");
	nested(128, "pb_nested_128");
	nested(16383, "pb_nested_16383");
	nested(16384, "pb_nested_16384");
	nested(3 << 20, "pb_nested_3m");
	nesting_twice();
	args_writer();
	/* First: the JSON encoder's first events. */
	json_heads_tracks();
	json_launch();
	json_streamed();
	int3();
	return TP_TEST_DONE();
}
