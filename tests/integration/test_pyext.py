"""The Python helper's C extension (pyext/, build/python/_tprof*.so).

Which path runs: the extension when it is on the path, ctypes with
TPROF_PYTHON_EXT=0 or when it is not. Names: whatever object names a
range or a mark, the extension makes of it what the ctypes path makes
(str, bytes, surrogates, objects whose __str__ or __repr__ raise). A
flood: 250k ranges from a tight loop (1M with make test-stress), default
ring and spill pool: every range written is one the loop made, whole,
and what was not written is counted (ranges written + pushes dropped =
ranges made). Across yield and await: an exit ends the thread's
innermost open range, as NVTX push/pop does: the ranges stay whole and
nested, and count as made. Decorated functions pickle, copy, weakref and
bind as the ctypes path's do. The no-op cost without the library, and
the extension is not linked to libtprof.so."""
import collections
import glob
import gzip
import json
import os
import re
import subprocess
import sys
import sysconfig
import tempfile

from tplib import (BUILD, CLI, ROOT, check, cleanup, done, eq, run, skip,
                   span_ns, tprof_check)

PY = sys.executable or "python3"
PYDIR = os.path.join(ROOT, "scripts", "python")
PYEXT = os.path.join(BUILD, "python")
UA = "user_annotation"
work = tempfile.mkdtemp(prefix="tprof-pyext-")
SO = glob.glob(os.path.join(PYEXT, "_tprof" + (
    sysconfig.get_config_var("EXT_SUFFIX") or ".so")))


def script(name, text):
    path = os.path.join(work, name)
    with open(path, "w", encoding="utf-8") as f:
        f.write(text)
    return path


def env(*dirs, **extra):
    e = {"PYTHONPATH": os.pathsep.join(dirs), "PYTHONDONTWRITEBYTECODE": "1",
         "PYTHONIOENCODING": "utf-8"}
    e.update(extra)
    return e


def result(r):
    for line in r.stdout.splitlines():
        if line.startswith("RESULT "):
            return json.loads(line[7:])
    return {}


# An event line as the JSON writer writes it, with a plain name; others
# go through json.loads.
LINE = re.compile(r'\{"ph":"(.)","cat":"user_annotation","name":"([^"\\]*)",'
                  r'"pid":\d+,"tid":(\d+),"ts":([0-9.]+)(?:,"dur":([0-9.]+))?')


def event(line):
    m = LINE.match(line)
    if not m:
        return json.loads(line.rstrip().rstrip(","))
    e = {"ph": m.group(1), "name": m.group(2), "tid": int(m.group(3)),
         "ts": float(m.group(4))}
    if m.group(5):
        e["dur"] = float(m.group(5))
    return e


def stream(path):
    """(tprof events, the trailer's tprof object) of a JSON trace, one
    event line at a time: a million events would not fit json.load's
    memory here, nor its time."""
    evs, tail, in_events = [], [], True
    with gzip.open(path, "rt", encoding="utf-8") as f:
        for line in f:
            if in_events:
                if line.startswith("],"):
                    in_events = False
                elif '"cat":"user_annotation"' in line:
                    e = event(line)
                    if not e["name"].startswith("ProfilerStep#"):
                        evs.append(e)
            else:
                tail.append(line)
    trailer = json.loads("{" + "".join(tail))
    return evs, trailer.get("tprof", {})


def trace_file(r):
    files = glob.glob(os.path.join(r.dir, "*.trace.json.gz"))
    return files[0] if len(files) == 1 else None


if not SO:
    skip("pyext", "the C extension is not built for this Python (no "
         "headers: apt-get install python3-dev, or make PYTHON=%s)" % PY)
    done()

# ---------------------------------------------------------------------------
# Which path runs.
WHICH = script("which.py", r'''
import json, tprof
print("RESULT " + json.dumps([tprof.implementation, tprof.available(),
                              type(tprof.range("x")).__module__]))
''')
for label, dirs, extra, want in (
        ("on the path", (PYDIR, PYEXT), {}, ["c", True, "tprof"]),
        ("TPROF_PYTHON_EXT=0", (PYDIR, PYEXT), {"TPROF_PYTHON_EXT": "0"},
         ["ctypes", True, "tprof"]),
        ("not on the path", (PYDIR,), {}, ["ctypes", True, "tprof"])):
    r = run([PY, WHICH], env=env(*dirs, **extra))
    eq("pyext: %s: implementation, available" % label, result(r), want)
    eq("pyext: %s: nothing on stderr but the trace's line" % label,
       [l for l in r.stderr.splitlines() if not l.startswith("tprof: wrote ")],
       [])
    cleanup(r)
r = run([PY, WHICH], env=env(PYDIR, PYEXT), preload=False)
eq("pyext: without the library: the extension, unavailable", result(r),
   ["c", False, "tprof"])
cleanup(r)

# Not linked to libtprof.so: it looks the functions up when imported.
p = subprocess.run(["readelf", "-d", SO[0]], capture_output=True, text=True)
if p.returncode == 0:
    eq("pyext: the extension needs no libtprof.so",
       [l for l in p.stdout.splitlines() if "NEEDED" in l and "tprof" in l],
       [])

# ---------------------------------------------------------------------------
# Names: the same as the ctypes path's for anything given as a name.
NAMES = script("names.py", r'''
import json, tprof

class NoStr:
    def __str__(self): raise ValueError("no str")
    def __repr__(self): return "NoStr()"

class Neither:
    def __str__(self): raise ValueError("no str")
    def __repr__(self): raise ValueError("no repr")

class S(str):
    def __str__(self): return "from __str__"

names = ["plain", "\u00e9\u4e2d\U0001f600", "sur\udcff", "lone \ud800",
         b"bytes", b"raw \xc3\xa9", 123, 4.5, None, NoStr(), Neither(),
         S("sub"), "nul\0cut", ("a", 1)]
for i, n in enumerate(names):
    with tprof.range(n):
        tprof.mark(n)
@tprof.timed(NoStr())
def f(): return 1
f()
print("RESULT " + json.dumps(tprof.implementation))
''')
got = {}
for impl, extra in (("c", {}), ("ctypes", {"TPROF_PYTHON_EXT": "0"})):
    r = run([PY, NAMES], env=env(PYDIR, PYEXT, **extra))
    eq("pyext: names (%s): exit code, implementation" % impl,
       (r.rc, result(r)), (0, impl))
    path = trace_file(r)
    if path:
        evs, _ = stream(path)
        got[impl] = [(e["ph"], e["name"]) for e in
                     sorted(evs, key=lambda e: (span_ns(e)[0], e["ph"]))]
    cleanup(r)
eq("pyext: names: 14 ranges, 14 marks, 1 decorated range",
   len(got.get("c", [])), 29)
eq("pyext: names: each as the ctypes path names it", got.get("c"),
   got.get("ctypes"))
want = {"plain", "\u00e9\u4e2d\U0001f600", "bytes", "123", "4.5", "None",
        "NoStr()", "?", "from __str__", "nul", "('a', 1)", "'lone \\ud800'"}
eq("pyext: names: str(), repr() when str() raises, '?' when both do",
   sorted(want - {n for _, n in got.get("c", [])}), [])

# ---------------------------------------------------------------------------
# A decorated function is still a function to the rest of Python: pickled
# by name (multiprocessing sends them), weakly referenced, copied as
# itself, inspected through __wrapped__, bound in a class.
FUNC = script("func.py", r'''
import copy, inspect, json, pickle, sys, weakref
import tprof

@tprof.timed
def top(a, b=2, *, c=3):
    """top's doc"""
    return a + b + c

class K:
    @tprof.range("K.m")
    def m(self, x):
        return (type(self).__name__, x)
    @staticmethod
    @tprof.timed
    def s(x):
        return x

out = {"impl": tprof.implementation}
out["pickled"] = pickle.loads(pickle.dumps(top)) is top
out["copied"] = copy.deepcopy(top) is top and copy.copy(top) is top
w = weakref.ref(top)
out["weakref"] = w() is top
out["signature"] = str(inspect.signature(top))
out["wrapped"] = top.__wrapped__(1) == 6
out["attrs"] = [top.__name__, top.__qualname__, top.__doc__, top.__module__]
out["calls"] = [top(1), top(1, 1, c=1), K().m(5), K.m(K(), 6), K.s(7)]
try:
    top()
except TypeError:
    out["bad_call"] = "TypeError"
print("RESULT " + json.dumps(out))
''')
got = {}
for impl, extra in (("c", {}), ("ctypes", {"TPROF_PYTHON_EXT": "0"})):
    r = run([PY, FUNC], env=env(PYDIR, PYEXT, **extra))
    res = result(r)
    eq("pyext: decorated functions (%s): exit code, implementation" % impl,
       (r.rc, res.pop("impl", None)), (0, impl))
    got[impl] = res
    path = trace_file(r)
    if path:
        evs, _ = stream(path)
        got[impl]["ranges"] = sorted(e["name"] for e in evs)
    cleanup(r)
eq("pyext: decorated functions: pickled, copied, weakly referenced, "
   "inspected, called as the ctypes path's are", got.get("c"),
   got.get("ctypes"))
eq("pyext: decorated functions: what they are", got.get("c"),
   {"pickled": True, "copied": True, "weakref": True,
    "signature": "(a, b=2, *, c=3)", "wrapped": True,
    "attrs": ["top", "top", "top's doc", "__main__"],
    "calls": [6, 3, ["K", 5], ["K", 6], 7], "bad_call": "TypeError",
    "ranges": sorted(["top", "top", "K.m", "K.m", "K.s", "top"])})

# ---------------------------------------------------------------------------
# A flood from a tight loop, at the default ring and pool: 250k ranges
# (750k records: the ring and the spill pool may hold them all, or the
# writer may fall behind), 1M with make test-stress (TPROF_STRESS=1),
# where the writer falls behind unless the machine is idle. Either way:
# every range written is whole, and written + dropped = made.
N = 1000000 if os.environ.get("TPROF_STRESS") == "1" else 250000
FLOOD = script("flood.py", r'''
import json, sys, time, threading, tprof
n = int(sys.argv[1])
r = tprof.range("flood")
t0 = time.perf_counter()
for _ in range(n):
    with r:
        pass
dt = time.perf_counter() - t0
print("RESULT " + json.dumps({"impl": tprof.implementation, "s": dt,
                              "tid": threading.get_native_id()}))
''')
r = run([PY, FLOOD, str(N)], env=env(PYDIR, PYEXT), timeout=600)
res = result(r)
eq("pyext: flood: exit code, the extension", (r.rc, res.get("impl")),
   (0, "c"))
path = trace_file(r)
check("pyext: flood: one trace", path is not None, r.stderr)
if path:
    tprof_check(path, "pyext: flood: tprof check")
    evs, tp = stream(path)
    nv = tp.get("nvtx", {})
    d = collections.defaultdict(lambda: -1, nv.get("dropped", {}))
    xs = [e for e in evs if e["ph"] == "X"]
    eq("pyext: flood: every range written is named flood, on the thread",
       collections.Counter((e["name"], e["tid"]) for e in evs),
       collections.Counter({("flood", res.get("tid")): len(xs)}))
    eq("pyext: flood: the trace's count is the ranges written",
       nv.get("ranges"), len(xs))
    eq("pyext: flood: ranges written + pushes dropped = ranges made",
       len(xs) + d["pushes"], N)
    eq("pyext: flood: a pop is dropped exactly when its push was",
       d["pops"], d["pushes"])
    spans = sorted(span_ns(e) for e in xs)
    eq("pyext: flood: no two ranges overlap (none is made of two)",
       sum(1 for a, b in zip(spans, spans[1:]) if a[1] > b[0]), 0)
    eq("pyext: flood: nothing unmatched, unpaired or unclosed",
       [nv.get(k) for k in ("unmatched_pops", "unpaired_pops", "unclosed")],
       [0, 0, 0])
    print("INFO pyext: flood: %d ranges in %.3f s (%.0f ns each, load %.1f):"
          " %d written, %d dropped (events dropped: %s)" %
          (N, res.get("s", 0), res.get("s", 0) * 1e9 / N, os.getloadavg()[0],
           len(xs), d["pushes"], tp.get("events_dropped")))
cleanup(r)

# ---------------------------------------------------------------------------
# Across yield and await: an exit ends the innermost open range.
YIELD = script("yield.py", r'''
import asyncio, json, tprof

def gen():
    with tprof.range("gen"):
        yield 1
        yield 2

g = gen()
next(g)                         # gen begins
with tprof.range("caller"):     # caller begins inside it
    next(g)
                                # caller's exit ends the innermost: caller
for _ in g:                     # gen's exit ends gen
    pass

async def task(name, first, second):
    await first.wait()
    with tprof.range(name):
        second.set()
        await asyncio.sleep(0.01)

async def main():
    a, b = asyncio.Event(), asyncio.Event()
    a.set()
    await asyncio.gather(task("task a", a, b), task("task b", b, asyncio.Event()))

asyncio.run(main())
print("RESULT " + json.dumps(tprof.implementation))
''')
got = {}
for impl, extra in (("c", {}), ("ctypes", {"TPROF_PYTHON_EXT": "0"})):
    r = run([PY, YIELD], env=env(PYDIR, PYEXT, **extra))
    eq("pyext: yield/await (%s): exit code" % impl, (r.rc, result(r)),
       (0, impl))
    path = trace_file(r)
    if path:
        tprof_check(path, "pyext: yield/await (%s): tprof check" % impl)
        evs, tp = stream(path)
        got[impl] = sorted((e["name"], span_ns(e)[0], span_ns(e)[1])
                           for e in evs)
        eq("pyext: yield/await (%s): 4 ranges, whole, none unmatched" % impl,
           (len(evs), (tp.get("nvtx") or {}).get("unmatched_pops")), (4, 0))
        by = {e["name"]: e for e in evs}
        s = {k: span_ns(v) for k, v in by.items()}
        check("pyext: yield/await (%s): caller lies in gen" % impl,
              "gen" in s and "caller" in s and s["gen"][0] <= s["caller"][0]
              and s["caller"][1] <= s["gen"][1])
        # task a begins, task b begins inside it, a's exit (first) ends
        # the innermost, b's: "task b" lies in "task a".
        check("pyext: yield/await (%s): the tasks' ranges nest, as the "
              "thread's stack pairs them" % impl,
              "task a" in s and "task b" in s and
              s["task a"][0] <= s["task b"][0] and
              s["task b"][1] <= s["task a"][1])
    cleanup(r)

# ---------------------------------------------------------------------------
# Without the library: the cost of a range is the with statement's.
COST = script("cost.py", r'''
import json, time, tprof
class Nop:
    def __enter__(self): return self
    def __exit__(self, *a): return False
def per(cm, n=200000):
    t0 = time.thread_time_ns()
    for _ in range(n):
        with cm:
            pass
    return (time.thread_time_ns() - t0) / n
r, nop = tprof.range("x"), Nop()
best = min((per(r), per(nop)) for _ in range(5))
print("RESULT " + json.dumps([tprof.implementation, best]))
''')
r = run([PY, COST], env=env(PYDIR, PYEXT), preload=False)
impl, (ext_ns, nop_ns) = result(r) or ["?", (0, 0)]
check("pyext: no library: a range costs less than an empty Python "
      "context manager", impl == "c" and 0 < ext_ns < nop_ns,
      "%s: %.1f ns vs %.1f ns" % (impl, ext_ns, nop_ns))
print("INFO pyext: no library: tprof.range %.1f ns, an empty Python context"
      " manager %.1f ns (thread CPU time, load %.1f)" %
      (ext_ns, nop_ns, os.getloadavg()[0]))
cleanup(r)

import shutil  # noqa: E402
shutil.rmtree(work, ignore_errors=True)
done()
