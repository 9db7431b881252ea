"""CUPTI versions with known bugs, against the simulation reporting that
version (tests/sim/: SIM_CUPTI_VERSION; the bugs themselves are modelled
as NVIDIA's release notes and Kineto's issues describe them, switched on
by the reported version, SIM_BUG_<NAME>=0|1 to force):

- zero kernel timestamps with a timestamp callback (SIM_BUG_ZERO_TS): off
  on every version (no NVIDIA note documents it), forced on to check
  that tprof counts such records;
- below API 27: a refused buffer request crashes CUPTI (Kineto #1534,
  SIM_BUG_REFUSED_CRASH);
- 13.0 GA (API 130000): refused by tprof;
- 13.2: slow when CUPTI is called repeatedly: tprof's periodic calls are
  rare (its flush every 200 ms).
"""
from simrun import KIND, exact, sim_prog, sim_run, warnings
from tplib import SANITIZE, check, cleanup, done, eq, skip, tprof_check, xevents

def ts_callbacks(r):
    return [e for e in r.log.of("cupti")
            if e.get("call") == "timestamp_callback" and e.get("set")]


# CUDA 12.9 (API 28), 12.6 (API 24) and 13.0 Update 1 (130001): tprof
# registers its timestamp callback on every version (no NVIDIA note
# documents the zero-timestamp bug once assumed for 12.6 Update 2 -
# 13.0.x: docs/design/cupti-rules.md), and every duration is exact.
for mode, ver, label in ((12, None, "CUDA 12.9 (API 28)"),
                         (12, "24", "CUDA 12.6 (API 24)"),
                         (13, "130001", "CUDA 13.0 Update 1")):
    env = {"SIM_CUPTI_VERSION": ver} if ver else {}
    r = sim_run([sim_prog("two_threads", mode), "50"], env=env, mode=mode)
    exact(label, r, 200)
    if r.trace and r.log:
        cu = r.trace["tprof"]["cupti"]
        eq("%s: tprof's timestamp callback registered, no zero timestamp" %
           label, (len(ts_callbacks(r)), cu["timestamps"],
                   cu["zero_timestamps"]), (1, "tprof", 0))
    cleanup(r)

# Should a CUPTI have that bug, the simulation forced to it: kernels come
# with zero timestamps, counted, never placed at 0 in the trace.
r = sim_run([sim_prog("two_threads"), "50"], env={"SIM_BUG_ZERO_TS": "1"})
if check("zero-timestamp bug forced at 13.1: a trace", r.trace, r.stderr):
    cu = r.trace["tprof"]["cupti"]
    check("zero-timestamp bug forced at 13.1: tprof's callback registered "
          "and the kernels' zero timestamps counted",
          len(ts_callbacks(r)) == 1 and cu["zero_timestamps"] > 0,
          (ts_callbacks(r), cu["zero_timestamps"]))
    tprof_check(r.path, "zero-timestamp bug forced at 13.1: tprof check")
cleanup(r)

# Below API 27 a refused buffer crashes CUPTI: with a 2 MiB cap and four
# threads each holding a buffer, tprof lends past its cap (records
# counted as discarded) instead of refusing; the program runs to its end.
# At API 27 the same run refuses (the refusal is counted, no crash), and
# the simulation does crash when its refusal bug is forced on there.
churn = [sim_prog("churn", 12), "4", "0.6"]
cap = {"TPROF_CUPTI_BUFFER_MB": "2"}
r = sim_run(churn, env=dict(cap, SIM_CUPTI_VERSION="24"), mode=12)
eq("API 24, buffers past the cap: the program runs to its end", r.rc, 0)
check("API 24, buffers past the cap: no buffer refused, no crash",
      r.log and not r.log.of("abort") and r.trace and
      r.trace["tprof"]["cupti"]["refused_buffers"] == 0 and
      r.trace["tprof"]["cupti"]["discarded"] > 0,
      (r.stderr[-800:], r.trace and r.trace["tprof"]["cupti"]))
cleanup(r)
r = sim_run(churn, env=dict(cap, SIM_CUPTI_VERSION="27"), mode=12)
check("API 27, buffers past the cap: refused, counted, no crash",
      r.rc == 0 and r.trace and
      r.trace["tprof"]["cupti"]["refused_buffers"] > 0 and
      r.log.dropped() > 0, (r.rc, r.stderr[-800:]))
cleanup(r)
r = sim_run(churn, env=dict(cap, SIM_CUPTI_VERSION="27",
                            SIM_BUG_REFUSED_CRASH="1"), mode=12)
check("API 27 with the refusal bug forced: the simulation crashes (the "
      "case tprof avoids below 27)",
      r.rc != 0 and r.log and r.log.of("abort"), (r.rc, r.stderr[-800:]))
cleanup(r)

# 13.0 GA: refused with one warning naming the fix; CPU side traced; no
# CUPTI activity call made.
r = sim_run([sim_prog("two_threads"), "20"],
            env={"SIM_CUPTI_VERSION": "130000"})
w = warnings(r)
check("13.0 GA: one warning naming Update 1",
      len(w) == 1 and "CUPTI 13.0 GA (API version 130000)" in w[0] and
      "Update 1" in w[0], w)
if check("13.0 GA: the program ends well, a trace", r.rc == 0 and r.trace,
         r.stderr):
    cats = {e.get("cat") for e in xevents(r.trace)}
    check("13.0 GA: CPU-side calls traced, no GPU op",
          "cuda_runtime" in cats and not cats & set(KIND), cats)
    eq("13.0 GA: tprof made no activity call into this CUPTI",
       [e["call"] for e in r.log.of("cupti")], [])
cleanup(r)

# 13.2: tprof's periodic CUPTI calls (its flushes) stay 200 ms apart.
# The gaps need two flushes: on a loaded machine the writer's cycles
# can outlast a 1.5 s program, which then runs again for 6 s.
for secs in ("1.5", "6"):
    r = sim_run([sim_prog("churn"), "2", secs],
                env={"SIM_CUPTI_VERSION": "130200"})
    fl = sorted(e["start_raw"] for e in r.log.of("cupti")
                if e["call"] == "flush") if r.log else []
    if len(fl) >= 2 or r.rc != 0 or not r.trace:
        break
    cleanup(r)
if check("13.2: the program ends well, a trace", r.rc == 0 and r.trace,
         r.stderr[-800:]):
    gaps = [(b - a) / 1e6 for a, b in zip(fl, fl[1:])]
    if "thread" in SANITIZE and len(fl) < 2:
        # The flushes come from the writer's cycles, which under TSan
        # last longer than the 1.5 s program when two threads launch.
        skip("13.2: periodic flushes no more often than every 200 ms",
             "timing: %d periodic flush(es) in the 1.5 s program: TSan's "
             "writer cycles outlast it" % len(fl))
    else:
        check("13.2: periodic flushes no more often than every 200 ms",
              len(fl) >= 2 and min(gaps) >= 190, gaps)
cleanup(r)

done()
