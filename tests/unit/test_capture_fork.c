/* A fork child drops its parent's writer-side copy of the capture's phase
 * log: a child that forks again and again, or a server
 * forking a worker per request, must not keep one leaked copy per fork. */
#include <malloc.h>
#include <stdlib.h>

#include "capture/capture.h"
#include "session/session.h"
#include "record/thread.h"
#include "tp_test.h"

int main(void)
{
	struct tp_capture_config cfg = { 0 };
	size_t first, later;
	int i;

	tp_clock_init();
	tp_sess.anchor = tp_clock_sample();
	tp_sess.active = 1;
	tp_capture_init(&cfg, ~0u);
	/* The writer's copy is made at its first drain; a fork child
	 * (tp_capture_after_fork) starts again, and its own writer makes its
	 * own copy. */
	tp_capture_sync();
	tp_capture_after_fork();
	tp_capture_sync();
	first = mallinfo2().uordblks;
	for (i = 0; i < 1000; i++) {
		tp_capture_after_fork();
		tp_capture_sync();
	}
	later = mallinfo2().uordblks;
	TP_CHECK("capture fork: 1000 fork-child resets leak nothing",
		 later <= first, "%zu bytes in use after one, %zu after 1000",
		 first, later);
	TP_CHECK("capture fork: the child's phase log still reads",
		 tp_capture_kept(0) == 1, "not kept");
	return TP_TEST_DONE();
}
