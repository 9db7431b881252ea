"""make gpu-check: the GPU properties a first run on a real GPU must show,
in one command (docs/gpu-validation.md).

Runs small CUDA programs under tprof on the GPU (the programs prebuilt in
build/gpu/ by `make gpu-check-build`: no nvcc, make or gcc needed here)
or, with --sim, on the simulated CUDA 13 machine (tests/sim/), and judges
each trace as it would be judged on a GPU, with tracecheck.py's checkers.
Prints one line per property, "PASS name", "FAIL name: why" or
"SKIP name: why", each followed by an indented line of figures; writes
RESULT_DIR/gpu-check.json (the environment, every line and its figures);
exits 1 on any FAIL, 3 when there is no GPU (nothing validated).

What the GPU says of itself comes from the programs (cudaEvent elapsed
times; each PDL kernel's first and last reading of the global timer), or
on the simulation from its log (SIM_LOG), which has no device code.
"""
import argparse
import collections
import datetime
import json
import os
import re
import shutil
import socket
import statistics
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import tracecheck as tc  # noqa: E402
from tracecheck import Problems, kernels, ns, xs  # noqa: E402

sys.path.insert(0, os.path.join(tc.ROOT, "tests", "sim"))
from simlog import SimLog  # noqa: E402

ROOT = tc.ROOT
BUILD = os.environ.get("TPROF_TEST_BUILD") or os.path.join(ROOT, "build")
LIB = os.path.join(BUILD, "libtprof.so")
# Real GPU: the simulation's programs are built as truth_NAME (run.sh).
REAL_NAMES = {"two_threads": "truth_two_threads", "graph": "truth_graph",
              "exit_inflight": "truth_exit_inflight", "churn": "truth_churn"}
SIM_DIRS = (os.path.join(BUILD, "tests", "sim", "bin"),
            os.path.join(BUILD, "tests", "gpu", "sim"))
# cudaEventElapsedTime against a kernel's duration: the events' 0.5 us
# resolution at each end, a small gap between the event and the kernel
# on the GPU, and the two clocks' rates (tprof's ticks, the GPU's).
# On an idle stream the first event is reached before the kernel is
# launched: the launch's time (tprof's hooks, CUPTI's callbacks) counts.
EVENT_SHORT_US, EVENT_LONG_US, EVENT_RATE = 1.5, 20.0, 1e-3
EVENT_IDLE_US = 1000.0
# A PDL kernel's last global-timer reading comes before its CUPTI end,
# give or take the two clocks' conversion and the timer's resolution.
PDL_SLACK_US = 2.0


class Machine:
    """Where the programs run: a real GPU, or the simulation."""

    def __init__(self, sim, res):
        self.sim, self.res = sim, res
        self.traces = []    # (label, trace) of every run, for the flows

    def prog(self, name):
        if not self.sim:
            return os.path.join(BUILD, "gpu", REAL_NAMES.get(name, name))
        for d in SIM_DIRS:
            if os.path.exists(os.path.join(d, name)):
                return os.path.join(d, name)
        return os.path.join(SIM_DIRS[0], name)

    def env(self, d, label, extra, native):
        """native: a program of build/gpu (or the simulation's), which
        finds the CUDA libraries next to it; else a program that brings
        its own (torch), run through tprof-run."""
        e = {k: v for k, v in os.environ.items()
             if not k.startswith("TPROF_") and k != "LD_PRELOAD"}
        libs = os.path.join(BUILD, "tests", "sim", "lib") if self.sim else \
            os.path.join(BUILD, "gpu")
        e.update(TPROF_OUTPUT_DIR=os.path.join(d, "trace"),
                 TPROF_NAME=label, TPROF_LOG="info")
        if native:
            e["LD_PRELOAD"] = LIB
            e["LD_LIBRARY_PATH"] = libs + (":" + e["LD_LIBRARY_PATH"]
                                           if e.get("LD_LIBRARY_PATH") else "")
        if self.sim:
            e["SIM_LOG"] = os.path.join(d, "sim.log")
        e.update(extra or {})
        return e


class Run:
    """One program run in RES/LABEL/ as run.sh leaves a step (run.cmd,
    .out, .err, .rc; trace/), with its problems and figures so far."""

    def __init__(self, m, label, argv, env=None, timeout=30, native=True):
        self.d = os.path.join(m.res, label)
        shutil.rmtree(self.d, ignore_errors=True)
        os.makedirs(self.d)
        e = m.env(self.d, label, env, native)
        self.fig = {"seconds": self.start(argv, e, timeout)}
        self.rc, self.out, self.err = tc.ran(self.d, "run")
        self.p, self.skip = Problems(), None
        self.t = self.path = self.log = None
        bad = tc.step_problem(self.d, "run")
        if bad and bad[0] == "skipped":
            self.skip = bad[1]
            return
        if bad:
            self.p.add(bad[1])
        self.t, self.path = tc.one_trace(os.path.join(self.d, "trace"),
                                         label, self.p, self.fig)
        if self.t:
            m.traces.append((label, self.t))
        if os.path.exists(e.get("SIM_LOG", "")):
            self.log = SimLog(e["SIM_LOG"])

    def start(self, argv, env, timeout):
        """Runs argv to its end; returns the seconds it took."""
        with open(os.path.join(self.d, "run.cmd"), "w") as f:
            f.write(" ".join(argv) + "\n")
        t0 = time.time()
        with open(os.path.join(self.d, "run.out"), "w") as out, \
                open(os.path.join(self.d, "run.err"), "w") as err:
            try:
                rc = subprocess.run(argv, env=env, stdout=out, stderr=err,
                                    timeout=timeout).returncode
            except subprocess.TimeoutExpired:
                rc = 124
            except OSError as x:
                err.write("%s\n" % x)
                rc = 127
        with open(os.path.join(self.d, "run.rc"), "w") as f:
            f.write("%d\n" % rc)
        return round(time.time() - t0, 2)

    def judge(self, want_ops=None):
        """tracecheck's GPU truth (op count, no overlap on a track, CUPTI
        lost nothing), the trace contract and `tprof check`."""
        if not self.t:
            return
        self.fig.update(tc.truth(self.t, want_ops, self.p)[1])
        c = tc.contract(self.t, Problems())
        self.p.merge(c[0])
        self.fig["cpu_to_gpu_start_us"] = c[1].get("cpu_to_gpu_start_us")
        tc.tprof_check(self.path, self.p)

    def result(self):
        if self.skip:
            return "SKIP", self.skip, self.fig
        probs = self.p.list()
        return ("FAIL", "; ".join(probs), self.fig) if probs else \
            ("PASS", "", self.fig)


def named(t, part):
    return sorted((e for e in kernels(t) if part in e.get("name", "")),
                  key=lambda e: e["ts"])


def cpu_by_corr(t):
    by = collections.defaultdict(list)
    for e in xs(t, tc.CPU_CATS):
        by[e.get("args", {}).get("correlation")].append(e)
    return by


# ---- the properties ----

def two_threads(m):
    """Two threads, each on a stream of its own, then both on one shared
    stream: 2400 ops on three streams, each linked, none overlapping."""
    r = Run(m, "two_threads", [m.prog("two_threads"), "600"])
    r.judge(2400)
    if r.t:
        streams = {e["tid"] for e in xs(r.t, tc.GPU_OPS)}
        r.fig["streams"] = len(streams)
        if len(streams) != 3:
            r.p.add("GPU ops on %d streams, want 3 (two own, one shared)" %
                    len(streams))
    return r.result()


def graphs(m):
    """A graph of 3 kernels launched 50 times: each kernel carries the
    graph's ids and is linked to its cudaGraphLaunch, 3 per launch."""
    r = Run(m, "graph", [m.prog("graph"), "50"])
    r.judge(150)
    if r.t:
        calls = cpu_by_corr(r.t)
        per = collections.Counter()
        for e in kernels(r.t):
            a = e.get("args", {})
            names = [x["name"] for x in calls.get(a.get("correlation"), [])]
            if "graph id" not in a or "graph node id" not in a:
                r.p.add("graph kernel without 'graph id'/'graph node id'",
                        tc.brief(e))
            if not any("GraphLaunch" in n for n in names):
                r.p.add("graph kernel not linked to a cudaGraphLaunch",
                        "%s <- %s" % (tc.brief(e), names))
            per[a.get("correlation")] += 1
        r.fig["graph_launches"] = len(per)
        if sorted(per.values()) != [3] * 50:
            r.p.add("graph launches", "%d launches, kernels per launch %s; "
                    "want 50 of 3" % (len(per), sorted(set(per.values()))))
    return r.result()


def pdl_truth(r, n):
    """Per pair, (primary start, end, secondary start, end) in ns as the
    GPU saw them, or None: the kernels' own timer readings (a real GPU)
    or the simulation's log."""
    out = tc.line_json(r.out, "PDL ") or {}
    if out.get("gpu"):
        return out["gpu"], "the kernels' global timer"
    if not r.log:
        return None, "no GPU times"
    ks = sorted((o for o in r.log.gpu_ops() if o["kind"] == "kernel" and
                 "pdl_" in o["name"]), key=lambda o: o["start_raw"])
    prim = [o for o in ks if "primary" in o["name"]]
    sec = [o for o in ks if "secondary" in o["name"]]
    if len(prim) != n or len(sec) != n:
        return None, "the simulation's log has %d/%d PDL kernels" % (
            len(prim), len(sec))
    return [[a["start_raw"], a["end_raw"], b["start_raw"], b["end_raw"]]
            for a, b in zip(prim, sec)], "the simulation's log"


def pdl_judge(t, n, gpu, p, fig):
    """n pairs in the trace, each kernel linked to its launch (the
    secondary to a cudaLaunchKernelEx); every pair the GPU overlapped
    overlaps in the trace (not moved apart: on a second lane of the
    stream) and each kernel's span holds what the GPU measured of it.
    Returns the pairs the GPU overlapped."""
    prim, sec = named(t, "pdl_primary"), named(t, "pdl_secondary")
    fig["kernels"] = [len(prim), len(sec)]
    if len(prim) != n or len(sec) != n:
        p.add("PDL kernels", "%d primaries, %d secondaries, want %d each" %
              (len(prim), len(sec), n))
        return []
    calls = cpu_by_corr(t)
    for e in sec:
        names = [x["name"] for x in calls.get(e["args"].get("correlation"), [])]
        if not any(x.startswith("cudaLaunchKernelEx") or x == "cuLaunchKernelEx"
                   for x in names):
            p.add("secondary not linked to a cudaLaunchKernelEx call",
                  "%s <- %s" % (tc.brief(e), names))
    traced = [i for i in range(n) if ns(sec[i]["ts"]) <
              ns(prim[i]["ts"]) + ns(prim[i]["dur"])]
    fig["traced_overlaps"] = len(traced)
    if gpu is None:
        return []
    real = [i for i in range(n) if gpu[i][2] < gpu[i][1]]
    fig["gpu_overlaps"] = len(real)
    fig["overlap_us"] = [round((gpu[i][1] - gpu[i][2]) / 1e3, 3)
                         for i in real[:5]]
    apart = sorted(set(real) - set(traced))
    if apart:
        p.add("pairs the GPU overlapped are apart in the trace (a start "
              "moved?)", "pairs %s" % apart[:5])
    # Spans against the GPU's own readings. The two clocks differ by a
    # constant; a kernel starts before its first reading and ends after
    # its last, by a latency that varies (a cold first kernel starts
    # slower): aligned on the least latency, every start comes before its
    # reading, and every end must come after its own (a kernel moved
    # later, or cut short, ends some kernel's span before its reading).
    spans = [(e, g) for i in range(n) for e, g in
             ((prim[i], gpu[i][0:2]), (sec[i], gpu[i][2:4]))]
    base = max(ns(e["ts"]) - g[0] for e, g in spans)
    slack = ns(PDL_SLACK_US)
    for i, (e, (a, b)) in enumerate(spans):
        s, f = ns(e["ts"]) - base, ns(e["ts"]) + ns(e["dur"]) - base
        if f < b - slack:
            p.add("a PDL kernel's span does not hold what the GPU "
                  "measured of it", "pair %d: %s, trace [%d, %d] ns, GPU "
                  "[%d, %d] ns" % (i // 2, e["name"], s, f, a, b))
    cu = t.get("tprof", {}).get("cupti", {})
    fig["tprof_overlapped"], fig["tprof_shifted"] = cu.get("overlapped"), \
        cu.get("shifted")
    if len(traced) > (cu.get("overlapped") or 0):
        p.add("tprof.cupti.overlapped counts fewer ops than overlap",
              "%s < %d" % (cu.get("overlapped"), len(traced)))
    return real


def pdl(m):
    """Programmatic dependent launch: 20 pairs, the secondary launched
    with cudaLaunchAttributeProgrammaticStreamSerialization."""
    n = 20
    r = Run(m, "pdl", [m.prog("pdl_pair"), str(n)])
    if r.skip:
        return r.result()
    r.judge(2 * n + 2)     # and a memset, a copy
    if not r.t:
        return r.result()
    gpu, src = pdl_truth(r, n)
    r.fig["gpu_times_from"] = src
    real = pdl_judge(r.t, n, gpu, r.p, r.fig)
    status, why, fig = r.result()
    if status == "PASS" and not real:
        return "SKIP", "every dependent kernel ran after its primary (%s): " \
            "the overlap PDL allows was not exercised%s; the %d pairs are " \
            "in the trace, linked" % (src, " (the simulation does not "
                                     "model PDL)" if m.sim else "", n), fig
    return status, why, fig


def exit_inflight(m):
    """85 kernels of 2 ms still running when main returns: all in the
    trace, linked, nothing lost, exit status unchanged."""
    r = Run(m, "exit_inflight", [m.prog("exit_inflight"), "85"])
    r.judge(85)
    line = re.search(r"GPU: (\d+) records, (\d+) lost", r.err)
    r.fig["exit_line"] = line.group(0) if line else None
    if not line or line.group(2) != "0":
        r.p.add("the exit line does not say 0 lost", r.fig["exit_line"])
    if r.t and xs(r.t, ("cuda_sync",)):
        r.p.add("tprof's own wait for the GPU at exit is in the trace")
    return r.result()


def window_end(m):
    """The last recording window (TPROF_DURATION=300ms) ends while 4
    threads launch (each pausing 20 us after a launch): the program runs
    on, CUPTI is let go from an API exit callback (finalized), what was
    kept is whole."""
    r = Run(m, "window_end", [m.prog("churn"), "4", "1.2", "tail", "20"],
            env={"TPROF_DURATION": "300ms"})
    r.judge()
    if r.log and r.log.of("abort"):
        r.p.add("the simulation aborted", r.log.of("abort")[:1])
    if r.t:
        cu = r.t.get("tprof", {}).get("cupti", {})
        cap = r.t.get("tprof", {}).get("capture", {})
        r.fig.update(finalized=cu.get("finalized"),
                     stopped_why=cu.get("stopped_why"),
                     windows=cap.get("windows"), finished=cap.get("finished"))
        if (cu.get("finalized"), cu.get("stopped_why")) != \
                (1, "the last recording window ended"):
            r.p.add("CUPTI not let go at the window's end",
                    "finalized %r, stopped_why %r" % (cu.get("finalized"),
                                                      cu.get("stopped_why")))
        if not kernels(r.t):
            r.p.add("no kernel kept from the window")
    return r.result()


def late(t, e, blockers, records):
    """Whether the timed kernel e cannot be compared with its events: it
    started more than EVENT_LONG_US after the blocker before it ended
    (the GPU reached the first event, then waited for the launch), or
    the call recording the second event ended after e did (that event
    was reached when recorded, after e)."""
    before = [b for b in blockers if b["ts"] < e["ts"]]
    if not before or e["ts"] - before[-1]["ts"] - before[-1]["dur"] > \
            EVENT_LONG_US:
        return True
    launch = [x for x in cpu_by_corr(t).get(e["args"].get("correlation"), [])
              if x.get("cat") == "cuda_runtime"]
    after = [r for r in records if launch and r["tid"] == launch[0]["tid"]
             and r["ts"] >= launch[0]["ts"]]
    return not after or after[0]["ts"] + after[0]["dur"] > e["ts"] + e["dur"]


def event_judge(t, out, p, fig):
    """Each timed kernel's duration against cudaEventElapsedTime around
    it: within EVENT_SHORT_US below and EVENT_LONG_US + EVENT_RATE above,
    and no shorter than the time it spun. One the CPU got to late (late())
    is not compared; each length needs one that is. On the idle stream
    the launch is inside the events: up to EVENT_IDLE_US above."""
    by_grid = {e["args"]["grid"][0]: e for e in named(t, "timed")}
    blockers = named(t, "blocker")
    records = sorted((x for x in xs(t, ("cuda_runtime",))
                      if x.get("name") == "cudaEventRecord"), key=lambda x: x["ts"])
    diffs, n_late = collections.defaultdict(list), collections.Counter()
    for k in [out["idle"]] + out["kernels"]:
        e = by_grid.get(k["grid"])
        if not e:
            p.add("a timed kernel is missing", "grid %d" % k["grid"])
            continue
        dur, ev = e["dur"], k["event_ms"] * 1e3
        if dur * 1e3 < k["ns"] - 2000:
            p.add("a kernel shorter than it ran", "%.3f us, spun %d ns" %
                  (dur, k["ns"]))
        idle = k is out["idle"]
        label = "idle stream" if idle else "%g us" % (k["ns"] / 1e3)
        if not idle and late(t, e, blockers, records):
            n_late[label] += 1
            continue
        diffs[label].append(ev - dur)
        top = EVENT_IDLE_US if idle else EVENT_LONG_US + EVENT_RATE * dur
        if ev - dur < -EVENT_SHORT_US - EVENT_RATE * dur or ev - dur > top:
            p.add("kernel duration and cudaEvent elapsed time differ",
                  "%d ns kernel%s: %.3f us in the trace, %.3f us between "
                  "its events" % (k["ns"], " on an idle stream" if idle
                                  else "", dur, ev))
    for label in n_late:
        if label not in diffs:
            p.add("every %s kernel's events were recorded late: none "
                  "compared" % label)
    fig["late_not_compared"] = dict(n_late)
    fig["event_minus_kernel_us"] = {
        d: {"n": len(v), "min": round(min(v), 3),
            "median": round(statistics.median(v), 3), "max": round(max(v), 3)}
        for d, v in diffs.items()}


def event_times(m):
    """CUPTI kernel durations against cudaEvent elapsed times: 25 kernels
    of 20 us to 10 ms, each behind a 200 us kernel so that its events are
    reached on the GPU, not when the CPU gets to them; one on an idle
    stream."""
    r = Run(m, "event_times", [m.prog("event_timing"), "5"])
    r.judge(52)
    out = tc.line_json(r.out, "EVENTS ")
    if r.t and not (out and "idle" in out and "kernels" in out):
        r.p.add("event_timing printed no EVENTS line with idle and kernels "
                "(built before them? make gpu-check-build)", out)
    elif r.t:
        event_judge(r.t, out, r.p, r.fig)
        r.fig["cuda"] = {"runtime": out.get("runtime"),
                         "driver": out.get("driver")}
    return r.result()


def flows(m):
    """Over every trace above: each GPU op linked to the call that
    launched it (a launch, graph launch, copy or memset) exactly once."""
    p, fig = Problems(), {}
    if not m.traces:
        return "SKIP", "no trace to check", fig
    for label, t in m.traces:
        sub, f = Problems(), {}
        tc.flows(t, p=sub, fig=f)
        calls = cpu_by_corr(t)
        for e in xs(t, tc.GPU_OPS):
            names = [x["name"] for x in calls.get(e["args"].get("correlation"), [])]
            if not any(tc.WORK_CALL.match(x) for x in names):
                sub.add("GPU op whose call is no launch, copy or memset",
                        "%s <- %s" % (tc.brief(e), names))
        p.merge(sub, label + ": ")
        fig[label] = "%d GPU ops, %d flow ends" % (len(xs(t, tc.GPU_OPS)),
                                                   f["flows"]["f"])
    probs = p.list()
    return ("FAIL", "; ".join(probs), fig) if probs else ("PASS", "", fig)


def torch_alongside(m):
    """torch.profiler and tprof on one run: both write a trace, and tprof
    backs off or shares CUPTI as cupti/handover.c says (torch_judge)."""
    if m.sim:
        return "SKIP", "torch brings its own CUDA libraries, not the " \
            "simulation's (test_gpu_share.py plays Kineto there)", {}
    probe = subprocess.run([sys.executable, os.path.join(ROOT, "tests", "gpu",
                                                         "tracecheck.py"),
                            "torch-probe"], capture_output=True, text=True,
                           timeout=60)
    why = (probe.stdout.strip().splitlines() or ["no output"])[-1]
    if probe.returncode:
        return "SKIP", why, {}
    d = os.path.join(m.res, "torch_alongside")
    prof, win = os.path.join(d, "profiler.json"), os.path.join(d, "window.json")
    r = Run(m, "torch_alongside", [
        os.path.join(ROOT, "scripts", "tprof-run"), "-o",
        os.path.join(d, "trace"), "-n", "torch_alongside", sys.executable,
        os.path.join(ROOT, "tests", "gpu", "torch_loop.py"),
        "--torch-profiler", prof, "--window", win], timeout=180,
        native=False)
    r.fig["torch"] = why
    if not r.t:
        return r.result()
    tc.tprof_check(r.path, r.p)
    torch_judge(r.t, r.err, prof, win, r.p, r.fig)
    return r.result()


def torch_judge(t, err, prof_path, win_path, p, fig):
    """Both traces written, torch.profiler's with kernels, and tprof did
    one of the three things cupti/handover.c documents: handed CUPTI over
    when torch.profiler took it (one warning; the kernels before kept),
    left it to a torch.profiler that was there first (one warning; no GPU
    activity), or shares it (CUPTI 13.3+: then its kernels in the window
    compare with torch.profiler's as in torch_vs_profiler)."""
    try:
        prof, w = tc.load(prof_path), tc.load(win_path)
    except (OSError, ValueError) as e:
        p.add("torch.profiler wrote no trace: %s" % e)
        return
    win = (w["t0_ns"], w["t1_ns"])
    theirs, ours = kernels(prof), kernels(t, win)
    cu = t.get("tprof", {}).get("cupti", {})
    warns = [l for l in err.splitlines() if l.startswith("tprof: warning")]
    fig.update(profiler_kernels=len(theirs), tprof_kernels_in_window=len(ours),
               tprof_kernels=len(kernels(t)), other_client=cu.get("other_client"),
               state=cu.get("state"), reason=cu.get("reason"),
               stopped_why=cu.get("stopped_why"), cupti_version=cu.get("version"),
               warnings=warns)
    if not theirs:
        p.add("torch.profiler's trace has no kernel")
    if cu.get("other_client") != "torch.profiler":
        p.add("tprof did not see torch.profiler use CUPTI",
              "other_client %r" % cu.get("other_client"))

    def one_warning(text):
        if len([x for x in warns if text in x]) != 1:
            p.add("not one warning saying %r" % text, warns)
    if cu.get("stopped_why") == "another CUPTI client took over":
        fig["tprof"] = "handed CUPTI over"
        one_warning("torch.profiler took CUPTI")
        if not kernels(t):
            p.add("tprof kept no kernel from before the hand-over")
    elif cu.get("state") == "off" and \
            "before tprof started it" in (cu.get("reason") or ""):
        fig["tprof"] = "left CUPTI to torch.profiler, there first"
        one_warning("was using CUPTI before tprof started it")
        if kernels(t):
            p.add("GPU activity in tprof's trace with CUPTI left to "
                  "torch.profiler")
    elif cu.get("state") == "on" and cu.get("subscribers") == "several":
        fig["tprof"] = "shares CUPTI"
        sub, f = tc.compare(ours, theirs)
        fig.update(f)
        p.merge(sub, "sharing CUPTI: ")
    else:
        p.add("tprof neither handed CUPTI over, nor left it, nor shares it",
              "state %r, reason %r, subscribers %r, stopped_why %r" % (
                  cu.get("state"), cu.get("reason"), cu.get("subscribers"),
                  cu.get("stopped_why")))


PROPERTIES = [
    ("two threads on own and shared streams", two_threads),
    ("CUDA graphs", graphs),
    ("programmatic dependent launch", pdl),
    ("exit with work in flight", exit_inflight),
    ("window end while threads launch", window_end),
    ("kernel durations against cudaEvent elapsed times", event_times),
    ("torch.profiler alongside tprof", torch_alongside),
    ("launch-to-GPU-op flows, each op linked once", flows),
]


def environment(m, lines):
    env = {"date": datetime.datetime.now(datetime.timezone.utc).isoformat(
        timespec="seconds"), "host": socket.gethostname(),
        "mode": "simulation (tests/sim/)" if m.sim else "GPU"}
    if not m.sim:
        env["nvidia_smi_L"] = tc.sh(["nvidia-smi", "-L"])
        smi = tc.sh(["nvidia-smi"])
        env["nvidia_smi"] = next((l.strip(" |") for l in smi.splitlines()
                                  if "Driver Version" in l), smi[:300])
    for line in lines:
        if "cuda" in line["figures"]:
            env["cuda_runtime_and_driver"] = line["figures"]["cuda"]
    for _, t in m.traces[:1]:
        cu = t.get("tprof", {}).get("cupti", {})
        env["cupti"] = "%s (%s)" % (cu.get("version"), cu.get("library"))
        env["devices"] = ["%s: %s (sm_%s%s)" % (d.get("id"), d.get("name"),
                                                d.get("computeMajor"),
                                                d.get("computeMinor"))
                          for d in t.get("deviceProperties", [])]
    return env


def no_gpu(m):
    """Why there is no GPU to check (event_timing 0 without tprof exits
    77), or None."""
    e = m.env(m.res, "probe", None, True)
    e.pop("LD_PRELOAD")
    try:
        probe = subprocess.run([m.prog("event_timing"), "0"], env=e,
                               capture_output=True, text=True, timeout=30)
    except subprocess.TimeoutExpired:
        return None     # the properties will say what hangs
    return probe.stdout.strip() if probe.returncode == 77 else None


def run_all(m, prefix, brief):
    """Every property, its line printed as it ends; the lines."""
    lines = []
    for name, fn in PROPERTIES:
        try:
            status, why, fig = fn(m)
        except Exception as e:  # noqa: BLE001 - the property fails, the rest run
            status, why, fig = "FAIL", "checker error: %s: %s" % (
                type(e).__name__, e), {}
        print("%s %s%s%s" % (status, prefix, name,
                               ": " + why[:1000] if why else ""))
        if not brief or status != "PASS":
            print("    " + json.dumps(fig, default=str)[:2000])
        sys.stdout.flush()
        lines.append({"property": name, "status": status, "why": why,
                      "figures": fig})
    return lines


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sim", action="store_true",
                    help="on the simulated CUDA 13 machine (tests/sim/)")
    ap.add_argument("--brief", action="store_true",
                    help="figures only under FAIL and SKIP lines (make test)")
    ap.add_argument("result_dir", nargs="?",
                    help="default build/gpu-check (build/gpu-check-sim)")
    a = ap.parse_args(argv)
    res = os.path.abspath(a.result_dir or os.path.join(
        BUILD, "gpu-check-sim" if a.sim else "gpu-check"))
    os.makedirs(res, exist_ok=True)
    m = Machine(a.sim, res)
    prefix = "sim: " if a.sim else ""
    san = os.environ.get("TPROF_TEST_SANITIZE")
    if san:
        # Its runtime would have to come first in every LD_PRELOAD, and
        # its slower calls stretch the timing bounds: the unsanitized
        # build checks these (make gpu-check-sim).
        for name, _ in PROPERTIES:
            print("SKIP %s%s: a build sanitized with %s" % (prefix, name, san))
        return 0
    need = [LIB, os.path.join(BUILD, "tprof")] + \
        [m.prog(p) for p in ("two_threads", "graph", "pdl_pair",
                             "exit_inflight", "churn", "event_timing")]
    missing = [x for x in need if not os.path.exists(x)]
    if missing:
        print("FAIL gpu-check: not built: %s; run `make %s`" % (
            ", ".join(os.path.relpath(x, ROOT) for x in missing),
            "gpu-check-sim" if a.sim else "gpu-check-build"))
        return 1
    why = None if a.sim else no_gpu(m)
    if why:
        for name, _ in PROPERTIES:
            print("SKIP %s: %s" % (name, why))
        print("gpu-check: no GPU here, nothing validated (make gpu-check "
              "SIM=1 runs it on the simulation)")
        return 3
    t0 = time.time()
    lines = run_all(m, prefix, a.brief)
    env = environment(m, lines)
    env["seconds"] = round(time.time() - t0, 1)
    with open(os.path.join(res, "gpu-check.json"), "w") as f:
        json.dump(dict(env, properties=lines), f, indent=1, default=str)
    n = collections.Counter(x["status"] for x in lines)
    print("gpu-check (%s): %d passed, %d failed, %d skipped in %.1f s; "
          "%s" % (env["mode"], n["PASS"], n["FAIL"], n["SKIP"],
                  env["seconds"], os.path.join(res, "gpu-check.json")))
    return 1 if n["FAIL"] else 0


if __name__ == "__main__":
    sys.exit(main())
