/* record/: the recording core: records, per-thread rings, threads,
 * drops, the clock, the rings file; on files/ .. util/. */
#include <stddef.h>

#include "api.h"

/* Every id's entry by the id itself (NULL: none): the writer looks up
 * each record's API twice, so a lookup is one bounds test and one load.
 * 16 tables of 1024: 128 KiB of zeroed memory, of which only the pages
 * of registered entries are ever touched. */
#define API_IDS (TP_API_MAX_TABLES << TP_API_TABLE_SHIFT)

static const struct tp_api *by_id[API_IDS];

void tp_api_register(unsigned table, const struct tp_api *apis, unsigned n)
{
	const struct tp_api **t;
	unsigned i;

	if (table >= TP_API_MAX_TABLES)
		return;
	if (n > 1u << TP_API_TABLE_SHIFT)
		n = 1u << TP_API_TABLE_SHIFT;
	t = &by_id[table << TP_API_TABLE_SHIFT];
	for (i = 0; i < 1u << TP_API_TABLE_SHIFT; i++)
		if (i < n || t[i])
			t[i] = i < n ? &apis[i] : NULL;
}

const struct tp_api *tp_api_get(uint16_t id)
{
	return id < API_IDS ? by_id[id] : NULL;
}
