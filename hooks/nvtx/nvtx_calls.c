/* hooks/nvtx/: the nvtx hooks, on hooks/ (resolve.c: how the real
 * functions are found) and every library folder below it. */
/* The NVTX functions tprof installs in each NVTX instance. A push, pop,
 * mark, start or end is one record (the message copied into extension
 * slots: the caller's string does not outlive the call); the writer pairs
 * them. Range levels are answered here, per thread, whether recording is
 * on or not. */
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

static void record(uint16_t api, uint64_t domain,
		   const nvtxEventAttributes_t *a, const struct msg *m,
		   uint64_t id, struct tp_rec *r)
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
	e = tp_rec_point_ext(r, api, n);
	if (!e)
		return;
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

/* An event with attributes (Ex) or a plain message; each returns 1 when
 * the message names a step. */
static int note_ex(uint16_t api, nvtxDomainHandle_t d,
		   const nvtxEventAttributes_t *a, uint64_t id)
{
	struct tp_rec r;
	struct msg m;
	int rec = tp_rec_begin(&r, TP_SRC_NVTX);

	if (!rec && !steps_on())
		return 0;
	m.text = NULL;
	m.reg = 0;
	attr_message(a, &m);
	if (rec)
		record(api, (uint64_t)(uintptr_t)d, a, &m, id, &r);
	return steps_on() && is_step(&m);
}

static int note_a(uint16_t api, const char *s, uint64_t id)
{
	struct tp_rec r;
	struct msg m;
	int rec = tp_rec_begin(&r, TP_SRC_NVTX);

	if (!rec && !steps_on())
		return 0;
	m.text = s;
	m.reg = 0;
	if (rec)
		record(api, 0, NULL, &m, id, &r);
	return steps_on() && is_step(&m);
}

static int note_w(uint16_t api, const wchar_t *s, uint64_t id)
{
	struct tp_rec r;
	struct msg m;
	int rec = tp_rec_begin(&r, TP_SRC_NVTX);

	if (!rec && !steps_on())
		return 0;
	tp_nvtx_utf8(m.wide, sizeof(m.wide), s);
	m.text = m.wide;
	m.reg = 0;
	if (rec)
		record(api, 0, NULL, &m, id, &r);
	return steps_on() && is_step(&m);
}

static void note_plain(uint16_t api, nvtxDomainHandle_t d, uint64_t id)
{
	struct tp_rec r;

	if (tp_rec_begin(&r, TP_SRC_NVTX))
		record(api, (uint64_t)(uintptr_t)d, NULL, NULL, id, &r);
}

static uint64_t new_range_id(void)
{
	return __atomic_fetch_add(&next_range_id, 1, __ATOMIC_RELAXED);
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

/* ---- core ---- */

static void tp_nvtx_MarkEx(const nvtxEventAttributes_t *a)
{
	step_mark(note_ex(TP_NVTX_ID(MARK), NULL, a, 0));
}

static void tp_nvtx_MarkA(const char *s)
{
	step_mark(note_a(TP_NVTX_ID(MARK), s, 0));
}

static void tp_nvtx_MarkW(const wchar_t *s)
{
	step_mark(note_w(TP_NVTX_ID(MARK), s, 0));
}

static nvtxRangeId_t tp_nvtx_RangeStartEx(const nvtxEventAttributes_t *a)
{
	uint64_t id = new_range_id();

	step_started(note_ex(TP_NVTX_ID(START), NULL, a, id), id);
	return id;
}

static nvtxRangeId_t tp_nvtx_RangeStartA(const char *s)
{
	uint64_t id = new_range_id();

	step_started(note_a(TP_NVTX_ID(START), s, id), id);
	return id;
}

static nvtxRangeId_t tp_nvtx_RangeStartW(const wchar_t *s)
{
	uint64_t id = new_range_id();

	step_started(note_w(TP_NVTX_ID(START), s, id), id);
	return id;
}

static void tp_nvtx_RangeEnd(nvtxRangeId_t id)
{
	note_plain(TP_NVTX_ID(END), NULL, id);
	step_ended(id);
}

static int tp_nvtx_RangePushEx(const nvtxEventAttributes_t *a)
{
	return pushed(note_ex(TP_NVTX_ID(PUSH), NULL, a, 0));
}

static int tp_nvtx_RangePushA(const char *s)
{
	return pushed(note_a(TP_NVTX_ID(PUSH), s, 0));
}

static int tp_nvtx_RangePushW(const wchar_t *s)
{
	return pushed(note_w(TP_NVTX_ID(PUSH), s, 0));
}

static int tp_nvtx_RangePop(void)
{
	note_plain(TP_NVTX_ID(POP), NULL, 0);
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
	step_mark(note_ex(TP_NVTX_ID(MARK), d, a, 0));
}

static nvtxRangeId_t tp_nvtx_DomainRangeStartEx(nvtxDomainHandle_t d,
					 const nvtxEventAttributes_t *a)
{
	uint64_t id = new_range_id();

	step_started(note_ex(TP_NVTX_ID(START), d, a, id), id);
	return id;
}

static void tp_nvtx_DomainRangeEnd(nvtxDomainHandle_t d, nvtxRangeId_t id)
{
	note_plain(TP_NVTX_ID(END), d, id);
	step_ended(id);
}

static int tp_nvtx_DomainRangePushEx(nvtxDomainHandle_t d,
			      const nvtxEventAttributes_t *a)
{
	return pushed(note_ex(TP_NVTX_ID(PUSH), d, a, 0));
}

static int tp_nvtx_DomainRangePop(nvtxDomainHandle_t d)
{
	note_plain(TP_NVTX_ID(POP), d, 0);
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

void tp_nvtx_tprof_push(const char *name)
{
	struct tp_rec r;
	struct msg m = { .text = name ? name : "(null)" };

	if (tp_rec_begin(&r, TP_SRC_ALL))
		record(TP_NVTX_ID(PUSH), tp_nvtx_tprof_domain(), NULL, &m, 0,
		       &r);
}

void tp_nvtx_tprof_mark(const char *name)
{
	struct tp_rec r;
	struct msg m = { .text = name ? name : "(null)" };

	if (tp_rec_begin(&r, TP_SRC_ALL))
		record(TP_NVTX_ID(MARK), tp_nvtx_tprof_domain(), NULL, &m, 0,
		       &r);
}

void tp_nvtx_tprof_pop(const struct tp_nvtx_mem *mem)
{
	struct tp_nvtx_args x = { .domain = tp_nvtx_tprof_domain() };
	struct tp_event *e;
	struct tp_rec r;

	if (!tp_rec_begin(&r, TP_SRC_ALL))
		return;
	e = tp_rec_point_ext(&r, TP_NVTX_ID(POP), mem ? 1 : 0);
	if (!e)
		return;
	if (mem) {
		x.msg = TP_NVTX_MSG_MEM;
		tp_rec_ext_copy(&r, 0, mem, sizeof(*mem));
	}
	e->stream = 0;
	memcpy(&e->a, &x, sizeof(x));
	tp_rec_commit(&r);
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
