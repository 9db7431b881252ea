/* The simulated CUPTI's parts (libcupti.so.13, README.md): cupti.c (the
 * state, versions, clocks, the callback API, the end), cupti_records.c
 * (activity records, buffers and their delivery, the activity API) and
 * cupti_rules.c (what the headers forbid, enforced at its worst). Every
 * name here is hidden in the library (-fvisibility=hidden). */
#ifndef SIM_CUPTI_INT_H
#define SIM_CUPTI_INT_H

#include <pthread.h>
#include <stddef.h>
#include <stdint.h>

#include "sim.h"
#include "cupti_init.h"
#include "cupti_load.h"

#define MAX_CBID 1024
#define MAX_KIND 64
#define MAX_RECS 65536	/* records per buffer, at most */

/* CUPTI 13.3+'s several subscribers (cupti_callbacks.h and
 * cupti_activity.h of CUPTI 13.5.25, API 130500; the CUDA 13.0 headers
 * the simulation builds with lack these, so they are declared here).
 * CUpti_SubscriberParams of 13.5 (13.0's ends at oldSubscriberSize). */
typedef struct {
	size_t structSize;
	const char *subscriberName;
	char *oldSubscriberName;
	size_t oldSubscriberSize;
	uint8_t allowMultipleSubscribers;
	uint8_t padding[7];
} Sim_SubscriberParams;
#define SIM_SUB_PARAMS_SIZE (offsetof(Sim_SubscriberParams, padding) + 7)

typedef struct {
	size_t structSize;
} Sim_BufferCallbackRequestInfo;

typedef struct {
	size_t structSize;
	uint64_t threadId;
	void **ppRecordLayouts;
	size_t numRecordLayouts;
} Sim_BufferCallbackCompleteInfo;

typedef void (CUPTIAPI *Sim_RequestFunc_v2)(uint8_t **, size_t *, size_t *,
					    Sim_BufferCallbackRequestInfo *);
typedef void (CUPTIAPI *Sim_CompleteFunc_v2)(uint8_t *, size_t, size_t,
					     Sim_BufferCallbackCompleteInfo *);

#define SIM_ATTR_MULTIPLE_SUBSCRIBER_STATE 12
#define SIM_ATTR_TIMESTAMP_CALLBACK 22
#define SIM_MAX_ATTR 32

/* A subscriber: slot 0 is the default one, which the v1 calls act on
 * (cuptiSubscribe, cuptiActivityRegisterCallbacks, cuptiActivityEnable,
 * ...: all a CUPTI before 13.3 has); slots 1.. are cuptiSubscribe_v2's.
 * Each has its own API callback, buffer callbacks, kinds, buffers,
 * dropped count and (13.4+) timestamp callback. */
#define MAX_SUBS 8

struct subr {
	int used;		/* v2 slot taken (slot 0 always exists) */
	/* callback API */
	CUpti_CallbackFunc cb;
	void *cb_data;
	int subscribed;
	uint8_t enabled[4][MAX_CBID];
	/* activity API */
	CUpti_BuffersCallbackRequestFunc request;
	CUpti_BuffersCallbackCompleteFunc complete;
	Sim_RequestFunc_v2 request2;
	Sim_CompleteFunc_v2 complete2;
	CUpti_TimestampCallbackFunc ts;
	uint64_t ts0_gpu, ts0_cb, ts1_gpu, ts1_cb;
	int kind_on[MAX_KIND];
	uint64_t dropped;
};

/* A thread's buffer: the records reserved in it, each with its op. */
struct tbuf {
	uint8_t *data;
	size_t size, used;
	struct sim_op **ops;	/* NULL for records without an op */
	size_t *offs;
	unsigned n;
	int full;
	long tid;
	struct subr *owner;
	struct tbuf *next;
};

struct sim_cupti {
	pthread_mutex_t lock;
	struct subr sub[MAX_SUBS];
	/* CUPTI_ACTIVITY_ATTR_MULTIPLE_SUBSCRIBER_STATE: 0 one subscriber,
	 * 1 several allowed, 2 not set yet */
	int multi;
	struct tbuf *pending;	/* buffers not yet handed back */
	int torn_down;
	pthread_t delivery;
	int delivery_started;
	size_t attr[SIM_MAX_ATTR];
	int attr_set[SIM_MAX_ATTR];
	/* the driver's initialization told this library (attached before) */
	int driver_init_seen;
};

extern struct sim_cupti S;

#define DEF (&S.sub[0])

/* This thread's buffer, per subscriber (cupti_records.c). */
extern __thread struct tbuf *mine[MAX_SUBS];

/* cupti.c */
uint64_t env_ns(const char *name, uint64_t dflt);
void sleep_ns(uint64_t ns);
uint32_t version(void);
int bug(const char *name, int by_version);
int bug_zero_ts(void);
int bug_refused_crash(void);
struct subr *clock_of(struct subr *s);
void sample(void);
uint64_t to_client(struct subr *s, uint64_t gpu);
void set_clock(struct subr *s, CUpti_TimestampCallbackFunc f);
uint64_t now_of(struct subr *s);
struct subr *subr_of(CUpti_SubscriberHandle h);
void lose(struct subr *sb, const char *why);

/* cupti_records.c */
void on_op(struct sim_op *op);
void on_context(uint32_t ctx, uint32_t dev);
void on_driver_init(void);
size_t record_size(CUpti_ActivityKind k);

/* cupti_rules.c: every CUPTI entry point calls rule_call first (a call
 * after cuptiFinalize re-initialises CUPTI, and aborts once CUDA graphs
 * were launched); rule_not_in_callback aborts when the calling thread is
 * inside a resource or buffer callback; rule_callback marks the calling
 * thread inside one (what: "resource", "buffer request", "buffer
 * completion"; NULL when it returns). */
void rule_call(const char *fn);
void rule_not_in_callback(const char *fn, const char *header);
const char *rule_callback(const char *what);
void rule_finalized(void);

#endif
