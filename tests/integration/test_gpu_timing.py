"""GPU times on a loaded machine, against the simulation's truth
(tests/sim/).

Training nodes run busy data-loader CPUs: while these runs go on, busy
processes compete for the CPUs (LOAD of them), and a share of CUPTI's
clock reads lose the CPU for 10 us just before or after they read
(SIM_PREEMPT_PCT, the simulation's repeatable preemption). Where records
come in CUPTI's own clock (no timestamp callback of tprof's: CUDA
12.6 Update 2 to 13.0.x), that clock also runs 50 ppm off the host's
raw clock (SIM_REALTIME_PPM: CLOCK_REALTIME while NTP slews it). The
program launches at a steady pace over several of tprof's batches
(tests/sim/progs/paced.cu).

Each run checks: every GPU op once with its duration; every start
within 1 us of when the GPU started it, mapped to the trace's clock; no
op placed before the call that launched it (none moved: the count is
0). TIMING_RUNS=N repeats every case N times (make test-timing: 10).
"""
import os
import subprocess
import sys

import simrun
from simrun import KIND
from tplib import SANITIZE, check, cleanup, done, eq, skip, xevents

RUNS = int(os.environ.get("TIMING_RUNS", "1"))
OPS = 1500	# per thread: 0.45 s of launches at least, 3 batches
LOAD = int(os.environ.get("TIMING_LOAD", "3"))
LOADED = {"SIM_PREEMPT_PCT": "30", "SIM_PREEMPT_NS": "10000"}
SLEWED = dict(LOADED, SIM_REALTIME_PPM="50")

# (label, mode, environment, CUPTI's clock): where tprof maps CUPTI's
# clock itself (13.3 with several subscribers: its timestamp callback is
# process-wide, so tprof registers none), and where CUPTI maps tprof's
# (its timestamp callback, on every other version).
CASES = (
    ("CUDA 13.3, several subscribers, CUPTI's clock", 13,
     dict(SLEWED, SIM_CUPTI_VERSION="130300"), True),
    ("CUDA 12.9 (API 28), tprof's timestamp callback", 12, SLEWED, False),
    ("CUDA 13.1, tprof's timestamp callback", 13, LOADED, False),
)


def ns(us):
    return round(us * 1000)


def cpu_line(r):
    """Trace time minus CLOCK_MONOTONIC_RAW as a line over the run, from
    the calls both saw (the hook's start is read just before the call
    the simulation stamps): the median of each tenth of the run, fitted.
    A line, not one offset: the trace's tick rate is calibrated once,
    to about a ppm, and both CPU and GPU events follow it."""
    api = r.log.api_by_corr()
    pts = sorted((api[c]["enter_raw"], ns(e["ts"]) - api[c]["enter_raw"])
                 for e in xevents(r.trace)
                 if e.get("cat") in ("cuda_runtime", "cuda_driver") and
                 (c := e["args"].get("correlation")) in api)
    if len(pts) < 20:
        return None
    bins = []
    for i in range(10):
        part = pts[i * len(pts) // 10:(i + 1) * len(pts) // 10]
        d = sorted(p[1] for p in part)
        bins.append((sum(p[0] for p in part) / len(part), d[len(d) // 2]))
    mx = sum(b[0] for b in bins) / len(bins)
    my = sum(b[1] for b in bins) / len(bins)
    sxx = sum((b[0] - mx) ** 2 for b in bins)
    slope = sum((b[0] - mx) * (b[1] - my) for b in bins) / sxx if sxx else 0
    return lambda raw: my + slope * (raw - mx)


def start_errors(r):
    """Each GPU op's trace start minus its true start, mapped (ns)."""
    line = cpu_line(r)
    by = {}
    for e in sorted((e for e in xevents(r.trace) if e.get("cat") in KIND),
                    key=lambda e: e["ts"]):
        by.setdefault((e["args"]["correlation"], KIND[e["cat"]]),
                      []).append(e)
    errs = []
    for o in sorted(r.log.gpu_ops(), key=lambda o: o["start_raw"]):
        evs = by.get((o["corr"], o["kind"]))
        if evs and line:
            errs.append((round(ns(evs.pop(0)["ts"]) - o["start_raw"] -
                               line(o["start_raw"])), o["corr"]))
    return errs


def one(label, mode, env, cupti_clock):
    r = simrun.sim_run([simrun.sim_prog("paced", mode), str(OPS)], mode=mode,
                       env=env)
    simrun.exact(label, r, 2 * OPS)
    if not (r.trace and r.log):
        cleanup(r)
        return
    errs = start_errors(r)
    worst = max((abs(e) for e, _ in errs), default=None)
    if "thread" in SANITIZE:
        skip("%s: every start within 1 us of the GPU's, mapped" % label,
             "TSan's slower clock reads widen every clock pair past 1 us")
    else:
        check("%s: every start within 1 us of the GPU's, mapped" % label,
              errs and worst <= 1000,
              "worst %s ns; %s" % (worst, sorted(errs, key=lambda x:
                                                 -abs(x[0]))[:5]))
    cu = r.trace["tprof"]["cupti"]
    eq("%s: no GPU op before its launch call (none moved)" % label,
       (cu["shifted"], cu["shifted_max_ns"]), (0, 0))
    if cupti_clock:
        check("%s: CUPTI's clock sampled every batch, the preempted "
              "samples rejected or outweighed" % label,
              cu["timestamps"] == "cupti" and cu["clock_samples"] >= 3 and
              cu["clock_bracket_ns"] < 5000,
              {k: cu[k] for k in ("timestamps", "clock_samples",
                                  "clock_rejected", "clock_bracket_ns")})
    if RUNS > 1:
        print("INFO %s: worst start error %s ns over %d ops" %
              (label, worst, len(errs)))
    cleanup(r)


def main():
    hogs = [subprocess.Popen([sys.executable, "-c", "while True: pass"])
            for _ in range(LOAD)]
    try:
        for i in range(RUNS):
            for label, mode, env, cupti_clock in CASES:
                one(label + (", run %d" % (i + 1) if RUNS > 1 else ""),
                    mode, env, cupti_clock)
    finally:
        for p in hogs:
            p.kill()
            p.wait()


main()
done()
