/* GPU tracks (cupti/tracks.c): ops keep their times; an op overlapping
 * one of its track goes to the next lane, whatever order the records
 * arrive in; and GPU records are mapped by the very function that maps
 * CPU events, so the two cannot drift apart over a long run. */
#include <stdlib.h>

#include "cupti/cupti.h"
#include "cupti/tracks.h"
#include "record/clock.h"
#include "session/session.h"
#include "session/timeline.h"
#include "tp_test.h"

#define LANE(tid, k) ((tid) ^ ((uint32_t)(k) << TP_LANE_SHIFT))

static uint32_t place(int64_t s, int64_t e)
{
	int late;
	struct tp_track *t = tp_track_place(0, 7, s, e, &late);

	return t ? t->tid : 0xffffffffu;
}

/* TP_CHECK_INT evaluates its arguments twice: place once. */
#define PLACED(name, s, e, want)                                         \
	do {                                                             \
		uint32_t got_ = place(s, e);                             \
		TP_CHECK_INT(name, got_, want);                          \
	} while (0)

static void test_lanes(void)
{
	tp_track_reset();
	PLACED("tracks: first op on the stream's track", 100, 200, 7);
	PLACED("tracks: a later op on the same track", 200, 300, 7);
	PLACED("tracks: an earlier op that fits, arriving late", 50, 100, 7);
	PLACED("tracks: a partial overlap goes to lane 2", 150, 250,
	       LANE(7, 1));
	PLACED("tracks: an op inside ops of lanes 1 and 2: lane 3", 210, 220,
	       LANE(7, 2));
	PLACED("tracks: overlapping three lanes: lane 4", 215, 260,
	       LANE(7, 3));
	PLACED("tracks: a zero-length op at a free time", 400, 400, 7);
	PLACED("tracks: a second zero-length op at that time: lane 2", 400,
	       400, LANE(7, 1));
	PLACED("tracks: an op ending where a zero-length one starts fits",
	       350, 400, 7);
	PLACED("tracks: an op starting there does not", 400, 450,
	       LANE(7, 2));
}

/* Out of order as per-thread buffers deliver them: two threads' ops on
 * one stream, each thread's in order, the threads' batches interleaved
 * in reverse. Serial ops never overlap, so all stay on lane 0. */
static void test_out_of_order(void)
{
	unsigned i, off = 0;

	tp_track_reset();
	for (i = 0; i < 1000; i++)
		if (place(2000 + i * 20ll, 2010 + i * 20ll) != 7)
			off++;
	for (i = 0; i < 1000; i++)
		if (place(2010 + i * 20ll, 2020 + i * 20ll) != 7)
			off++;
	TP_CHECK_INT("tracks: interleaved serial ops, delivered per thread, "
		     "all on lane 0", off, 0);
}

/* An hour of ticks at 2.9 GHz, the map's rate off by 1 ppm as a
 * calibration can be: a CPU event and a GPU record of the same tick land
 * at the same trace time. (Before, CUPTI returned CLOCK_MONOTONIC_RAW and
 * the hooks' ticks went through the map: 3.6 ms apart after an hour.) */
static void test_one_clock(void)
{
	struct tp_clock_point a = { 1000000000ull, 7000000000ull,
				    1800000000000000000ull };
	struct tp_clock_point b = { 1000000000ull + 290000000ull,
				    7000000000ull + 100000100ull, 0 };
	uint64_t hour = 3600ull * 2900000000ull, t = a.ticks + hour;
	int64_t cpu, gpu, old_gpu;

	tp_clock_map_from(&tp_tl.map, a, b);
	tp_tl.ready = 1;
	tp_sess.base_ns = 1799999900000000000ll;
	tp_cupti_convert_init(1);
	cpu = tp_trace_ns(t);
	gpu = tp_cupti_trace_ns(&tp_tl.map, t);
	TP_CHECK_INT("clock: CPU and GPU of one tick after an hour, residual",
		     gpu - cpu, 0);
	/* What a CLOCK_MONOTONIC_RAW callback gave: the true raw ns. */
	old_gpu = (int64_t)(a.raw_ns + hour * 10 / 29 + (uint64_t)
			    tp_tl.map.unix_offset - (uint64_t)tp_sess.base_ns);
	TP_CHECK("clock: the old split mapping drifts over that hour",
		 llabs(old_gpu - cpu) > 1000000, "%lld ns",
		 (long long)(old_gpu - cpu));
}

int main(void)
{
	test_lanes();
	test_out_of_order();
	test_one_clock();
	return TP_TEST_DONE();
}
