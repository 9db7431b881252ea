/* Minimal test harness shared by the unit tests.
 *
 * Each check prints "PASS name" or "FAIL name: why" on stdout; tests/run.sh
 * adds the lines of every test program up into "N passed, N failed".
 */
#ifndef TP_TEST_H
#define TP_TEST_H

#include <stdio.h>
#include <string.h>
#include <inttypes.h>

static int tp_test_failures;

#define TP_CHECK(name, cond, ...)                                        \
	do {                                                             \
		if (cond) {                                              \
			printf("PASS %s\n", (name));                     \
		} else {                                                 \
			tp_test_failures++;                              \
			printf("FAIL %s: ", (name));                     \
			printf(__VA_ARGS__);                             \
			printf(" (%s:%d)\n", __FILE__, __LINE__);        \
		}                                                        \
	} while (0)

#define TP_CHECK_INT(name, got, want)                                    \
	TP_CHECK(name, (long long)(got) == (long long)(want),            \
		 "got %lld, want %lld", (long long)(got), (long long)(want))

#define TP_CHECK_STR(name, got, want)                                    \
	TP_CHECK(name, strcmp((got), (want)) == 0,                       \
		 "got \"%s\", want \"%s\"", (got), (want))

#define TP_TEST_DONE() (tp_test_failures ? 1 : 0)

/* A fake environment for the TPROF_* parsers: "NAME=value" strings,
 * NULL-terminated, looked up by tp_test_getenv. */
static const char *tp_test_env[16];

static inline const char *tp_test_getenv(const char *name)
{
	size_t n = strlen(name);
	int i;

	for (i = 0; tp_test_env[i]; i++)
		if (!strncmp(tp_test_env[i], name, n) && tp_test_env[i][n] == '=')
			return tp_test_env[i] + n + 1;
	return NULL;
}

#endif
