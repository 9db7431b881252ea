"""Steps, the schedule and the capture gates.

tests/integration/progs/steps.c does one cudaFree per unit of work with a
distinctive pointer (0x1000 * (unit + 1)), so which units were kept is read
from the trace; the hooks record the call though there is no GPU.
"""
import glob
import os
import subprocess
import tempfile

from tplib import (BUILD, CLI, LIB, NO_SHELL, RUN, SANITIZE, base_env, check,
                   cleanup, done, eq, is_gpu_off_warning, span_ns, load,
                   nesting_ok, prog, run, skip, tprof_check, xevents)

STEPS = prog("steps")
FEED = prog("cupti_feed")
NSYS = os.path.join(BUILD, "tests", "bin", "fake_nsys.so")


def trace_of(r):
    paths = glob.glob(os.path.join(r.dir, "*.trace.json.gz"))
    return load(paths[0]) if len(paths) == 1 else None


def units(t):
    """The units of work kept, in order."""
    if t is None:
        return None
    return [int(e["args"]["ptr"], 16) // 0x1000 - 1
            for e in xevents(t, "cudaFree")]


def steps_of(t):
    return [e["name"] for e in xevents(t) if e["name"].startswith("ProfilerStep#")]


def warnings(r):
    return [l for l in r.stderr.splitlines() if l.startswith("tprof: warning:")
            and not is_gpu_off_warning(l) and "NVTX_INJECTION64_PATH" not in l]


def sched(name, argv, env, want_units, want_steps, want_seen):
    r = run([STEPS] + argv, env=env)
    t = trace_of(r)
    eq(name + ": exit code", r.rc, 0)
    eq(name + ": units kept", units(t), want_units)
    if t is None:
        return r, t
    eq(name + ": ProfilerStep events",
       steps_of(t), ["ProfilerStep#%d" % n for n in want_steps])
    cap = t["tprof"]["capture"]
    eq(name + ": steps_kept", cap["steps_kept"], want_steps)
    eq(name + ": steps_seen", cap["steps_seen"], want_seen)
    check(name + ": strict nesting", nesting_ok(t))
    return r, t


# ---- schedules ----------------------------------------------------------

r, t = sched("no schedule", ["api", "4"], {}, [0, 1, 2, 3], [0, 1, 2, 3], 4)
if t:
    st = xevents(t)
    ps = [e for e in st if e["name"].startswith("ProfilerStep#")]
    eq("no schedule: steps on one track of their own",
       {(e["pid"], e["tid"]) for e in ps}, {(ps[0]["pid"], 1000000000)})
    check("no schedule: steps are contiguous",
          all(abs(a["ts"] + a["dur"] - b["ts"]) < 0.002
              for a, b in zip(ps, ps[1:])), ps)
    frees = xevents(t, "cudaFree")
    check("no schedule: each unit inside its step",
          all(span_ns(p)[0] <= span_ns(f)[0] and span_ns(f)[1] <= span_ns(p)[1]
              for p, f in zip(ps, frees)), list(zip(ps, frees)))
    meta = [e for e in t["traceEvents"] if e.get("ph") == "M" and
            e.get("tid") == 1000000000]
    eq("no schedule: the steps track is named",
       [e["args"].get("name") for e in meta if e["name"] == "thread_name"],
       ["steps"])
    eq("no schedule: capture reports no schedule",
       t["tprof"]["capture"]["schedule"], None)
cleanup(r)

r, t = sched("wait1 active2", ["api", "6"],
             {"TPROF_WAIT": "1", "TPROF_ACTIVE": "2"},
             [1, 2, 4, 5], [1, 2, 4, 5], 6)
if t:
    eq("wait1 active2: schedule in the trace", t["tprof"]["capture"]["schedule"],
       {"skip_first": 0, "wait": 1, "warmup": 0, "active": 2, "repeat": 0})
    eq("wait1 active2: two windows", t["tprof"]["capture"]["windows"], 2)
    tprof_check(glob.glob(os.path.join(r.dir, "*.gz"))[0],
                "wait1 active2: tprof check passes")
cleanup(r)

# Warmup steps are recorded, then discarded; repeat ends the schedule.
r, t = sched("warmup and repeat=2", ["api", "8"],
             {"TPROF_WAIT": "1", "TPROF_WARMUP": "1", "TPROF_ACTIVE": "1",
              "TPROF_REPEAT": "2"}, [2, 5], [2, 5], 8)
if t:
    eq("warmup and repeat=2: finished", t["tprof"]["capture"]["finished"], 1)
cleanup(r)

r, t = sched("skip_first 2, warmup 1, active 2, repeat 1", ["api", "7"],
             {"TPROF_SKIP_FIRST": "2", "TPROF_WARMUP": "1",
              "TPROF_ACTIVE": "2", "TPROF_REPEAT": "1"}, [3, 4], [3, 4], 7)
cleanup(r)

r, t = sched("repeat=0 runs until exit", ["api", "9"],
             {"TPROF_WAIT": "2", "TPROF_ACTIVE": "1", "TPROF_REPEAT": "0"},
             [2, 5, 8], [2, 5, 8], 9)
cleanup(r)

r = run([STEPS, "api", "4"], env={"TPROF_SKIP_FIRST": "10",
                                   "TPROF_ACTIVE": "1"})
eq("skip_first past the run: exit code", r.rc, 0)
t = trace_of(r)
eq("skip_first past the run: no unit kept", units(t) or [], [])
w = warnings(r)
check("skip_first past the run: one warning naming the schedule",
      len(w) == 1 and "kept no step" in w[0] and "4 steps" in w[0] and
      "TPROF_SKIP_FIRST 10" in w[0], r.stderr)
cleanup(r)

r = run([STEPS, "none", "3"], env={"TPROF_WAIT": "1", "TPROF_ACTIVE": "2"})
eq("active without steps: exit code", r.rc, 0)
eq("active without steps: nothing kept (step 0 is a wait step)",
   units(trace_of(r)) or [], [])
w = warnings(r)
check("active without steps: a warning that no step was seen",
      len(w) == 1 and "no step was seen" in w[0] and "tprof_step()" in w[0],
      r.stderr)
cleanup(r)

r = run([STEPS, "none", "3"], env={"TPROF_ACTIVE": "2"})
eq("active without steps, no wait: step 0 is kept whole",
   units(trace_of(r)), [0, 1, 2])
check("active without steps, no wait: still warned",
      any("no step was seen" in l for l in warnings(r)), r.stderr)
cleanup(r)

r = run([STEPS, "none", "3"], env={"TPROF_ACTIVE": "2"}, preload=False)
eq("without the library: the program runs as usual", r.rc, 0)
eq("without the library: tprof_step is not there",
   r.stdout.splitlines(), [])
cleanup(r)

# ---- where steps come from ----------------------------------------------

for mode in ("nvtx", "mark", "start"):
    r, t = sched("TPROF_STEP_NVTX (%s)" % mode, [mode, "6", "train_step"],
                 {"TPROF_WAIT": "1", "TPROF_ACTIVE": "2",
                  "TPROF_STEP_NVTX": "train_step"},
                 [1, 2, 4, 5], [1, 2, 4, 5], 6)
    if t and mode == "nvtx":
        ranges = [e for e in xevents(t, "train_step")]
        eq("TPROF_STEP_NVTX (nvtx): the kept step ranges are recorded",
           len(ranges), 4)
        ps = [e for e in xevents(t) if e["name"].startswith("ProfilerStep#")]
        if "thread" in SANITIZE:
            skip("TPROF_STEP_NVTX (nvtx): each range ends its step "
                 "(inside it, within 10 us of its end)",
                 "a 10 us bound, which TSan's slower hooks pass")
        else:
            check("TPROF_STEP_NVTX (nvtx): each range ends its step "
                  "(inside it, within 10 us of its end)",
                  len(ps) == len(ranges) and
                  all(span_ns(p)[0] <= span_ns(g)[0] and
                      0 <= span_ns(p)[1] - span_ns(g)[1] < 10000
                      for p, g in zip(ps, ranges)), (ps, ranges))
    if t:
        eq("TPROF_STEP_NVTX (%s): named in the trace" % mode,
           t["tprof"]["capture"]["step_nvtx"], "train_step")
    cleanup(r)

r = run([STEPS, "nvtx", "4", "other"],
        env={"TPROF_STEP_NVTX": "train_step"})
t = trace_of(r)
eq("TPROF_STEP_NVTX: other names are not steps",
   (t["tprof"]["capture"]["steps_seen"], units(t)) if t else None,
   (0, [0, 1, 2, 3]))
cleanup(r)

r = run([STEPS, "nvtx", "4", "train_step"],
        env={"TPROF_STEP_NVTX": "train_step", "TPROF_TRACE": "cuda",
             "TPROF_WAIT": "1", "TPROF_ACTIVE": "1"})
t = trace_of(r)
eq("TPROF_STEP_NVTX works without nvtx in TPROF_TRACE",
   (units(t), t["tprof"]["capture"]["steps_kept"]) if t else None,
   ([1, 3], [1, 3]))
cleanup(r)

# ---- gates --------------------------------------------------------------

r = run([STEPS, "profapi", "6", "2", "3"],
        env={"TPROF_CAPTURE": "cudaProfilerApi"})
t = trace_of(r)
eq("cudaProfilerApi: only units between start and stop", units(t), [2, 3])
if t:
    names = [e["name"] for e in xevents(t)]
    check("cudaProfilerApi: the start and stop calls are in the window",
          "cudaProfilerStart" in names and "cudaProfilerStop" in names, names)
cleanup(r)

r = run([STEPS, "profapi", "6", "2", "3"])
eq("cudaProfilerStart/Stop without TPROF_CAPTURE: everything",
   units(trace_of(r)), [0, 1, 2, 3, 4, 5])
cleanup(r)

r = run([STEPS, "none", "2"], env={"TPROF_CAPTURE": "cudaProfilerApi"})
w = warnings(r)
check("cudaProfilerApi never started: one warning",
      len(w) == 1 and "never called cudaProfilerStart" in w[0], r.stderr)
eq("cudaProfilerApi never started: nothing kept", units(trace_of(r)) or [], [])
cleanup(r)

r = run([STEPS, "signal", "6"], env={"TPROF_SIGNAL": "USR2"})
eq("TPROF_SIGNAL: the program is not killed by the signal", r.rc, 0)
eq("TPROF_SIGNAL: units between the two signals", units(trace_of(r)), [2, 3])
cleanup(r)

r = run([STEPS, "signal", "6"], env={"TPROF_SIGNAL": "SIGUSR1"})
check("TPROF_SIGNAL=SIGUSR1: USR2 keeps its default action",
      r.rc != 0, r.rc)
cleanup(r)

r = run([STEPS, "toggle", "4"])
eq("tprof_disable/enable: units outside the disabled stretch",
   units(trace_of(r)), [0, 3])
cleanup(r)

r = run([STEPS, "timed", "60", "10"],
        env={"TPROF_DELAY": "0.3", "TPROF_DURATION": "0.25"})
t = trace_of(r)
u = units(t) or []
check("delay and duration: some units kept, not all", 0 < len(u) < 60, u)
check("delay and duration: the kept units are one stretch",
      u == list(range(u[0], u[0] + len(u))) if u else False, u)
check("delay and duration: nothing kept in the first 0.3 s (>= unit 10)",
      bool(u) and u[0] >= 10, u)
if t and u:
    fr = xevents(t, "cudaFree")
    span = fr[-1]["ts"] - fr[0]["ts"]
    check("delay and duration: kept for about 0.25 s (<= 0.35 s)",
          span <= 350000, span)
    eq("delay and duration: finished", t["tprof"]["capture"]["finished"], 1)
    eq("delay and duration: in the trace",
       (t["tprof"]["capture"]["delay_s"], t["tprof"]["capture"]["duration_s"]),
       (0.3, 0.25))
cleanup(r)

r = run([STEPS, "none", "2"], env={"TPROF_DELAY": "100"})
w = warnings(r)
check("delay longer than the run: one warning",
      len(w) == 1 and "before TPROF_DELAY passed" in w[0], r.stderr)
eq("delay longer than the run: no trace", r.files(), [])
cleanup(r)

r = run(["/bin/true"], env={"TPROF_DELAY": "1", "TPROF_ACTIVE": "1"})
eq("a process that never traces: no file, no warning",
   (r.files(), r.stderr), ([], ""))
cleanup(r)

# ---- Nsight Systems interop ---------------------------------------------

log = tempfile.mktemp(prefix="tprof-nsys-")
r = run([STEPS, "api", "6"],
        env={"TPROF_NSYS": "1", "TPROF_WAIT": "1", "TPROF_ACTIVE": "2",
             "NVTX_INJECTION64_PATH": NSYS, "FAKE_NSYS_LOG": log,
             "LD_PRELOAD": LIB + ":" + NSYS}, preload=False)
got = open(log).read().splitlines() if os.path.exists(log) else None
eq("TPROF_NSYS: cudaProfilerStart/Stop around windows, step N ranges",
   got, ["cudaProfilerStart", "start step 1", "end 1", "start step 2",
         "end 2", "cudaProfilerStop", "cudaProfilerStart", "start step 4",
         "end 3", "start step 5", "end 4", "cudaProfilerStop"])
eq("TPROF_NSYS: tprof keeps the same steps", units(trace_of(r)), [1, 2, 4, 5])
if os.path.exists(log):
    os.unlink(log)
cleanup(r)

# ---- GPU work of a step: kept with its launch ---------------------------

r = run([FEED, "steps"], env={"TPROF_WAIT": "1", "TPROF_ACTIVE": "1",
                               "TPROF_REPEAT": "1"})
eq("feed steps: exit code", r.rc, 0)
v = dict(l.split() for l in r.stdout.splitlines())
t = trace_of(r)
if t:
    ks = [e for e in xevents(t) if e.get("cat") == "kernel"]
    eq("feed steps: only the kept step's kernels (their launch correlation)",
       sorted({e["args"]["correlation"] for e in ks}), [int(v["launch1"])])
    eq("feed steps: its kernel is kept though it runs after the step ended",
       [e["name"] for e in ks if e["name"].startswith("k")], ["k1"])
    ps = xevents(t, "ProfilerStep#1")
    k1 = [e for e in ks if e["name"] == "k1"]
    check("feed steps: ... (k1 starts after ProfilerStep#1 ends)",
          ps and k1 and k1[0]["ts"] > ps[0]["ts"] + ps[0]["dur"], (ps, k1))
    eq("feed steps: one launch kept", len(xevents(t, "cudaLaunchKernel")), 1)
    eq("feed steps: CUPTI finalized once, after the last window",
       (v.get("finalized_before"), v.get("finalized_after"),
        t["tprof"]["cupti"]["finalized"]), ("0", "1", 1))
    eq("feed steps: no op counted as lost",
       (t["tprof"]["cupti"]["unlinked"], t["tprof"]["cupti"]["dropped"]),
       (0, 0))
cleanup(r)

r = run([FEED, "steps"])
t = trace_of(r)
eq("feed without a schedule: every kernel, CUPTI not finalized early",
   (sorted(e["name"] for e in xevents(t) if e.get("cat") == "kernel" and
           e["name"].startswith("k")), t["tprof"]["cupti"]["finalized"])
   if t else None, (["k0", "k1", "k2", "k3"], 0))
cleanup(r)

# ---- bad values -----------------------------------------------------------

BAD = [
    ("TPROF_WAIT", {"TPROF_WAIT": "x", "TPROF_ACTIVE": "1"}),
    ("TPROF_WARMUP", {"TPROF_WARMUP": "-1", "TPROF_ACTIVE": "1"}),
    ("TPROF_ACTIVE", {"TPROF_ACTIVE": "0"}),
    ("TPROF_REPEAT", {"TPROF_REPEAT": "1.5", "TPROF_ACTIVE": "1"}),
    ("TPROF_SKIP_FIRST", {"TPROF_SKIP_FIRST": "", "TPROF_ACTIVE": "1"}),
    ("TPROF_WAIT", {"TPROF_WAIT": "2"}),
    ("TPROF_STEP_NVTX", {"TPROF_STEP_NVTX": ""}),
    ("TPROF_DELAY", {"TPROF_DELAY": "soon"}),
    ("TPROF_DELAY", {"TPROF_DELAY": "-1"}),
    ("TPROF_DURATION", {"TPROF_DURATION": "0"}),
    ("TPROF_CAPTURE", {"TPROF_CAPTURE": "nvtx"}),
    ("TPROF_SIGNAL", {"TPROF_SIGNAL": "TERM"}),
    ("TPROF_NSYS", {"TPROF_NSYS": "yes"}),
]
for var, env in BAD:
    val = env[var]
    r = run([STEPS, "api", "2"], env=env)
    err = r.lines("tprof: error:")
    check("bad %s=%r: one error line naming it" % (var, val),
          len(err) == 1 and var in err[0], r.stderr)
    eq("bad %s=%r: program unharmed, no file" % (var, val),
       (r.rc, r.files()), (0, []))
    cleanup(r)

def tprof_run_checks():
    for flags in (["--wait", "x", "--active", "1"], ["--active", "0"],
                  ["--delay", "soon"], ["--capture", "nvtx"], ["--signal", "HUP"],
                  ["--skip-first", "1"], ["--active"]):
        e = base_env()
        d = tempfile.mkdtemp(prefix="tprof-it-")
        e["TPROF_OUTPUT_DIR"] = d
        p = subprocess.run([RUN] + flags + ["/bin/true"], env=e,
                           capture_output=True, text=True)
        check("tprof-run %s: refused with exit 2 and one message" % " ".join(flags),
              p.returncode == 2 and len(p.stderr.splitlines()) == 1 and
              p.stderr.startswith("tprof"), (p.returncode, p.stderr))
        os.rmdir(d)

    e = base_env()
    d = tempfile.mkdtemp(prefix="tprof-it-")
    e["TPROF_OUTPUT_DIR"] = d
    p = subprocess.run([RUN, "--wait", "1", "--active=2", "--repeat", "1",
                        "--step-nvtx", "s", STEPS, "api", "4"], env=e,
                       capture_output=True, text=True)
    t = load(glob.glob(os.path.join(d, "*.gz"))[0]) if glob.glob(
        os.path.join(d, "*.gz")) else None
    eq("tprof-run schedule flags reach the library",
       (p.returncode, units(t), t["tprof"]["capture"]["step_nvtx"] if t else None),
       (0, [1, 2], "s"))
    subprocess.run(["rm", "-rf", d])


if NO_SHELL:
    skip('tprof-run: schedule flags', NO_SHELL)
else:
    tprof_run_checks()
done()
