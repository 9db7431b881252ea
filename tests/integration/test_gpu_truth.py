"""GPU truth: tprof on a simulated CUDA 13 machine (tests/sim/), checked
against the simulation's own log of what ran where and when.

The simulation is written from NVIDIA's headers and documentation, not
from tprof's code, and behaves as CUDA 13 does at its worst: <<<>>>
launches through __cudaLaunchKernel (CUPTI cbid 505), one activity buffer
per thread (records of one stream arrive out of order), CUPTI's own
delivery thread, a GPU clock that drifts against the host's, the
runtime's atexit teardown after which CUPTI delivers nothing,
cuptiFinalize aborting when another thread is inside a CUDA call.
"""
import os
import re
import time

import simrun
from simrun import KIND, flows
from tplib import SANITIZE, cleanup, done, skip, xevents

# Every case runs in both modes of the simulation (CUDA 13, and CUDA 12:
# libcudart.so.12, CUPTI 12.9, <<<>>> through cudaLaunchKernel); each
# PASS line names its mode.
M = simrun.Modal()
check, eq, tprof_check = M.check, M.eq, M.tprof_check
sim_prog, sim_run = M.sim_prog, M.sim_run



GPU_CATS = ("kernel", "gpu_memcpy", "gpu_memset")

def ns(us):
    return round(us * 1000)


def gpu_events(t):
    return [e for e in xevents(t) if e.get("cat") in GPU_CATS]


def offset(r):
    """Trace time minus the simulation's CLOCK_MONOTONIC_RAW, from the
    calls both saw: the hook's start is read just before the real call,
    whose entry the simulation stamps (a median of the differences)."""
    api = r.log.api_by_corr()
    d = sorted(ns(e["ts"]) - api[e["args"]["correlation"]]["enter_raw"]
               for e in xevents(r.trace)
               if e.get("cat") in ("cuda_runtime", "cuda_driver") and
               e["args"].get("correlation") in api)
    return d[len(d) // 2] if d else None


def match(r):
    """(log op, trace event) pairs: by correlation id, kind and order."""
    by = {}
    for e in sorted(gpu_events(r.trace), key=lambda e: e["ts"]):
        by.setdefault((e["args"]["correlation"], KIND[e["cat"]]), []).append(e)
    pairs, missing = [], []
    for o in sorted(r.log.gpu_ops(), key=lambda o: o["start_raw"]):
        evs = by.get((o["corr"], o["kind"]))
        if evs:
            pairs.append((o, evs.pop(0)))
        else:
            missing.append(o)
    return pairs, missing


def partial_overlaps(t):
    """Pairs of X events on one track that overlap without nesting."""
    tracks, bad = {}, 0
    for e in xevents(t):
        tracks.setdefault((e["pid"], e["tid"]), []).append(
            (ns(e["ts"]), ns(e["ts"]) + ns(e["dur"])))
    for evs in tracks.values():
        evs.sort(key=lambda x: (x[0], -x[1]))
        stack = []
        for s, e in evs:
            while stack and stack[-1] <= s:
                stack.pop()
            if stack and e > stack[-1]:
                bad += 1
            stack.append(e)
    return bad


def gpu_overlaps(t):
    """GPU ops overlapping at all on one track (a stream runs one op at a
    time: nesting is as wrong as a partial overlap)."""
    tracks, bad = {}, 0
    for e in gpu_events(t):
        tracks.setdefault((e["pid"], e["tid"]), []).append(
            (ns(e["ts"]), ns(e["ts"]) + ns(e["dur"])))
    for evs in tracks.values():
        evs.sort()
        bad += sum(1 for a, b in zip(evs, evs[1:]) if b[0] < a[1])
    return bad


def truth(label, r, expect_ops=None):
    """The properties every run must have against its ground truth."""
    if not check("%s: runs, one trace, a log" % label,
                 r.rc == 0 and r.trace and r.log, (r.rc, r.stderr[-2000:])):
        return None
    ops = r.log.gpu_ops()
    if expect_ops is not None:
        eq("%s: the simulation ran %d GPU ops" % (label, expect_ops),
           len(ops), expect_ops)
    pairs, missing = match(r)
    eq("%s: every GPU op is in the trace" % label,
       (len(pairs), len(missing)), (len(ops), 0))
    s, f = flows(r.trace)
    linked = sum(1 for o, e in pairs
                 if o["corr"] in s and any(x["pid"] == e["pid"] and
                                           x["tid"] == e["tid"] and
                                           x["ts"] == e["ts"]
                                           for x in f.get(o["corr"], [])))
    eq("%s: launch -> GPU op flows, linked / total" % label,
       (linked, len(pairs)), (len(pairs), len(pairs)))
    eq("%s: one flow end per GPU op" % label,
       sum(len(v) for v in f.values()), len(pairs))
    # In host time: CUPTI normalizes the GPU's clock (20 ppm fast in the
    # simulation) to the unit of tprof's timestamp callback (its ticks)
    # by a fitted line, and tprof maps ticks to ns by its own: each end
    # goes through two roundings to integers (<= 1 ns each, in all), and
    # the two rates agree to about 1 ppm.
    bad_dur = [(o["name"], o["end_raw"] - o["start_raw"], ns(e["dur"]))
               for o, e in pairs
               if abs(ns(e["dur"]) - (o["end_raw"] - o["start_raw"])) >
               2 + o["dur"] * 2e-6]
    eq("%s: every duration as the GPU ran it (within 2 ns + 2 ppm)" % label,
       bad_dur[:5], [])
    off = offset(r)
    far = [(o["corr"], ns(e["ts"]) - (o["start_raw"] + off))
           for o, e in pairs if off is not None and
           abs(ns(e["ts"]) - (o["start_raw"] + off)) > 1000]
    if "thread" in SANITIZE:
        # A timing bound, not a race: TSan makes the clock reads that
        # bracket each host/GPU clock pair ~10x slower.
        skip("%s: every start within 1 us of the GPU's, mapped" % label,
             "TSan's slower clock reads widen the host/GPU clock pairs "
             "past 1 us")
    else:
        check("%s: every start within 1 us of the GPU's, mapped" % label,
              off is not None and not far, far[:5])
    eq("%s: no partial overlap on any track" % label,
       partial_overlaps(r.trace), 0)
    eq("%s: no two GPU ops overlap on one track" % label,
       gpu_overlaps(r.trace), 0)
    tprof_check(r.path, "%s: tprof check passes" % label)
    return pairs


def exit_line(r):
    m = re.search(r"GPU: (\d+) records, (\d+) lost", r.stderr)
    return (int(m.group(1)), int(m.group(2))) if m else None


def no_reinit(label, r):
    """No CUPTI call after cuptiFinalize: the simulation logs each one as
    a re-initialisation (and aborts once graphs were launched)."""
    if r.log:
        eq("%s: no CUPTI call after cuptiFinalize (no re-initialisation)"
           % label, [e for e in r.log.of("cupti")
                     if e.get("call") == "reinit"], [])


def cases():
    # Two threads, own streams then one shared stream: 2400 ops.
    r = sim_run([sim_prog("two_threads"), "600"])
    pairs = truth("two threads", r, 2400)
    if pairs:
        cu = r.trace["tprof"]["cupti"]
        eq("two threads: nothing shifted, dropped or lost",
           (cu["shifted"], cu["dropped"], cu["zero_timestamps"],
            cu["unclocked"], cu["unlinked"]), (0, 0, 0, 0, 0))
        # Every op's record, the device's and the context's.
        eq("two threads: the exit line counts what the log delivered",
           exit_line(r), (len(r.log.ops) + 1 + len(r.log.of("context")),
                          r.log.lost() + r.log.dropped()))
        eq("two threads: launches named as the hooks name them",
           sorted({e["name"] for e in xevents(r.trace)
                   if e.get("cat") == "cuda_runtime" and
                   "Launch" in e["name"]}), ["cudaLaunchKernel"])
        # What this mode is: the CUPTI next to the runtime, its version,
        # the launch path CUPTI saw (CUDA 12: the host stub's
        # cudaLaunchKernel, cbid 211; CUDA 13: __cudaLaunchKernel, 505).
        eq("two threads: CUPTI, its API version, the launches' callback id",
           (os.path.basename(cu["library"]), cu["version"],
            sorted({(a["name"], a["cbid"]) for a in r.log.api
                    if a["depth"] == 1 and "Launch" in a["name"]})),
           {12: ("libcupti.so.12", 28, [("cudaLaunchKernel_v7000", 211)]),
            13: ("libcupti.so.13", 130100,
                 [("__cudaLaunchKernel_v13000", 505)])}[M.mode])
    cleanup(r)

    # CUDA 12 code compiled with __NV_LEGACY_LAUNCH (or by an older nvcc):
    # the host stub calls cudaLaunchKernel itself.
    if M.mode == 12:
        r = sim_run([sim_prog("two_threads_legacy"), "100"])
        if truth("two threads, legacy launch stub", r, 400):
            eq("two threads, legacy launch stub: launched by "
               "cudaLaunchKernel itself, callback id 211",
               sorted({(a["name"], a["cbid"]) for a in r.log.api
                       if a["depth"] == 1 and "Launch" in a["name"]}),
               [("cudaLaunchKernel_v7000", 211)])
        cleanup(r)

    # The program exits with 85 kernels (170 ms of work) still running: CUDA
    # tears itself down in its atexit handlers, after which CUPTI delivers
    # nothing; tprof's own handler, registered after CUDA's, runs first.
    r = sim_run([sim_prog("exit_inflight"), "85"])
    pairs = truth("exit in flight", r, 85)
    if pairs:
        eq("exit in flight: the exit line counts every record, 0 lost",
           exit_line(r), (len(r.log.ops) + 1 + len(r.log.of("context")), 0))
        eq("exit in flight: the simulation lost nothing at its teardown",
           r.log.lost("teardown"), 0)
        eq("exit in flight: tprof's own wait for the GPU is not in the trace",
           [e["name"] for e in xevents(r.trace) if e.get("cat") == "cuda_sync"],
           [])
    cleanup(r)

    # A kernel that does not end before exit (60 s): tprof's exit handler
    # gives up on the GPU after 5 s with one warning; the CPU trace is
    # complete, the program's exit status unchanged.
    t0 = time.time()
    r = sim_run([sim_prog("exit_inflight"), "1", "60000000000"])
    took = time.time() - t0
    eq("GPU that does not finish at exit: exit status", r.rc, 0)
    check("GPU that does not finish at exit: over within 5 s + a little",
          took < 12, took)
    w = [l for l in r.stderr.splitlines() if l.startswith("tprof: warning")]
    check("GPU that does not finish at exit: one warning saying so",
          len(w) == 1 and "did not finish within 5000 ms" in w[0], w)
    if r.trace:
        eq("GPU that does not finish at exit: the CPU side is complete",
           [e["name"] for e in xevents(r.trace) if e.get("cat") == "cuda_runtime"],
           ["cudaMalloc", "cudaLaunchKernel"])
        tprof_check(r.path, "GPU that does not finish at exit: tprof check")
    cleanup(r)

    # Only the driver API, dlopen-ed (JAX, Triton): no hook sees a call;
    # CUPTI starts from the driver's cuInit (CUDA_INJECTION64_PATH) and
    # records the launches from its callbacks.
    r = sim_run([sim_prog("driver_only"), "20"])
    pairs = truth("driver only", r, 20)
    if pairs:
        inj = r.log.of("injection")
        eq("driver only: the driver loaded libtprof through "
           "CUDA_INJECTION64_PATH", [(os.path.basename(i["path"]), i["found"])
                                     for i in inj], [("libtprof.so", 1)])
        calls = {e["args"]["correlation"]: e for e in xevents(r.trace)
                 if e.get("cat") == "cuda_driver"}
        eq("driver only: each kernel's launch is a cuda_driver cuLaunchKernel",
           sorted({calls[o["corr"]]["name"] for o, e in pairs
                   if o["corr"] in calls}), ["cuLaunchKernel"])
    cleanup(r)

    # GPU code in a library dlopen-ed after the program started.
    r = sim_run([sim_prog("late_main"), sim_prog("libgpu_late.so"), "10"])
    truth("late module", r, 10)
    cleanup(r)

    # A module is unloaded (its kernel names go with it, as CUPTI's records
    # name them) and another loaded, whose names take their memory: every
    # kernel keeps its own name.
    r = sim_run([sim_prog("driver_only"), "10", "reload"])
    truth("unloaded module", r, 20)
    if r.trace:
        eq("unloaded module: every kernel keeps its own name",
           sorted({(e["name"], sum(1 for x in xevents(r.trace)
                                   if x["name"] == e["name"]))
                   for e in xevents(r.trace) if e.get("cat") == "kernel"}),
           [("triton_per_fused_native_layer_norm_2", 10),
            ("triton_poi_fused_add_1", 5), ("triton_red_fused_0", 5)])
    cleanup(r)

    # Work on the second GPU of two, no CONTEXT record (a context made before
    # tprof started, a green context): kernels and the device-wide sync land
    # on GPU 1, the sync's device learned from the kernels' context.
    r = sim_run([sim_prog("device1"), "10"],
                env={"SIM_DEVICES": "2", "SIM_NO_CONTEXT_RECORDS": "1"})
    truth("second GPU", r, 10)
    if r.trace:
        eq("second GPU: kernels and the sync on GPU 1",
           sorted({(e["cat"], e["pid"]) for e in xevents(r.trace)
                   if e.get("cat") in ("kernel", "cuda_sync")}),
           [("cuda_sync", 1), ("kernel", 1)])
    cleanup(r)

    # A graph launched 5 times: each of its 3 kernels carries the graph's
    # ids and a flow from its cudaGraphLaunch.
    r = sim_run([sim_prog("graph"), "5"])
    pairs = truth("graph", r, 15)
    if pairs:
        launches = {e["args"]["correlation"] for e in xevents(r.trace)
                    if e["name"] == "cudaGraphLaunch"}
        eq("graph: every kernel is a node of a graph launch",
           sum(1 for o, e in pairs if o["corr"] in launches and
               "graph id" in e["args"]), 15)
    cleanup(r)

    # The last recording window ends while 4 threads keep launching: CUPTI
    # is let go in an API exit callback with no other thread inside CUDA
    # (the simulation aborts the process otherwise), and the program goes on.
    # 2 s: CUPTI is let go a grace time (at least 0.5 s) after the 300 ms
    # window, at the writer's next cycle, which a loaded machine delays.
    r = sim_run([sim_prog("churn"), "4", "2.0", "tail"],
                env={"TPROF_DURATION": "300ms"})
    eq("window end: the program runs to its end (no abort)", r.rc, 0)
    check("window end: no abort in the simulation",
          r.log and not r.log.of("abort"), r.stderr[-1500:])
    no_reinit("window end", r)
    if r.trace:
        cu = r.trace["tprof"]["cupti"]
        if "thread" in SANITIZE:
            # CUPTI is let go in a gap between the threads' calls, or after
            # a grace time: under TSan the 1.2 s program can end first.
            skip("window end: CUPTI finalized after the last window, the "
                 "simulation saw cuptiFinalize", "timing: TSan's slower "
                 "calls can outlast the program before CUPTI is let go")
        else:
            eq("window end: CUPTI finalized after the last window",
               (cu["finalized"], cu["stopped_why"]),
               (1, "the last recording window ended"))
            check("window end: the simulation saw cuptiFinalize",
                  any(e.get("call") == "finalize"
                      for e in r.log.of("cupti")), r.log.of("cupti"))
        tprof_check(r.path, "window end: tprof check passes")
    cleanup(r)

    # The detach's forced flush takes 600 ms (SIM_FLUSH_FORCED_NS); it starts
    # at the main thread's call at 2.0 s, when it is alone, and a worker
    # enters cudaStreamSynchronize (1 s) at 2.2 s, during the flush. "Alone"
    # no longer holds after the flush: cuptiFinalize waits for a later exit
    # callback, once the worker is out (the simulation aborts otherwise).
    r = sim_run([sim_prog("detach_race")],
                env={"TPROF_DURATION": "300ms",
                     "SIM_FLUSH_FORCED_NS": "600000000"})
    eq("detach race: the program runs to its end (no abort)", r.rc, 0)
    check("detach race: no abort in the simulation",
          r.log and not r.log.of("abort"), r.stderr[-1500:])
    no_reinit("detach race", r)
    if r.log:
        sync = [a for a in r.log.api
                if a["name"].startswith("cudaStreamSynchronize")]
        flush = [e for e in r.log.of("cupti") if e["call"] == "flush_forced"]
        fin = [e for e in r.log.of("cupti") if e["call"] == "finalize"]
        check("detach race: the worker entered its sync during the forced "
              "flush (the race's window)",
              len(sync) == 1 and len(flush) >= 1 and
              flush[0]["start_raw"] < sync[0]["enter_raw"] < flush[0]["end_raw"],
              (sync, flush))
        check("detach race: cuptiFinalize after the worker came in, with no "
              "other thread inside a CUDA call",
              len(sync) == 1 and len(fin) == 1 and
              fin[0]["raw"] > sync[0]["enter_raw"] and
              not [a for a in r.log.api if a["tid"] != fin[0]["tid"] and
                   a["enter_raw"] < fin[0]["raw"] < a["exit_raw"]],
              (sync, fin))
    if r.trace:
        cu = r.trace["tprof"]["cupti"]
        eq("detach race: CUPTI finalized after the last window",
           (cu["finalized"], cu["stopped_why"]),
           (1, "the last recording window ended"))
        tprof_check(r.path, "detach race: tprof check passes")
    cleanup(r)

    # A kernel always running through the last window's end: the detach's
    # forced flush hands back a buffer, cuptiFinalize follows at once,
    # and the writer converts that buffer after it, from what it read
    # before (each buffer's records are found as CUPTI hands it back).
    r = sim_run([sim_prog("window_busy"), "1.5"],
                env={"TPROF_DURATION": "300ms"})
    eq("busy window end: the program runs to its end (no abort)", r.rc, 0)
    if r.trace and r.log:
        cu = r.trace["tprof"]["cupti"]
        fin = [e for e in r.log.of("cupti") if e["call"] == "finalize"]
        if "thread" in SANITIZE:
            skip("busy window end: finalized right after a forced flush "
                 "that handed a buffer back", "timing: under TSan the "
                 "detach may come after the program")
        else:
            check("busy window end: finalized right after a forced flush "
                  "that handed a buffer back",
                  cu["finalized"] == 1 and len(fin) == 1 and
                  any(e.get("by") == "flush-forced"
                      for e in r.log.of("delivered")),
                  (cu["finalized"], fin))
        no_reinit("busy window end", r)
        tprof_check(r.path, "busy window end: tprof check passes")
    cleanup(r)

    # A library with its own static runtime (cuBLAS, cuDNN, NCCL) unloads
    # its module from its own exit handler, which runs before tprof's:
    # CUPTI is on, its last kernels' records not yet delivered. tprof
    # flushes in the unload's API enter callback (never in CUPTI's
    # resource callback, where the simulation aborts on a flush): every
    # kernel keeps its name.
    r = sim_run([sim_prog("static_main"), "5"])
    pairs = truth("static runtime unloading at exit", r, 100)
    if pairs:
        check("static runtime unloading at exit: no abort in the simulation",
              not r.log.of("abort"), r.log.of("abort"))
        eq("static runtime unloading at exit: every kernel keeps its name",
           sorted({(e["name"], sum(1 for x in xevents(r.trace)
                                   if x["name"] == e["name"]))
                   for e in xevents(r.trace) if e.get("cat") == "kernel"}),
           [("sm90_xmma_gemm_f16f16_f32", 50), ("splitKreduce_kernel", 50)])
    cleanup(r)

    # The driver initialized and a context made before tprof started CUPTI
    # (CUPTI attached late): no DEVICE or CONTEXT record would come, so
    # tprof enables them with cuptiActivityEnableAndDump, which dumps the
    # existing ones: the GPU is named and kernels get occupancy.
    r = sim_run([sim_prog("late_main"), sim_prog("libgpu_late.so"), "10",
                 "init"], env={"CUDA_INJECTION64_PATH": ""})
    pairs = truth("CUPTI attached after cuInit", r, 10)
    if pairs:
        eq("CUPTI attached after cuInit: the driver was initialized before "
           "CUPTI was loaded", [e["tool"] for e in r.log.of("driver_init")],
           [0])
        eq("CUPTI attached after cuInit: the device named, its SMs known",
           [(d["id"], d["name"], d["numSms"], d["warpSize"])
            for d in r.trace["deviceProperties"]],
           [(0, "NVIDIA H100 80GB HBM3", 132, 32)])
        eq("CUPTI attached after cuInit: every kernel has its occupancy",
           sum(1 for e in xevents(r.trace) if e.get("cat") == "kernel" and
               "est. achieved occupancy %" in e["args"]), 10)
    cleanup(r)

    # With a graph launched, CUPTI is disabled, never finalized.
    r = sim_run([sim_prog("graph"), "400"], env={"TPROF_DURATION": "50ms"})
    eq("graphs: the program runs to its end", r.rc, 0)
    if r.trace:
        cu = r.trace["tprof"]["cupti"]
        check("graphs: CUPTI not finalized (disabled only, or the trace "
              "ended first)", cu["finalized"] in (0, 2) and
              not any(e.get("call") == "finalize" for e in r.log.of("cupti")),
              (cu["finalized"], r.log.of("cupti")))
    cleanup(r)



def launch_storm():
    """Two threads launching as fast as they can for 1 s (a few hundred
    thousand launches a second here): the GPU records of a launch come a
    flush period and a writer cycle after it, by when more than 65,536
    later calls have been noted; every kernel must still find its launch
    (cupti.unlinked 0, a flow from its launch's thread), none left out."""
    r = simrun.sim_run([simrun.sim_prog("churn"), "2", "1.0"],
                       env={"SIM_LOG": ""})
    M.eq("launch storm: the program runs to its end", r.rc, 0)
    if not r.trace:
        return cleanup(r)
    cu = r.trace["tprof"]["cupti"]
    ks = [e for e in xevents(r.trace) if e.get("cat") == "kernel"]
    launches = {e["args"]["correlation"]: e["tid"] for e in xevents(r.trace)
                if e.get("cat") == "cuda_runtime" and
                "correlation" in e.get("args", {})}
    s, f = flows(r.trace)
    linked = sum(1 for k in ks if k["args"]["correlation"] in s and
                 s[k["args"]["correlation"]]["tid"] ==
                 launches.get(k["args"]["correlation"]))
    M.eq("launch storm: every kernel linked to its launch (%d kernels, "
         "link table %d slots)" % (len(ks), cu.get("link_slots", 0)),
         (cu["unlinked"], cu["dropped"], linked), (0, 0, len(ks)))
    M.check("launch storm: a storm indeed (over 100,000 kernels)",
            len(ks) > 100000 or SANITIZE, len(ks))
    cleanup(r)


for M.mode in (13, 12):
    cases()
M.mode = 13
launch_storm()
done()
