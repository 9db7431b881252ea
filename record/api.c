/* record/: the recording core: records, per-thread rings, threads,
 * drops, the clock, the rings file; on files/ .. util/. */
#include <stddef.h>

#include "api.h"

static struct {
	const struct tp_api *apis;
	unsigned n;
} tables[TP_API_MAX_TABLES];

void tp_api_register(unsigned table, const struct tp_api *apis, unsigned n)
{
	if (table >= TP_API_MAX_TABLES)
		return;
	tables[table].apis = apis;
	tables[table].n = n;
}

const struct tp_api *tp_api_get(uint16_t id)
{
	unsigned t = id >> TP_API_TABLE_SHIFT;
	unsigned i = id & ((1u << TP_API_TABLE_SHIFT) - 1);

	if (t >= TP_API_MAX_TABLES || i >= tables[t].n)
		return NULL;
	return &tables[t].apis[i];
}
