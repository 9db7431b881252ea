/* hooks/nvtx/: the nvtx hooks, on hooks/ (resolve.c: how the real
 * functions are found) and every library folder below it. */
/* NVTX, captured as the injection library NVTX loads from
 * NVTX_INJECTION64_PATH: the NVTX calls of every DSO land in the
 * functions of nvtx_calls.c, which record them; the writer pairs pushes
 * with pops (nvtx_emit.c). */
#ifndef TP_NVTX_H
#define TP_NVTX_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#define NVTX_NO_IMPL
#include <nvtx3/nvToolsExt.h>

#include "record/api.h"

enum tp_nvtx_api {
	TP_NVTX_PUSH,		/* a push: the range opens */
	TP_NVTX_POP,
	TP_NVTX_MARK,
	TP_NVTX_START,		/* nvtxRangeStart: may end on another thread */
	TP_NVTX_END,
	TP_NVTX_N
};

#define TP_NVTX_ID(x) TP_API_ID(TP_TABLE_NVTX, TP_NVTX_##x)

enum tp_nvtx_msg {
	TP_NVTX_MSG_NONE,
	TP_NVTX_MSG_TEXT,	/* NUL-terminated, in the extension slots */
	TP_NVTX_MSG_REG,	/* a registered string: `reg` */
	TP_NVTX_MSG_MEM,	/* a pop with struct tp_nvtx_mem in its extension */
};

/* Device memory around a range (tprof_range_pop_memory), in bytes. */
struct tp_nvtx_mem {
	int64_t at_entry;
	int64_t at_exit;
	int64_t peak;
};

/* The domain of tprof_range_push/pop and tprof_mark, and their records. */
uint64_t tp_nvtx_tprof_domain(void);
void tp_nvtx_tprof_push(const char *name);
void tp_nvtx_tprof_pop(const struct tp_nvtx_mem *mem);
void tp_nvtx_tprof_mark(const char *name);
/* TPROF_STEP_NVTX: does this NVTX name end a step? (names.c) */
int tp_nvtx_is_step(const char *name);

/* What became of a range's begin (nvtx_stack.c): a pop or an end
 * follows it. */
enum {
	TP_NVTX_STATE_OFF,	/* not recorded: recording was off */
	TP_NVTX_STATE_REC,	/* recorded; a push's pop has its slots kept */
	TP_NVTX_STATE_DROP,	/* dropped, counted: its pop or end is too */
	TP_NVTX_STATE_NORING,	/* the thread has no ring: counted */
};

/* Pushes deeper on one thread are neither recorded nor their pops;
 * counted (tp_nvtx_too_deep). */
#define TP_NVTX_MAX_DEPTH 1024

/* A push on the calling thread's stack: its id (the record's and its
 * pop's) and where to say what became of it (TP_NVTX_STATE_OFF until
 * then); k: the slots its record keeps back for its pop. -1: not kept
 * (past TP_NVTX_MAX_DEPTH, or no memory for the stack). */
int tp_nvtx_stack_push(uint64_t domain, unsigned k, uint32_t *id,
		       uint8_t **state);
/* A pop of domain: the innermost push of domain still open on the
 * calling thread, taken off (1); 0: none open; -1: the push it ends
 * was past the depth. */
int tp_nvtx_stack_pop(uint64_t domain, uint32_t *id, unsigned *state,
		      unsigned *k);
void tp_nvtx_stack_after_fork(void);
uint64_t tp_nvtx_too_deep(void);
/* Range begins and ends dropped (counted as drops of their thread's
 * ring too), by enum tp_nvtx_api: for the trailer, which a reader
 * checks the ranges against. */
void tp_nvtx_dropped_add(unsigned api);
uint64_t tp_nvtx_dropped(unsigned api);

/* Start/end range ids: a sequence number << 2 | the start's state, so
 * that the end (on any thread) knows what became of its start. */
#define TP_NVTX_ID_STATE(id) ((unsigned)(id) & 3u)
/* An end that could not be recorded although its start was (no ring
 * on its thread, or the ring and the spill pool full): the writer drops
 * the start, counted, rather than leave it open. Any thread. */
void tp_nvtx_end_lost(uint64_t id);
/* The writer: changes whenever an end was lost since. */
uint64_t tp_nvtx_lost_seq(void);
/* The writer: each end lost since the last call, and the ends that
 * could not even be noted (then no start left open can be trusted). */
void tp_nvtx_lost_take(void (*fn)(void *arg, uint64_t id), void *arg,
		       uint64_t *overflow);

/* What a record carries in tp_event.a. tp_event.stream: a push's id and
 * that of the push a pop ends (0: none was open), on their thread; the
 * range id of START and END. */
struct tp_nvtx_args {
	uint64_t domain;	/* struct tp_nvtx_domain *, 0: the default */
	uint64_t payload;	/* raw bits of the payload union */
	uint64_t reg;		/* struct tp_nvtx_string * */
	uint32_t color;		/* ARGB */
	uint32_t category;
	uint8_t color_type;	/* nvtxColorType_t */
	uint8_t payload_type;	/* nvtxPayloadType_t */
	uint8_t msg;		/* enum tp_nvtx_msg */
	uint8_t truncated;	/* the message was cut at TP_NVTX_MSG_MAX */
};

/* The longest message kept: what the extension slots hold, less the NUL. */
#define TP_NVTX_MSG_MAX (15 * 80 - 1)

/* Registries: entries are never freed, so records may point at them. */
struct tp_nvtx_domain {
	struct tp_nvtx_domain *next;
	char name[];
};

struct tp_nvtx_string {
	struct tp_nvtx_string *next;
	uint64_t domain;
	char s[];
};

struct tp_nvtx_domain *tp_nvtx_domain_get(const char *name);
const char *tp_nvtx_domain_name(uint64_t domain);
struct tp_nvtx_string *tp_nvtx_string_get(uint64_t domain, const char *s);
void tp_nvtx_category_set(uint64_t domain, uint32_t id, const char *name);
const char *tp_nvtx_category_name(uint64_t domain, uint32_t id);
void tp_nvtx_thread_set_name(uint32_t tid, const char *name);
const char *tp_nvtx_thread_name(pid_t tid);
/* Calls fn for the newest name of each named thread. */
void tp_nvtx_thread_names(void (*fn)(void *arg, pid_t tid, const char *name),
			  void *arg);

/* UTF-8 of a wide string, at most len - 1 bytes; returns the length. */
size_t tp_nvtx_utf8(char *out, size_t len, const wchar_t *w);

/* Fills one NVTX instance's function tables; 1 on success. */
int tp_nvtx_install(const NvtxExportTableCallbacks *cb);

/* Set at load: point NVTX_INJECTION64_PATH at this library. */
void tp_nvtx_setup(void);
/* How the injection stands, for the trailer. */
const char *tp_nvtx_state(void);
unsigned tp_nvtx_attached(void);

#endif
