/* A stand-in libcuda.so.1 for the CUPTI tests: a driver that answers
 * cuDriverGetVersion, which is all tprof asks of the driver before it
 * calls CUPTI. FAKE_CUDA_DRIVER_ERROR=N makes it answer error N. */
#include <stdlib.h>

#define EXPORT __attribute__((visibility("default")))

EXPORT int cuDriverGetVersion(int *v)
{
	const char *e = getenv("FAKE_CUDA_DRIVER_ERROR");

	if (e)
		return atoi(e);
	*v = 13000;
	return 0;
}
