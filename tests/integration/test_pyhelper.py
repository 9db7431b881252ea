"""The Python helper (scripts/python/tprof.py) and tprof-run --torch-steps.

tprof.py without the library (every function a no-op, nothing written),
with it: ranges (with, nested, reused, decorators, ExitStack, threads),
marks, non-ASCII names, steps and the schedule, disable/enable, device
memory from (a stand-in) torch; each with the C extension (build/python/
_tprof*.so) and with the ctypes path (TPROF_PYTHON_EXT=0, and the
extension not on the path), whose traces must hold the same events.
--torch-steps: the start-up shim turns each optimizer.step() into a step,
never imports torch itself, and chains to the program's own
sitecustomize. torch here is tests/integration/pyfake/torch, a stand-in
with just what tprof touches."""
import glob
import json
import os
import re
import shutil
import sys
import sysconfig
import tempfile

from tplib import (BUILD, ROOT, RUN, check, cleanup, done, eq, load,
                   nesting_ok, run, skip, span_ns, tprof_check)

PY = sys.executable or "python3"
PYDIR = os.path.join(ROOT, "scripts", "python")
SHIMDIR = os.path.join(PYDIR, "torch_steps")
FAKE = os.path.join(ROOT, "tests", "integration", "pyfake")
PYEXT = os.path.join(BUILD, "python")
UA = "user_annotation"

work = tempfile.mkdtemp(prefix="tprof-py-")


def script(name, text):
    path = os.path.join(work, name)
    with open(path, "w", encoding="utf-8") as f:
        f.write(text)
    return path


def pyenv(*dirs, **extra):
    e = {"PYTHONPATH": os.pathsep.join(dirs),
         "PYTHONDONTWRITEBYTECODE": "1", "PYTHONIOENCODING": "utf-8"}
    e.update(extra)
    return e


def trace_of(r):
    files = glob.glob(os.path.join(r.dir, "*.trace.json.gz"))
    return load(files[0]) if len(files) == 1 else None


def trace_path(r):
    files = glob.glob(os.path.join(r.dir, "*.trace.json.gz"))
    return files[0] if len(files) == 1 else None


def empty():
    return {"traceEvents": [], "tprof": {}}


def ua(t, ph=None):
    """user_annotation events, less the ProfilerStep#N ones (steps())."""
    return [e for e in t["traceEvents"] if e.get("cat") == UA and
            (ph is None or e.get("ph") == ph) and
            not e.get("name", "").startswith("ProfilerStep#")]


def named(evs, name):
    return [e for e in evs if e.get("name") == name]


def one(what, evs, name):
    got = named(evs, name)
    check("%s: one event %r" % (what, name), len(got) == 1,
          "found %d" % len(got))
    return got[0] if got else {}


def steps(t):
    """ProfilerStep#N X events, by start time."""
    return sorted([e for e in t["traceEvents"] if e.get("ph") == "X" and
                   e.get("name", "").startswith("ProfilerStep#")],
                  key=lambda e: e["ts"])


def inside(a, b):
    """a lies within b, in integer ns."""
    if not a or not b:
        return False
    (s, e), (bs, be) = span_ns(a), span_ns(b)
    return bs <= s and e <= be


def results(r, prefix="RESULT "):
    """The JSON object a script printed on a line starting with prefix."""
    for stream in (r.stdout, r.stderr):
        for line in stream.splitlines():
            if line.startswith(prefix):
                try:
                    return json.loads(line[len(prefix):])
                except ValueError:
                    pass
    return {}


def mem_args(e):
    return {k: v for k, v in (e.get("args") or {}).items()
            if k.startswith("mem_")}


def ext_built():
    """Whether the C extension is there for this Python. make must have
    built it when it found Python's headers (build/python/python.stamp
    says what it found)."""
    try:
        with open(os.path.join(PYEXT, "python.stamp")) as f:
            found = f.read().split()
    except OSError:
        found = []
    if len(found) == 2:
        check("pyhelper: the C extension is built (headers found)",
              os.path.exists(os.path.join(PYEXT, "_tprof" + found[1])),
              "no _tprof%s in %s" % (found[1], PYEXT))
    suffix = sysconfig.get_config_var("EXT_SUFFIX") or ".so"
    return os.path.exists(os.path.join(PYEXT, "_tprof" + suffix))


def impl_env(impl):
    """(PYTHONPATH dirs, extra env) for the C extension or the ctypes
    path, which is also what runs when the extension is not on the path."""
    if impl == "c":
        return [PYDIR, PYEXT], {}
    if impl == "hidden":
        return [PYDIR], {}
    return [PYDIR, PYEXT], {"TPROF_PYTHON_EXT": "0"}


def impl_of(impl):
    return "c" if impl == "c" else "ctypes"


def impl_checks(impl):
    """The helper's checks, with the C extension or the ctypes path; the
    traces it made, by script, for the comparison of the two."""
    P = "pyhelper[%s]: " % impl
    PATH, X = impl_env(impl)
    made = {}
    # ---------------------------------------------------------------------------
    # Without the library: every function is a no-op, nothing is written.
    NOLIB = script("nolib.py", r'''
import json, sys
import tprof
import torch
torch.cuda._initialized = True
out = {"impl": tprof.implementation}
out["available"] = tprof.available()
out["step"] = [tprof.step(), tprof.step()]
with tprof.range("a"):
    with tprof.range("b \u00e9\u4e2d"):
        tprof.mark("m")
@tprof.timed
def bare(x):
    return x + 1
@tprof.timed()
def paren(x):
    return x * 2
@tprof.timed("nm")
def nm():
    return "ok"
out["calls"] = [bare(1), paren(3), nm()]
out["names"] = [bare.__name__, paren.__name__, nm.__name__]
tprof.disable()
out["recording_off"] = tprof.recording()
tprof.enable()
out["recording_on"] = tprof.recording()
try:
    with tprof.range("raises"):
        raise KeyError("k")
except KeyError:
    out["propagated"] = True
out["torch_calls"] = torch.cuda._calls
sys.stderr.write("RESULT " + json.dumps(out) + "\n")
    ''')
    r = run([PY, NOLIB], env=pyenv(*(PATH + [FAKE]), **X), preload=False)
    eq(P + "no library: exit code", r.rc, 0)
    eq(P + "no library: nothing on stdout", r.stdout, "")
    res = results(r)
    eq(P + "no library: every function runs, as no-ops",
       res, {"impl": impl_of(impl), "available": False,
             "step": [None, None], "calls": [2, 6, "ok"],
             "names": ["bare", "paren", "nm"], "recording_off": False,
             "recording_on": False, "propagated": True, "torch_calls": 0})
    if not res:
        print("  stderr: " + r.stderr.strip().replace("\n", "\n  stderr: "))
    eq(P + "no library: no file written", r.files(), [])
    cleanup(r)

    # ---------------------------------------------------------------------------
    # Ranges, decorators, marks, non-ASCII names, threads.
    RANGES = script("ranges.py", r'''
import contextlib, json, sys, threading
import tprof

@tprof.timed()
def paren():
    return "p"

@tprof.timed("custom name")
def custom():
    return "c"

@tprof.timed
def bare(a, b=2):
    """doc"""
    return a + b

class K:
    @tprof.timed
    def meth(self):
        return "m"

out = {"available": tprof.available(), "recording": tprof.recording()}
with tprof.range("outer"):
    with tprof.range("inner"):
        tprof.mark("a mark")
        out["paren"] = paren()
    out["custom"] = custom()
    out["bare"] = bare(1, b=3)
    out["meth"] = K().meth()
with tprof.range("wide \u00e9\u4e2d\U0001f600"):
    pass
tprof.mark("mark \u00e9\u4e2d")
try:
    with tprof.range("raises"):
        raise ValueError("x")
except ValueError:
    out["propagated"] = True
out["wraps"] = [bare.__name__, bare.__doc__, K.meth.__qualname__]

def worker():
    out["worker_tid"] = threading.get_native_id()
    with tprof.range("in worker"):
        with shared:
            pass
th = threading.Thread(target=worker)

# One object reused: in a loop, inside itself, by another thread.
shared = tprof.range("shared")
for i in range(3):
    with shared:
        with shared:
            pass
with tprof.range("exc outer"):
    try:
        with tprof.range("exc inner"):
            with tprof.range("exc innermost"):
                raise KeyError("k")
    except KeyError:
        out["nested_propagated"] = True

@tprof.range("as decorator")
def deco(x, *, y=0):
    return x * 10 + y
out["deco"] = deco(4, y=2)

@tprof.range(b"bytes name")
def fails():
    raise RuntimeError("inside")
try:
    fails()
except RuntimeError as e:
    out["deco_raised"] = str(e)

with contextlib.ExitStack() as stack:
    stack.enter_context(tprof.range("exit stack"))
    out["stack_result"] = stack.enter_context(
        tprof.range("exit stack 2")).__class__.__name__

th.start(); th.join()
out["tid"] = threading.get_native_id()
out["torch_imported"] = "torch" in sys.modules
out["impl"] = tprof.implementation
print("RESULT " + json.dumps(out))
    ''')
    r = run([PY, RANGES], env=pyenv(*(PATH + [FAKE]), **X))
    eq(P + "ranges: exit code", r.rc, 0)
    res = results(r)
    eq(P + "ranges: script results",
       {k: res.get(k) for k in ("available", "recording", "paren", "custom",
                                "bare", "meth", "propagated", "wraps",
                                "torch_imported", "nested_propagated",
                                "deco", "deco_raised", "stack_result",
                                "impl")},
       {"available": True, "recording": True, "paren": "p", "custom": "c",
        "bare": 4, "meth": "m", "propagated": True,
        "wraps": ["bare", "doc", "K.meth"], "torch_imported": False,
        "nested_propagated": True, "deco": 42, "deco_raised": "inside",
        "stack_result": "range", "impl": impl_of(impl)})
    t = trace_of(r)
    check(P + "ranges: one trace", t is not None,
          "%s; stderr: %s" % (r.files(), r.stderr))
    t = t or empty()
    if trace_path(r):
        tprof_check(trace_path(r), P + "ranges: tprof check")
    check(P + "ranges: strict nesting of every X on each thread",
          nesting_ok(t))
    xs = ua(t, "X")
    W = P + "ranges"
    outer = one(W, xs, "outer")
    inner = one(W, xs, "inner")
    p = one(W, xs, "paren")
    c = one(W, xs, "custom name")
    b = one(W, xs, "bare")
    m = one(W, xs, "K.meth")
    wide = one(W, xs, "wide \u00e9\u4e2d\U0001f600")
    rz = one(W, xs, "raises")
    wk = one(W, xs, "in worker")
    eq(P + "ranges: exactly the ranges the script made",
       sorted(e["name"] for e in xs),
       sorted(["outer", "inner", "paren", "custom name", "bare", "K.meth",
               "wide \u00e9\u4e2d\U0001f600", "raises", "in worker"] +
              ["shared"] * 7 + ["exc outer", "exc inner", "exc innermost",
                                "as decorator", "bytes name", "exit stack",
                                "exit stack 2"]))
    sh = sorted(named(xs, "shared"), key=lambda e: span_ns(e))
    eq(P + "ranges: a reused range nests in itself, 3 times, in order",
       [inside(sh[i + 1], sh[i]) for i in (0, 2, 4)] +
       [span_ns(sh[i])[1] <= span_ns(sh[i + 1])[0] for i in (1, 3)]
       if len(sh) == 7 else len(sh), [True] * 5)
    check(P + "ranges: the shared range, on the worker, in its range",
          len(sh) == 7 and inside(sh[6], wk) and sh[6].get("tid") == wk.get("tid"))
    ex = [one(W, xs, n) for n in ("exc outer", "exc inner", "exc innermost")]
    check(P + "ranges: an exception ends each range it leaves, nested",
          inside(ex[2], ex[1]) and inside(ex[1], ex[0]))
    check(P + "ranges: the decorator's ranges, one per call",
          bool(one(W, xs, "as decorator")) and bool(one(W, xs, "bytes name")))
    es = [one(W, xs, n) for n in ("exit stack", "exit stack 2")]
    check(P + "ranges: ExitStack's ranges nest, the last in the first",
          inside(es[1], es[0]))
    made["ranges"] = (t, res)
    check(P + "ranges: inner nests in outer", inside(inner, outer))
    check(P + "ranges: @timed() range nests in inner", inside(p, inner))
    check(P + "ranges: decorated ranges nest in outer, after inner",
          all(inside(e, outer) and span_ns(e)[0] >= span_ns(inner)[1]
              for e in (c, b, m)) if inner else False)
    check(P + "ranges: sibling ranges do not overlap",
          c and b and m and span_ns(c)[1] <= span_ns(b)[0] and
          span_ns(b)[1] <= span_ns(m)[0])
    main_tid = res.get("tid", -2)
    eq(P + "ranges: on the calling thread's tid",
       {e.get("tid") for e in xs if e is not wk and
        not (len(sh) == 7 and e is sh[6])}, {main_tid})
    eq(P + "ranges: a thread's range is on its own tid", wk.get("tid"),
       res.get("worker_tid", -3))
    check(P + "ranges: worker tid differs from the main one",
          wk.get("tid") not in (None, main_tid))
    eq(P + "ranges: every range has domain tprof",
       [e["name"] for e in xs if (e.get("args") or {}).get("domain") != "tprof"],
       [])
    eq(P + "ranges: no memory args without torch",
       [e["name"] for e in xs if mem_args(e)], [])
    marks = ua(t, "i")
    eq(P + "marks: exactly the marks the script made",
       sorted(e["name"] for e in marks), sorted(["a mark", "mark \u00e9\u4e2d"]))
    am = one(P + "marks", marks, "a mark")
    check(P + "marks: the mark lies in the range it was made in",
          inside(am, inner))
    eq(P + "marks: on the calling thread", am.get("tid"), main_tid)
    eq(P + "ranges: nothing on stdout but the script's own",
       [l for l in r.stdout.splitlines() if not l.startswith("RESULT ")], [])
    cleanup(r)

    # ---------------------------------------------------------------------------
    # step(): numbers, ProfilerStep events, the capture object.
    STEPS = script("steps.py", r'''
import json, time
import tprof
got = []
for i in range(3):
    with tprof.range("s%d" % i):
        time.sleep(0.002)
    got.append(tprof.step())
print("RESULT " + json.dumps({"steps": got}))
    ''')
    r = run([PY, STEPS], env=pyenv(*PATH, **X))
    eq(P + "steps: exit code", r.rc, 0)
    eq(P + "steps: step() returns 1, 2, 3", results(r).get("steps"),
       [1, 2, 3])
    t = trace_of(r)
    check(P + "steps: one trace", t is not None,
          "%s; stderr: %s" % (r.files(), r.stderr))
    t = t or empty()
    if trace_path(r):
        tprof_check(trace_path(r), P + "steps: tprof check")
    ps = steps(t)
    eq(P + "steps: ProfilerStep#0..#2", [e["name"] for e in ps],
       ["ProfilerStep#0", "ProfilerStep#1", "ProfilerStep#2"])
    eq(P + "steps: category user_annotation", {e.get("cat") for e in ps},
       {UA})
    check(P + "steps: contiguous (each starts where the previous ended)",
          len(ps) == 3 and all(abs(ps[i]["ts"] - (ps[i - 1]["ts"] +
                                                  ps[i - 1]["dur"])) <= 1.0
                               for i in range(1, len(ps))),
          str([(e["ts"], e["dur"]) for e in ps]))
    check(P + "steps: each range lies in its step",
          len(ps) == 3 and all(inside(one(P + "steps", ua(t, "X"),
                                          "s%d" % i), ps[i]) for i in range(3)))
    eq(P + "steps: capture steps_kept",
       (t.get("tprof", {}).get("capture") or {}).get("steps_kept"), [0, 1, 2])
    cleanup(r)

    # The schedule: wait=1, warmup=0, active=2 over 6 steps keeps 1, 2, 4, 5.
    SCHED = script("sched.py", r'''
import json
import tprof
got = []
for i in range(6):
    with tprof.range("work%d" % i):
        pass
    got.append(tprof.step())
print("RESULT " + json.dumps({"steps": got}))
    ''')
    r = run([PY, SCHED], env=pyenv(*PATH, TPROF_ACTIVE="2", TPROF_WAIT="1", **X))
    eq(P + "schedule: exit code", r.rc, 0)
    eq(P + "schedule: step() returns 1..6", results(r).get("steps"),
       [1, 2, 3, 4, 5, 6])
    t = trace_of(r)
    check(P + "schedule: one trace", t is not None,
          "%s; stderr: %s" % (r.files(), r.stderr))
    t = t or empty()
    work_evs = sorted([e for e in ua(t, "X") if e["name"].startswith("work")],
                      key=lambda e: e["ts"])
    eq(P + "schedule: the ranges of steps 1, 2, 4, 5 are kept",
       [e["name"] for e in work_evs], ["work1", "work2", "work4", "work5"])
    ps = steps(t)
    eq(P + "schedule: ProfilerStep#1, #2, #4, #5",
       [e["name"] for e in ps], ["ProfilerStep#1", "ProfilerStep#2",
                                 "ProfilerStep#4", "ProfilerStep#5"])
    check(P + "schedule: each range lies in its step",
          len(ps) == 4 and len(work_evs) == 4 and
          all(inside(w, s) for w, s in zip(work_evs, ps)))
    eq(P + "schedule: capture steps_kept",
       (t.get("tprof", {}).get("capture") or {}).get("steps_kept"), [1, 2, 4, 5])
    cleanup(r)

    # ---------------------------------------------------------------------------
    # disable() / enable().
    TOGGLE = script("toggle.py", r'''
import json
import tprof
out = {}
with tprof.range("before"):
    pass
out["rec_start"] = tprof.recording()
tprof.disable()
out["rec_disabled"] = tprof.recording()
with tprof.range("while disabled"):
    pass
tprof.mark("mark while disabled")
tprof.enable()
out["rec_enabled"] = tprof.recording()
with tprof.range("after"):
    pass
print("RESULT " + json.dumps(out))
    ''')
    r = run([PY, TOGGLE], env=pyenv(*PATH, **X))
    eq(P + "disable: exit code", r.rc, 0)
    eq(P + "disable: recording() follows disable/enable", results(r),
       {"rec_start": True, "rec_disabled": False, "rec_enabled": True})
    t = trace_of(r) or empty()
    eq(P + "disable: ranges while disabled are absent",
       sorted(e["name"] for e in ua(t)), ["after", "before"])
    cleanup(r)

    # ---------------------------------------------------------------------------
    # Device memory from torch.cuda (the stand-in), when torch is imported.
    MEM = script("mem.py", r'''
import json
import tprof
import torch
cuda = torch.cuda
cuda._initialized = True
cuda._allocated, cuda._peak = 100, 100
with tprof.range("rise"):
    cuda._allocated, cuda._peak = 500, 500
    cuda._allocated = 300
cuda._allocated, cuda._peak = 200, 1000
with tprof.range("flat"):
    cuda._allocated = 400
cuda._allocated, cuda._peak = 600, 1000
with tprof.range("flat down"):
    cuda._allocated = 50
cuda._allocated, cuda._peak = 10, 10
with tprof.range("outer mem"):
    cuda._allocated, cuda._peak = 70, 70
    with tprof.range("inner mem"):
        cuda._allocated, cuda._peak = 90, 90
        cuda._allocated = 80
    cuda._allocated = 20
with tprof.range("torch fails"):
    cuda._fail = True
cuda._fail = False
cuda._initialized = False
with tprof.range("not initialized"):
    cuda._allocated = 5
print("RESULT " + json.dumps({"ok": True}))
    ''')
    r = run([PY, MEM], env=pyenv(*(PATH + [FAKE]), **X))
    eq(P + "memory: exit code", r.rc, 0)
    t = trace_of(r)
    check(P + "memory: one trace", t is not None,
          "%s; stderr: %s" % (r.files(), r.stderr))
    t = t or empty()
    xs = ua(t, "X")
    W = P + "memory"
    eq(P + "memory: peak reached inside the range",
       mem_args(one(W, xs, "rise")),
       {"mem_entry": 100, "mem_exit": 300, "mem_peak": 500})
    eq(P + "memory: peak not reached inside: max(entry, exit)",
       mem_args(one(W, xs, "flat")),
       {"mem_entry": 200, "mem_exit": 400, "mem_peak": 400})
    eq(P + "memory: peak not reached inside, falling: max(entry, exit)",
       mem_args(one(W, xs, "flat down")),
       {"mem_entry": 600, "mem_exit": 50, "mem_peak": 600})
    eq(P + "memory: nested: outer",
       mem_args(one(W, xs, "outer mem")),
       {"mem_entry": 10, "mem_exit": 20, "mem_peak": 90})
    eq(P + "memory: nested: inner",
       mem_args(one(W, xs, "inner mem")),
       {"mem_entry": 70, "mem_exit": 80, "mem_peak": 90})
    check(P + "memory: nested ranges nest",
          inside(one(W, xs, "inner mem"), one(W, xs, "outer mem")))
    eq(P + "memory: torch raising: plain range",
       mem_args(one(W, xs, "torch fails")), {})
    eq(P + "memory: CUDA not initialized: plain range",
       mem_args(one(W, xs, "not initialized")), {})
    eq(P + "memory: domain tprof on every range",
       {(e.get("args") or {}).get("domain") for e in xs}, {"tprof"})
    eq(P + "memory: exactly the ranges made", len(xs), 7)
    made["memory"] = (t, {})
    cleanup(r)

    return made


def canon(t):
    """The tprof events as the program made them, without their times: per
    thread (in the order of its first event), each event's phase, name,
    args and depth, in order of start (the outer first)."""
    evs = sorted(ua(t), key=lambda e: (span_ns(e)[0], -span_ns(e)[1]))
    by_tid = {}
    for e in evs:
        by_tid.setdefault(e["tid"], []).append(e)
    out = []
    for seq in by_tid.values():
        stack, rows = [], []
        for e in seq:
            s, f = span_ns(e)
            while stack and stack[-1] <= s:
                stack.pop()
            rows.append((e["ph"], e["name"], json.dumps(e.get("args"),
                                                        sort_keys=True),
                         len(stack)))
            if e["ph"] == "X":
                stack.append(f)
        out.append(rows)
    return out


IMPLS = ["c", "ctypes"]
if not ext_built():
    skip("pyhelper[c]", "the C extension is not built for this Python "
         "(no headers: apt-get install python3-dev, or make PYTHON=%s); the "
         "ctypes path alone is checked" % PY)
    IMPLS = ["ctypes"]
made = {impl: impl_checks(impl) for impl in IMPLS}
if len(made) == 2:
    for what in ("ranges", "memory"):
        a, b = made["c"].get(what), made["ctypes"].get(what)
        eq("pyhelper: %s: the C extension's trace holds the ctypes path's "
           "events (names, args, threads, nesting)" % what,
           canon(a[0]) if a else None, canon(b[0]) if b else None)


# ---------------------------------------------------------------------------
# tprof-run --torch-steps.
OPT = script("opt.py", r'''
import json, sys
import torch
import torch.optim.optimizer as oo
opt = torch.optim.Optimizer([])
for i in range(4):
    opt.step()
print("RESULT " + json.dumps({
    "hooks": len(oo._global_optimizer_post_hooks),
    "finder_left": any(getattr(f, "_tprof_torch_steps", False)
                       for f in sys.meta_path),
    "loader": type(oo.__loader__).__name__,
    "spec_loader": type(oo.__spec__.loader).__name__,
}))
''')
r = run([RUN, "--torch-steps", PY, OPT], env=pyenv(FAKE))
eq("pyhelper: torch-steps: exit code", r.rc, 0)
eq("pyhelper: torch-steps: one hook, finder gone, real loader kept",
   results(r), {"hooks": 1, "finder_left": False,
                "loader": "SourceFileLoader", "spec_loader": "SourceFileLoader"})
t = trace_of(r)
check("pyhelper: torch-steps: one trace", t is not None,
      "%s; stderr: %s" % (r.files(), r.stderr))
t = t or empty()
eq("pyhelper: torch-steps: 4 optimizer steps: ProfilerStep#0..#3",
   [e["name"] for e in steps(t)],
   ["ProfilerStep#0", "ProfilerStep#1", "ProfilerStep#2", "ProfilerStep#3"])
eq("pyhelper: torch-steps: no warning",
   [l for l in r.other_lines() if l.startswith("tprof:") and
    "wrote" not in l], [])
cleanup(r)

# The shim never imports torch, and a program's own sitecustomize still runs.
usersite = os.path.join(work, "usersite")
os.makedirs(usersite)
with open(os.path.join(usersite, "sitecustomize.py"), "w") as f:
    f.write("import os, sys\n"
            "os.environ['PYHELPER_USER_SITE'] = 'ran'\n"
            "sys.stderr.write('user sitecustomize ran\\n')\n")
NOTORCH = script("notorch.py", r'''
import json, os, sys
import sitecustomize
print("RESULT " + json.dumps({
    "torch": "torch" in sys.modules,
    "torch_any": sorted(m for m in sys.modules if m.split(".")[0] == "torch"),
    "finder": sum(1 for f in sys.meta_path
                  if getattr(f, "_tprof_torch_steps", False)),
    "user_site": os.environ.get("PYHELPER_USER_SITE"),
    "sitecustomize": os.path.dirname(sitecustomize.__file__),
}))
''')
r = run([RUN, "--torch-steps", PY, NOTORCH], env=pyenv(usersite, FAKE))
eq("pyhelper: torch-steps: no torch: exit code", r.rc, 0)
res = results(r)
eq("pyhelper: torch-steps: the shim does not import torch",
   (res.get("torch"), res.get("torch_any")), (False, []))
eq("pyhelper: torch-steps: the shim's finder is installed", res.get("finder"),
   1)
eq("pyhelper: torch-steps: the program's sitecustomize runs",
   res.get("user_site"), "ran")
eq("pyhelper: torch-steps: ... once, on stderr",
   r.stderr.count("user sitecustomize ran\n"), 1)
eq("pyhelper: torch-steps: ... and is sys.modules['sitecustomize']",
   res.get("sitecustomize"), usersite)
cleanup(r)

# A failing program sitecustomize is reported as site.py reports it; steps
# still work.
badsite = os.path.join(work, "badsite")
os.makedirs(badsite)
with open(os.path.join(badsite, "sitecustomize.py"), "w") as f:
    f.write("raise RuntimeError('boom in user sitecustomize')\n")
r = run([RUN, "--torch-steps", PY, OPT], env=pyenv(badsite, FAKE))
eq("pyhelper: torch-steps: failing user sitecustomize: exit code", r.rc, 0)
check("pyhelper: torch-steps: ... reported as Python reports it",
      "Error in sitecustomize; set PYTHONVERBOSE for traceback:\n"
      "RuntimeError: boom in user sitecustomize\n" in r.stderr, r.stderr)
t = trace_of(r) or empty()
eq("pyhelper: torch-steps: ... and steps are still seen",
   len(steps(t)), 4)
cleanup(r)

# torch without register_optimizer_step_post_hook: one warning.
r = run([RUN, "--torch-steps", PY, OPT], env=pyenv(FAKE,
                                                   PYFAKE_OLD_TORCH="1"))
eq("pyhelper: torch-steps: old torch: exit code", r.rc, 0)
eq("pyhelper: torch-steps: old torch: one warning",
   [l for l in r.other_lines() if l.startswith("tprof:") and
    "wrote" not in l],
   ["tprof: warning: --torch-steps: this torch has no "
    "register_optimizer_step_post_hook (torch >= 2.0 needed); no steps are "
    "seen"])
t = trace_of(r) or empty()
eq("pyhelper: torch-steps: old torch: no steps", len(steps(t)), 0)
cleanup(r)

# The shim on PYTHONPATH without the library: nothing happens.
r = run([PY, OPT], env=pyenv(SHIMDIR, PYDIR, FAKE), preload=False)
eq("pyhelper: shim without the library: exit code", r.rc, 0)
eq("pyhelper: shim without the library: no hook registered",
   results(r).get("hooks"), 0)
eq("pyhelper: shim without the library: no output",
   (r.stderr, r.files()), ("", []))
cleanup(r)

# ---------------------------------------------------------------------------
# Start-up cost (informational).
r = run([PY, "-X", "importtime", "-c", "import tprof"],
        env=pyenv(SHIMDIR, PYDIR), preload=False)
cost = {}
for line in r.stderr.splitlines():
    mt = re.match(r"import time:\s+(\d+) \|\s+(\d+) \|\s*(\S+)$", line)
    if mt and mt.group(3) in ("sitecustomize", "tprof", "site"):
        cost[mt.group(3)] = int(mt.group(2))
print("INFO pyhelper: import time (cumulative us): sitecustomize %s, "
      "tprof %s, site %s" % (cost.get("sitecustomize"), cost.get("tprof"),
                             cost.get("site")))
cleanup(r)

shutil.rmtree(work, ignore_errors=True)
done()
