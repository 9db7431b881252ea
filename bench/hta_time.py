"""make bench's HTA side: HTA's TraceAnalysis(trace_dir=DIR) load, then
get_temporal_breakdown(), as a user runs them, with
HTA_DISABLE_NS_ROUNDING=1 and include_last_profiler_step=True (as `make
test-hta` compares tprof with HTA). Prints, in ms measured inside the
process, the import of HTA, the load (TraceAnalysis) and the breakdown;
the caller times the whole process, interpreter start included.

usage: python bench/hta_time.py DIR"""
import os
import sys
import time

t0 = time.perf_counter()
os.environ["HTA_DISABLE_NS_ROUNDING"] = "1"
from hta.trace_analysis import TraceAnalysis  # noqa: E402

t1 = time.perf_counter()
a = TraceAnalysis(trace_dir=sys.argv[1], include_last_profiler_step=True)
t2 = time.perf_counter()
tb = a.get_temporal_breakdown(visualize=False)
t3 = time.perf_counter()
if len(tb) != len(a.t.traces):
    sys.exit("hta_time: %d ranks in the breakdown, %d loaded" %
             (len(tb), len(a.t.traces)))
print("%.3f %.3f %.3f" % ((t1 - t0) * 1e3, (t2 - t1) * 1e3,
                          (t3 - t2) * 1e3))
