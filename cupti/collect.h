/* cupti/: the CUPTI client: GPU activity, API callbacks, devices, GPU
 * tracks; on util/ .. output/. */
/* The collection's state, shared by its three parts: collect.c (start,
 * take, convert, stats), buffers.c (the buffers lent to CUPTI) and
 * finish.c (the detach after the last window, and the flush at exit). */
#ifndef TP_CUPTI_COLLECT_H
#define TP_CUPTI_COLLECT_H

#include <pthread.h>
#include <stdint.h>

#include "cupti.h"

enum { TP_CUPTI_OFF, TP_CUPTI_ON, TP_CUPTI_STOPPED };

struct tp_cbuf {
	struct tp_cbuf *next;
	uint8_t *data;
	size_t valid;
	int discard;	/* lent past the cap: its records are counted only */
	/* Its records, found with cuptiActivityGetNextRecord when CUPTI
	 * handed it back (buffers.c): the writer reads them without calling
	 * CUPTI, which may have been finalized by then. */
	uint32_t *offs;
	size_t nrec, offs_cap;
	int truncated;	/* the records stopped before the valid end */
};

struct tp_cupti_state {
	int state;
	char reason[1200];
	char lib[4096];
	uint32_t version;
	CUpti_SubscriberHandle sub;
	int raw_ts;
	unsigned callbacks;
	int kinds_on;		/* activity kinds are enabled */
	int multi;		/* a subscriber among several (multi.c) */
	/* buffers.c, under lock */
	pthread_mutex_t lock;
	struct tp_cbuf *queue, **queue_tail;
	size_t cap;
	uint64_t refused, dropped, buffers, foreign, discarded;
	uint64_t requested, completed;	/* tprof's own, for handover.c */
	/* A forced flush of tprof's ran (finish.c): the writer checks that
	 * every buffer lent came back (tp_cupti_check_buffers). */
	int check_buffers;
	/* finish.c */
	int finalized;		/* 1: finalized, 2: disabled only (graphs) */
	uint64_t stopped_at_ns;	/* trace time GPU collection stopped, 0 */
	const char *stopped_why;
	uint64_t exit_timeouts;
};

extern struct tp_cupti_state tp_cs;

/* buffers.c */
void CUPTIAPI tp_cupti_buffer_requested(uint8_t **buffer, size_t *size,
					size_t *max_records);
void CUPTIAPI tp_cupti_buffer_completed(CUcontext ctx, uint32_t stream,
					uint8_t *buffer, size_t size,
					size_t valid);
/* The delivered buffers, oldest first; the caller owns the list. */
struct tp_cbuf *tp_cupti_buffers_take(void);
void tp_cupti_buffers_give_back(struct tp_cbuf *list);
void tp_cupti_buffers_give_back_locked(struct tp_cbuf *b);
/* Buffers lent and never handed back. */
uint64_t tp_cupti_buffers_out(void);
void tp_cupti_buffers_reset(void);

/* kinds.c: enables the kinds tprof records (0, or -1 with the reason in
 * tp_cs.reason); disables every kind tprof enabled; takes CUPTI's count
 * of records it dropped. */
int tp_cupti_enable_kinds(void);
void tp_cupti_disable_kinds(void);
void tp_cupti_disable_kinds_except(const uint32_t *keep);
void tp_cupti_count_dropped(void);

/* finish.c */
void tp_cupti_detach_request(void);
void tp_cupti_exit_setup(void);
/* Another client acts (handover.c): stop collecting, keeping the kinds
 * it enabled (a bit per CUpti_ActivityKind); 0 when tprof was collecting. */
int tp_cupti_hand_over(const char *who, const uint32_t *client_kinds);

/* multi.c: with CUPTI 13.3+, subscribes allowing several subscribers
 * and routes tp_cupti's activity calls to tprof's own: 1 done, 0 not
 * this CUPTI (the v1 calls then), -1 refused (*r; other: the subscriber
 * CUPTI named). */
int tp_cupti_multi_subscribe(CUpti_CallbackFunc cb, CUptiResult *r,
			     char *other, size_t olen);

/* CUPTI's clock mapping, kept as it is from now on (hand-over on 13.3:
 * the client's timestamp callback is about to change CUPTI's unit). */
void tp_cupti_clock_pin(void);

/* finish.c: CUPTI may be called from outside a callback (not once
 * cuptiFinalize ran); the detach cannot finalize until _end. */
int tp_cupti_calls_begin(void);
void tp_cupti_calls_end(void);
/* handover.c, by the writer after a forced flush of tprof's: buffers lent
 * and not handed back went to another client's callbacks. */
void tp_cupti_check_buffers(void);

/* handover.c */
int tp_cupti_client_first(char *why, size_t len);
/* A client that calls libcupti through its own handle registered buffer
 * callbacks before tprof started: 1 with why. */
int tp_cupti_client_unseen(char *why, size_t len);
const char *tp_cupti_client(double *at_s);
/* The client registered a timestamp callback. */
int tp_cupti_client_clock(void);

#endif
