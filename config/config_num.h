/* config/: TPROF_* configuration, parsed and checked; on util/ only. */
/* Numbers in TPROF_* variables. */
#ifndef TP_CONFIG_NUM_H
#define TP_CONFIG_NUM_H

#include <stdint.h>

/* A whole decimal number in [min, max]: 0, or -1 for anything else. */
int tp_parse_uint(const char *s, long min, long max, long *out);
/* "0", or a number with a unit (800ns, 50us, 1.5ms, 2s): 0, or -1. */
int tp_parse_duration_ns(const char *s, uint64_t *out);

typedef const char *(*tp_getenv_fn)(const char *name);

#endif
