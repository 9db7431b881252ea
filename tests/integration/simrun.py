"""Running programs on the simulated CUDA 13 machine (tests/sim/) under
tprof, with the simulation's log of what really happened."""
import os
import sys
import tempfile

import tplib
from tplib import BUILD, ROOT, load, run, xevents

sys.path.insert(0, os.path.join(ROOT, "tests", "sim"))
from simlog import SimLog  # noqa: E402

SIM = os.path.join(BUILD, "tests", "sim")
LIBDIR = os.path.join(SIM, "lib")
# Programs in plain C: the same binary in both modes.
PLAIN_C = ("driver_only", "late_main", "static_main", "window_busy",
           "rules")


def sim_prog(name, mode=13):
    """A program of the simulation: mode 12 the CUDA 12 build (bin12,
    linked to libcudart.so.12, <<<>>> through cudaLaunchKernel)."""
    sub = "bin12" if mode == 12 and name not in PLAIN_C else "bin"
    return os.path.join(SIM, sub, name)


def sim_run(argv, env=None, mode=13, **kw):
    """Runs argv on the simulated machine: mode 13 (libcudart.so.13,
    libcupti.so.13) or 12 (libcudart.so.12, libcupti.so.12, CUPTI 12.9)."""
    log = tempfile.mktemp(prefix="sim-", suffix=".log")
    e = {"LD_LIBRARY_PATH": os.path.join(SIM, "lib12") if mode == 12
         else LIBDIR, "SIM_LOG": log, "TPROF_TRACE": "all"}
    e.update(env or {})
    r = run(argv, env=e, **kw)
    r.log = SimLog(log) if os.path.exists(log) else None
    if os.path.exists(log):
        os.unlink(log)
    traces = [f for f in r.all_files() if f.endswith(".trace.json.gz")]
    r.trace = load(os.path.join(r.dir, traces[0])) if len(traces) == 1 \
        else None
    r.path = os.path.join(r.dir, traces[0]) if traces else None
    return r


# The trace's GPU categories and the simulation log's kind of each.
KIND = {"kernel": "kernel", "gpu_memcpy": "memcpy", "gpu_memset": "memset"}


class Modal:
    """The checks and runners of one simulation mode (13 or 12), for
    tests that run every case in both: each PASS line names the mode.
    Loop with `for M.mode in (13, 12):`."""

    def __init__(self, mode=13):
        self.mode = mode

    def check(self, name, cond, why=""):
        return tplib.check("CUDA %d, %s" % (self.mode, name), cond, why)

    def eq(self, name, got, want):
        return self.check(name, got == want, "got %r, want %r" % (got, want))

    def tprof_check(self, path, name):
        return tplib.tprof_check(path, "CUDA %d, %s" % (self.mode, name))

    def sim_prog(self, name):
        return sim_prog(name, self.mode)

    def sim_run(self, argv, env=None, **kw):
        return sim_run(argv, env=env, mode=self.mode, **kw)


def report(r):
    """A client program's "name count" lines on stdout, as a dict."""
    out = {}
    for line in r.stdout.splitlines():
        p = line.split()
        out[" ".join(p[:-1])] = int(p[-1])
    return out


def warnings(r):
    return [l for l in r.stderr.splitlines() if l.startswith("tprof: warning")]


def kernels(t, name):
    return [e for e in xevents(t) if e.get("cat") == "kernel" and
            e["name"] == name]


def exact(label, r, n_ops, t=tplib):
    """Every GPU op of the simulation's log in the trace, once, with its
    GPU duration; t gives check/eq/tprof_check (tplib, or a Modal)."""
    if not t.check("%s: runs, one trace, a log" % label,
                   r.rc == 0 and r.trace and r.log, (r.rc, r.stderr[-1500:])):
        return
    ops = r.log.gpu_ops()
    t.eq("%s: the simulation ran %d GPU ops" % (label, n_ops), len(ops), n_ops)
    by = {}
    for e in xevents(r.trace):
        if e.get("cat") in KIND:
            by.setdefault((e["args"]["correlation"], KIND[e["cat"]]),
                          []).append(e)
    bad = []
    for o in ops:
        evs = by.get((o["corr"], o["kind"]))
        if not evs:
            bad.append(("missing", o["corr"]))
            continue
        d = round(evs.pop(0)["dur"] * 1000)
        if abs(d - (o["end_raw"] - o["start_raw"])) > 2 + o["dur"] * 2e-6:
            bad.append((o["name"], o["end_raw"] - o["start_raw"], d))
    extra = sum(len(v) for v in by.values())
    t.eq("%s: every GPU op in the trace once, with its duration" % label,
         (bad[:5], extra), ([], 0))
    t.tprof_check(r.path, "%s: tprof check passes" % label)


def flows(t):
    """The JSON trace's flow starts by id, and its flow ends by id."""
    s = {e["id"]: e for e in t["traceEvents"] if e.get("ph") == "s"}
    f = {}
    for e in t["traceEvents"]:
        if e.get("ph") == "f":
            f.setdefault(e["id"], []).append(e)
    return s, f


def unlinked_ops(r):
    """The log's GPU ops whose trace event no flow reaches from a CPU
    call of their correlation id: (kind, corr) of each."""
    s, f = flows(r.trace)
    cpu = {e["args"].get("correlation") for e in xevents(r.trace)
           if e.get("cat") in ("cuda_runtime", "cuda_driver")}
    ends = {(x["pid"], x["tid"], x["ts"]) for v in f.values() for x in v}
    at = {}
    for e in xevents(r.trace):
        if e.get("cat") in KIND:
            at.setdefault((e["args"]["correlation"], KIND[e["cat"]]),
                          []).append((e["pid"], e["tid"], e["ts"]))
    bad = []
    for o in r.log.gpu_ops():
        evs = at.get((o["corr"], o["kind"]), [])
        if not (o["corr"] in s and o["corr"] in cpu and
                any(p in ends for p in evs)):
            bad.append((o["kind"], o["corr"]))
    return bad
