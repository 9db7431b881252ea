/* hooks/nvtx/: the nvtx hooks, on hooks/ (resolve.c: how the real
 * functions are found) and every library folder below it. */
/* The NVTX functions tprof installs in each NVTX instance. A push, pop,
 * mark, start or end is one record (the message copied into extension
 * slots: the caller's string does not outlive the call); the writer pairs
 * them by id. A range is kept whole or dropped whole: a push is recorded
 * with its pop's slots kept back and its pop is recorded exactly when it
 * was, whatever the ring or the recording window is by then; a start's
 * id says whether it was recorded, and its end follows it
 * (nvtx_stack.c). Range levels are answered here, per thread, whether
 * recording is on or not. */
#include <stddef.h>
#include <string.h>
#include <unistd.h>

#include "capture/capture.h"
#include "config/config.h"
#include "session/session.h"
#include "record/thread.h"
#include "nvtx.h"

static __thread int depth __attribute__((tls_model("initial-exec")));
/* TPROF_STEP_NVTX: bit d set when the push at depth d was a step range. */
static __thread uint64_t step_bits __attribute__((tls_model("initial-exec")));
static uint64_t next_range_id = 1;
/* Start/end ranges named as steps, by id, until they end. */
#define STEP_IDS 64
static uint64_t step_ids[STEP_IDS];

struct msg {
	const char *text;	/* NULL: none, or registered */
	uint64_t reg;
	char wide[TP_NVTX_MSG_MAX + 2];	/* UTF-8 of a wide message */
};

/* The message of an attribute struct; fields past its size are unset. */
static void attr_message(const nvtxEventAttributes_t *a, struct msg *m)
{
	size_t need = offsetof(nvtxEventAttributes_t, message) +
		      sizeof(a->message);

	if (!a || a->size < need)
		return;
	switch (a->messageType) {
	case NVTX_MESSAGE_TYPE_ASCII:
		m->text = a->message.ascii;
		break;
	case NVTX_MESSAGE_TYPE_UNICODE:
		tp_nvtx_utf8(m->wide, sizeof(m->wide), a->message.unicode);
		m->text = m->wide;
		break;
	case NVTX_MESSAGE_TYPE_REGISTERED:
		m->reg = (uint64_t)(uintptr_t)a->message.registered;
		break;
	}
}

static void attr_fill(struct tp_nvtx_args *x, const nvtxEventAttributes_t *a)
{
	if (!a || a->size < offsetof(nvtxEventAttributes_t, reserved0))
		return;
	x->category = a->category;
	x->color_type = (uint8_t)a->colorType;
	x->color = a->color;
	x->payload_type = (uint8_t)a->payloadType;
	x->payload = a->payload.ullValue;
	/* 32-bit payloads leave the upper half as the caller had it. */
	if (x->payload_type >= NVTX_PAYLOAD_TYPE_UNSIGNED_INT32)
		x->payload &= 0xffffffffu;
}

/* One record of api; k > 0: a push, recorded only with k slots kept
 * back for its pop (tp_rec_open). id: the range's (a push's, a start's
 * with its state bits). 1 when recorded. */
static int record(uint16_t api, uint64_t domain,
		  const nvtxEventAttributes_t *a, const struct msg *m,
		  uint64_t id, unsigned k, struct tp_rec *r)
{
	struct tp_nvtx_args x = { 0 };
	struct tp_event *e;
	size_t len = 0;
	unsigned n = 0;
	int cut = 0;

	if (m && m->text) {
		len = strnlen(m->text, TP_NVTX_MSG_MAX + 1);
		cut = len > TP_NVTX_MSG_MAX;
		if (cut)
			len = TP_NVTX_MSG_MAX;
		n = (unsigned)((len + TP_EV_SLOT_BYTES) / TP_EV_SLOT_BYTES);
	}
	e = k ? tp_rec_open(r, api, n, k) : tp_rec_point_ext(r, api, n);
	if (!e)
		return 0;
	e->stream = id;
	x.domain = domain;
	attr_fill(&x, a);
	if (n) {
		x.msg = TP_NVTX_MSG_TEXT;
		x.truncated = (uint8_t)cut;
		tp_rec_ext_copy(r, 0, m->text, len);
		tp_rec_ext_copy(r, len, "", 1);
	} else if (m && m->reg) {
		x.msg = TP_NVTX_MSG_REG;
		x.reg = m->reg;
	}
	memcpy(&e->a, &x, sizeof(x));
	tp_rec_commit(r);
	return 1;
}

/* A pop (id 0: no push of its domain open); k > 0: its push's, the
 * slots kept back for it, so it fits. */
static void record_pop(struct tp_rec *r, uint64_t domain, uint32_t id,
		       unsigned k, const struct tp_nvtx_mem *mem)
{
	struct tp_nvtx_args x = { .domain = domain };
	unsigned n_ext = mem ? 1 : 0;
	struct tp_event *e;

	if (k && 1 + n_ext > k)		/* a push that kept no room for it */
		n_ext = 0;
	e = k ? tp_rec_close(r, TP_NVTX_ID(POP), n_ext, k) :
		tp_rec_point_ext(r, TP_NVTX_ID(POP), n_ext);
	if (!e)
		return;
	if (n_ext) {
		x.msg = TP_NVTX_MSG_MEM;
		tp_rec_ext_copy(r, 0, mem, sizeof(*mem));
	}
	e->stream = id;
	memcpy(&e->a, &x, sizeof(x));
	tp_rec_commit(r);
}

_Static_assert(sizeof(struct tp_nvtx_args) <= sizeof(((struct tp_event *)0)->a),
	       "NVTX args fit a record");

/* Whether a message names TPROF_STEP_NVTX: looked at even while nothing
 * is recorded, since steps drive the schedule. */
static int is_step(const struct msg *m)
{
	const char *s = m->text;

	if (!s && m->reg)
		s = ((const struct tp_nvtx_string *)(uintptr_t)m->reg)->s;
	return s && tp_nvtx_is_step(s);
}

static int steps_on(void)
{
	return __builtin_expect(tp_sess.cfg.cap.step_nvtx[0] != 0, 0);
}

/* NVTX: a push returns the level of the range it starts, a pop the level
 * of the range it ends, or a negative number when none is open. A pop
 * of a step range ends the step, after the pop is recorded. */
static int pushed(int step)
{
	if (depth < 64) {
		step_bits &= ~(1ull << depth);
		step_bits |= (uint64_t)!!step << depth;
	}
	return depth++;
}

static int popped(void)
{
	if (depth <= 0)
		return -1;
	--depth;
	if (depth < 64 && (step_bits >> depth & 1)) {
		step_bits &= ~(1ull << depth);
		tp_capture_step();
	}
	return depth;
}

static void step_mark(int step)
{
	if (step)
		tp_capture_step();
}

static void step_started(int step, uint64_t id)
{
	unsigned i;

	if (!step)
		return;
	for (i = 0; i < STEP_IDS; i++)
		if (__atomic_compare_exchange_n(&step_ids[i], &(uint64_t){ 0 },
						id, 0, __ATOMIC_RELAXED,
						__ATOMIC_RELAXED))
			return;
}

static void step_ended(uint64_t id)
{
	unsigned i;

	if (!steps_on() || !id)
		return;
	for (i = 0; i < STEP_IDS; i++) {
		uint64_t want = id;

		if (__atomic_compare_exchange_n(&step_ids[i], &want, 0, 0,
						__ATOMIC_RELAXED,
						__ATOMIC_RELAXED)) {
			tp_capture_step();
			return;
		}
	}
}

/* A call being noted: whether it is recorded, and its message (built
 * only when it is, or when steps need it). */
struct note {
	struct tp_rec r;
	int rec;
	struct msg m;
};

/* 1 when the message is needed. */
static int note_begin(struct note *n, unsigned source)
{
	n->rec = tp_rec_begin(&n->r, source);
	n->m.text = NULL;
	n->m.reg = 0;
	return n->rec || steps_on();
}

static int note_step(const struct note *n)
{
	return steps_on() && is_step(&n->m);
}

/* A range's begin or end dropped: counted for the trailer too. */
static uint8_t dropped(unsigned api)
{
	tp_nvtx_dropped_add(api);
	return TP_NVTX_STATE_DROP;
}

/* What became of a call that was not recorded. */
static uint8_t not_recorded(void)
{
	struct tp_thread *t = tp_self;

	return t && t->unmapped ? TP_NVTX_STATE_NORING : TP_NVTX_STATE_OFF;
}

static void note_mark(struct note *n, uint64_t d,
		      const nvtxEventAttributes_t *a)
{
	if (n->rec)
		record(TP_NVTX_ID(MARK), d, a, &n->m, 0, 0, &n->r);
	step_mark(note_step(n));
}

/* A push, on the thread's stack whether recorded or not; k: its pop's
 * slots. */
static void note_push(struct note *n, uint64_t d,
		      const nvtxEventAttributes_t *a, unsigned k)
{
	uint8_t *state;
	uint32_t id;

	if (tp_nvtx_stack_push(d, k, &id, &state) < 0)
		return;		/* past the depth, or no memory */
	if (!n->rec)
		*state = not_recorded();
	else if (record(TP_NVTX_ID(PUSH), d, a, &n->m, id, k, &n->r))
		*state = TP_NVTX_STATE_REC;
	else
		*state = dropped(TP_NVTX_PUSH);
}

/* A pop of domain d: recorded when its push was (even if recording is
 * off by now), counted as dropped when its push was. */
static void note_pop(uint64_t d, unsigned source,
		     const struct tp_nvtx_mem *mem)
{
	unsigned state, k;
	struct tp_rec r;
	uint32_t id;

	switch (tp_nvtx_stack_pop(d, &id, &state, &k)) {
	case -1:	/* its push was past the depth */
		return;
	case 0:		/* none open: the writer counts it */
		if (tp_rec_begin(&r, source))
			record_pop(&r, d, 0, 0, mem);
		return;
	}
	switch (state) {
	case TP_NVTX_STATE_REC:
		if (tp_rec_begin_any(&r))
			record_pop(&r, d, id, k, mem);
		break;
	case TP_NVTX_STATE_DROP:
		if (tp_self)
			tp_drops_count(tp_self, TP_NVTX_ID(POP), 0);
		dropped(TP_NVTX_POP);
		break;
	case TP_NVTX_STATE_NORING:
		tp_thread_note_unrecorded();
		break;
	}
}

static uint64_t new_range_seq(void)
{
	return __atomic_fetch_add(&next_range_id, 1, __ATOMIC_RELAXED);
}

/* A start: its id, whose low bits say what became of it. */
static uint64_t note_start(struct note *n, uint64_t d,
			   const nvtxEventAttributes_t *a)
{
	uint64_t seq = new_range_seq() << 2,
		 id = seq | TP_NVTX_STATE_REC;

	if (!n->rec)
		id = seq | not_recorded();
	else if (!record(TP_NVTX_ID(START), d, a, &n->m, id, 0, &n->r))
		id = seq | dropped(TP_NVTX_START);
	step_started(note_step(n), id);
	return id;
}

/* An end, on any thread: recorded when its start was, whether recording
 * is on or not; if it cannot be, the writer is told to drop the start. */
static void note_end(uint64_t d, uint64_t id)
{
	struct tp_rec r;

	switch (TP_NVTX_ID_STATE(id)) {
	case TP_NVTX_STATE_REC:
		if (!tp_rec_begin_any(&r) ||
		    !record(TP_NVTX_ID(END), d, NULL, NULL, id, 0, &r))
			tp_nvtx_end_lost(id);
		break;
	case TP_NVTX_STATE_DROP:
		if (tp_self && !tp_self->internal)
			tp_drops_count(tp_self, TP_NVTX_ID(END), 0);
		else
			tp_thread_note_unrecorded();
		dropped(TP_NVTX_END);
		break;
	case TP_NVTX_STATE_NORING:
		tp_thread_note_unrecorded();
		break;
	}
	step_ended(id);
}

/* ---- core ---- */

static void tp_nvtx_MarkEx(const nvtxEventAttributes_t *a)
{
	struct note n;

	if (note_begin(&n, TP_SRC_NVTX)) {
		attr_message(a, &n.m);
		note_mark(&n, 0, a);
	}
}

static void tp_nvtx_MarkA(const char *s)
{
	struct note n;

	if (note_begin(&n, TP_SRC_NVTX)) {
		n.m.text = s;
		note_mark(&n, 0, NULL);
	}
}

static void tp_nvtx_MarkW(const wchar_t *s)
{
	struct note n;

	if (note_begin(&n, TP_SRC_NVTX)) {
		tp_nvtx_utf8(n.m.wide, sizeof(n.m.wide), s);
		n.m.text = n.m.wide;
		note_mark(&n, 0, NULL);
	}
}

static nvtxRangeId_t tp_nvtx_RangeStartEx(const nvtxEventAttributes_t *a)
{
	struct note n;

	if (note_begin(&n, TP_SRC_NVTX))
		attr_message(a, &n.m);
	return note_start(&n, 0, a);
}

static nvtxRangeId_t tp_nvtx_RangeStartA(const char *s)
{
	struct note n;

	if (note_begin(&n, TP_SRC_NVTX))
		n.m.text = s;
	return note_start(&n, 0, NULL);
}

static nvtxRangeId_t tp_nvtx_RangeStartW(const wchar_t *s)
{
	struct note n;

	if (note_begin(&n, TP_SRC_NVTX)) {
		tp_nvtx_utf8(n.m.wide, sizeof(n.m.wide), s);
		n.m.text = n.m.wide;
	}
	return note_start(&n, 0, NULL);
}

static void tp_nvtx_RangeEnd(nvtxRangeId_t id)
{
	note_end(0, id);
}

static int tp_nvtx_RangePushEx(const nvtxEventAttributes_t *a)
{
	struct note n;

	if (note_begin(&n, TP_SRC_NVTX))
		attr_message(a, &n.m);
	note_push(&n, 0, a, 1);
	return pushed(note_step(&n));
}

static int tp_nvtx_RangePushA(const char *s)
{
	struct note n;

	if (note_begin(&n, TP_SRC_NVTX))
		n.m.text = s;
	note_push(&n, 0, NULL, 1);
	return pushed(note_step(&n));
}

static int tp_nvtx_RangePushW(const wchar_t *s)
{
	struct note n;

	if (note_begin(&n, TP_SRC_NVTX)) {
		tp_nvtx_utf8(n.m.wide, sizeof(n.m.wide), s);
		n.m.text = n.m.wide;
	}
	note_push(&n, 0, NULL, 1);
	return pushed(note_step(&n));
}

static int tp_nvtx_RangePop(void)
{
	note_pop(0, TP_SRC_NVTX, NULL);
	return popped();
}

static void tp_nvtx_NameCategoryA(uint32_t id, const char *name)
{
	tp_nvtx_category_set(0, id, name);
}

static void tp_nvtx_NameCategoryW(uint32_t id, const wchar_t *name)
{
	char s[256];

	tp_nvtx_utf8(s, sizeof(s), name);
	tp_nvtx_category_set(0, id, s);
}

static void tp_nvtx_NameOsThreadA(uint32_t tid, const char *name)
{
	tp_nvtx_thread_set_name(tid, name);
}

static void tp_nvtx_NameOsThreadW(uint32_t tid, const wchar_t *name)
{
	char s[256];

	tp_nvtx_utf8(s, sizeof(s), name);
	tp_nvtx_thread_set_name(tid, s);
}

/* ---- domains ---- */

static void tp_nvtx_DomainMarkEx(nvtxDomainHandle_t d, const nvtxEventAttributes_t *a)
{
	struct note n;

	if (note_begin(&n, TP_SRC_NVTX)) {
		attr_message(a, &n.m);
		note_mark(&n, (uint64_t)(uintptr_t)d, a);
	}
}

static nvtxRangeId_t tp_nvtx_DomainRangeStartEx(nvtxDomainHandle_t d,
					 const nvtxEventAttributes_t *a)
{
	struct note n;

	if (note_begin(&n, TP_SRC_NVTX))
		attr_message(a, &n.m);
	return note_start(&n, (uint64_t)(uintptr_t)d, a);
}

static void tp_nvtx_DomainRangeEnd(nvtxDomainHandle_t d, nvtxRangeId_t id)
{
	note_end((uint64_t)(uintptr_t)d, id);
}

static int tp_nvtx_DomainRangePushEx(nvtxDomainHandle_t d,
			      const nvtxEventAttributes_t *a)
{
	struct note n;

	if (note_begin(&n, TP_SRC_NVTX))
		attr_message(a, &n.m);
	note_push(&n, (uint64_t)(uintptr_t)d, a, 1);
	return pushed(note_step(&n));
}

static int tp_nvtx_DomainRangePop(nvtxDomainHandle_t d)
{
	note_pop((uint64_t)(uintptr_t)d, TP_SRC_NVTX, NULL);
	return popped();
}

static void tp_nvtx_DomainNameCategoryA(nvtxDomainHandle_t d, uint32_t id,
				 const char *name)
{
	tp_nvtx_category_set((uint64_t)(uintptr_t)d, id, name);
}

static void tp_nvtx_DomainNameCategoryW(nvtxDomainHandle_t d, uint32_t id,
				 const wchar_t *name)
{
	char s[256];

	tp_nvtx_utf8(s, sizeof(s), name);
	tp_nvtx_category_set((uint64_t)(uintptr_t)d, id, s);
}

static nvtxStringHandle_t tp_nvtx_DomainRegisterStringA(nvtxDomainHandle_t d,
						 const char *s)
{
	return (nvtxStringHandle_t)tp_nvtx_string_get((uint64_t)(uintptr_t)d,
						      s);
}

static nvtxStringHandle_t tp_nvtx_DomainRegisterStringW(nvtxDomainHandle_t d,
						 const wchar_t *w)
{
	char s[TP_NVTX_MSG_MAX + 1];

	tp_nvtx_utf8(s, sizeof(s), w);
	return (nvtxStringHandle_t)tp_nvtx_string_get((uint64_t)(uintptr_t)d,
						      s);
}

static nvtxDomainHandle_t tp_nvtx_DomainCreateA(const char *name)
{
	return (nvtxDomainHandle_t)tp_nvtx_domain_get(name);
}

static nvtxDomainHandle_t tp_nvtx_DomainCreateW(const wchar_t *name)
{
	char s[256];

	tp_nvtx_utf8(s, sizeof(s), name);
	return (nvtxDomainHandle_t)tp_nvtx_domain_get(s);
}

/* Records may still name the domain: it is kept. */
static void tp_nvtx_DomainDestroy(nvtxDomainHandle_t d)
{
	(void)d;
}

/* ---- tprof's own ranges (tprof.h): the same records, in the "tprof"
 * domain, recorded whenever anything is ---- */

/* A range's pop may carry device memory (one extension slot): its push
 * keeps two slots back. */
#define TPROF_POP_SLOTS 2

void tp_nvtx_tprof_push(const char *name)
{
	struct note n;

	n.rec = tp_rec_begin(&n.r, TP_SRC_ALL);
	n.m.text = name ? name : "(null)";
	n.m.reg = 0;
	note_push(&n, tp_nvtx_tprof_domain(), NULL, TPROF_POP_SLOTS);
}

void tp_nvtx_tprof_mark(const char *name)
{
	struct tp_rec r;
	struct msg m = { .text = name ? name : "(null)" };

	if (tp_rec_begin(&r, TP_SRC_ALL))
		record(TP_NVTX_ID(MARK), tp_nvtx_tprof_domain(), NULL, &m, 0,
		       0, &r);
}

void tp_nvtx_tprof_pop(const struct tp_nvtx_mem *mem)
{
	note_pop(tp_nvtx_tprof_domain(), TP_SRC_ALL, mem);
}

/* ---- installing them ---- */

struct slot {
	unsigned cbid;
	NvtxFunctionPointer fn;
};

#define CORE(name) { NVTX_CBID_CORE_##name, (NvtxFunctionPointer)tp_nvtx_##name }
#define CORE2(name) { NVTX_CBID_CORE2_##name, \
		      (NvtxFunctionPointer)tp_nvtx_##name }

static const struct slot core[] = {
	CORE(MarkEx), CORE(MarkA), CORE(MarkW),
	CORE(RangeStartEx), CORE(RangeStartA), CORE(RangeStartW),
	CORE(RangeEnd),
	CORE(RangePushEx), CORE(RangePushA), CORE(RangePushW),
	CORE(RangePop),
	CORE(NameCategoryA), CORE(NameCategoryW),
	CORE(NameOsThreadA), CORE(NameOsThreadW),
};

static const struct slot core2[] = {
	CORE2(DomainMarkEx), CORE2(DomainRangeStartEx), CORE2(DomainRangeEnd),
	CORE2(DomainRangePushEx), CORE2(DomainRangePop),
	CORE2(DomainNameCategoryA), CORE2(DomainNameCategoryW),
	CORE2(DomainRegisterStringA), CORE2(DomainRegisterStringW),
	CORE2(DomainCreateA), CORE2(DomainCreateW), CORE2(DomainDestroy),
};

/* Slots past the table an older NVTX has are left alone. */
static int fill(const NvtxExportTableCallbacks *cb, NvtxCallbackModule mod,
		const struct slot *s, unsigned n)
{
	NvtxFunctionTable table = NULL;
	unsigned size = 0, i;

	if (!cb->GetModuleFunctionTable(mod, &table, &size) || !table)
		return 0;
	for (i = 0; i < n; i++)
		if (s[i].cbid < size && table[s[i].cbid])
			*table[s[i].cbid] = s[i].fn;
	return 1;
}

int tp_nvtx_install(const NvtxExportTableCallbacks *cb)
{
	if (!fill(cb, NVTX_CB_MODULE_CORE, core,
		  sizeof(core) / sizeof(core[0])))
		return 0;
	fill(cb, NVTX_CB_MODULE_CORE2, core2, sizeof(core2) / sizeof(core2[0]));
	return 1;
}
