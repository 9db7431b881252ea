/* What the writer needs to know of each recorded API: the name shown in
 * the trace, its category, and how to print its args. The tables live
 * with the hooks (preload/) and are registered by source. */
#ifndef TP_API_H
#define TP_API_H

#include <stdint.h>

#include "event.h"
#include "json.h"

struct tp_api {
	const char *name;
	const char *cat;
	/* Appends ,"key":value pairs (each with its leading comma). */
	void (*args)(struct tp_buf *b, const struct tp_event *e);
};

/* API ids are (table << 10 | index): the high bits pick the table. */
#define TP_API_TABLE_SHIFT 10
#define TP_API_MAX_TABLES 16

void tp_api_register(unsigned table, const struct tp_api *apis, unsigned n);
const struct tp_api *tp_api_get(uint16_t id);

#endif
