/* config/: TPROF_* configuration, parsed and checked; on util/ only. */
/* The numbers of TPROF_* variables: whole counts and durations. Below
 * both the general and the capture variables, which each parse with it. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "config_num.h"

/* A whole decimal number in [min, max]; nothing else accepted. */
int tp_parse_uint(const char *s, long min, long max, long *out)
{
	char *end;
	long v;

	if (!*s || *s == '-' || *s == '+' || *s == ' ')
		return -1;
	errno = 0;
	v = strtol(s, &end, 10);
	if (errno || *end || v < min || v > max)
		return -1;
	*out = v;
	return 0;
}

/* "0", or a number with a unit: 800ns, 50us, 1.5ms, 2s. */
int tp_parse_duration_ns(const char *s, uint64_t *out)
{
	static const struct {
		const char *unit;
		double ns;
	} units[] = { { "ns", 1 }, { "us", 1e3 }, { "ms", 1e6 }, { "s", 1e9 } };
	char *end;
	double v;
	unsigned i;

	if (!strcmp(s, "0")) {
		*out = 0;
		return 0;
	}
	if (!*s || *s == '-' || *s == '+' || *s == ' ')
		return -1;
	errno = 0;
	v = strtod(s, &end);
	/* !(v >= 0): nan (and inf fails v > 1e6) */
	if (errno || end == s || !(v >= 0) || v > 1e6)
		return -1;
	for (i = 0; i < sizeof(units) / sizeof(units[0]); i++) {
		if (!strcmp(end, units[i].unit)) {
			*out = (uint64_t)(v * units[i].ns + 0.5);
			return 0;
		}
	}
	return -1;
}
