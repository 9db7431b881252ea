"""Ranges are never invented: with drops forced (no spill pool, a slow
writer: gzip level 9, a 1, 2, 4 and 16 MiB ring), every begin/end source
at once (progs/ranges_flood.c: NVTX push/pop flat and nested, pushes in
two domains that overlap, tprof_range_push/pop, nvtxRangeStart/End ended
on another thread; and the Python helper's tprof.range, through its
ctypes path and its C extension), each range in the trace is one that
happened, whole: named by its round, a range holds
only ranges of its own round, no name twice, flat ranges never overlap,
every async begin has its one end; and the counts add up exactly: ranges
written + pushes dropped = pushes made, pops dropped = pushes dropped,
async pairs + starts dropped + ends lost = starts made. `tprof check`
passes on the trace and on its Perfetto conversion."""
import collections
import glob
import os
import re
import sys
import sysconfig

from tplib import (BUILD, CLI, ROOT, check, cleanup, done, eq, load,
                   nesting_ok, prog, run, span_ns, tprof_check)

PROG = prog("ranges_flood")
PYDIR = os.path.join(ROOT, "scripts", "python")
PYEXT = os.path.join(BUILD, "python")
UA = "user_annotation"
FORCE = {"TPROF_SPILL_MB": "0", "TPROF_GZIP_LEVEL": "9"}
ROUND = re.compile(r"^([a-z]+)(\d+)$")


def trace_of(r):
    files = glob.glob(os.path.join(r.dir, "*.trace.json.gz"))
    return (load(files[0]), files[0]) if len(files) == 1 else (None, None)


def rounds_hold(label, xs):
    """Per thread: a range holds only ranges of its own round; the
    ranges nest; no name twice; flat ranges (f, t, p) never overlap."""
    bad, twice, overlap = [], [], []
    names = collections.Counter(e["name"] for e in xs)
    twice = [n for n, c in names.items() if c > 1]
    by_tid = collections.defaultdict(list)
    for e in xs:
        by_tid[e["tid"]].append(e)
    for evs in by_tid.values():
        evs = sorted(evs, key=lambda e: (span_ns(e)[0], -span_ns(e)[1]))
        stack = []
        for e in evs:
            s, f = span_ns(e)
            while stack and span_ns(stack[-1])[1] <= s:
                stack.pop()
            m = ROUND.match(e["name"])
            for outer in stack:
                o = ROUND.match(outer["name"])
                if not m or not o or m.group(2) != o.group(2):
                    bad.append((outer["name"], e["name"]))
            stack.append(e)
        flat = [e for e in evs if e["name"][0] in "ftp"]
        for a, b in zip(flat, flat[1:]):
            if span_ns(a)[1] > span_ns(b)[0]:
                overlap.append((a["name"], b["name"]))
    eq("%s: no range holds one of another round" % label, bad[:3], [])
    eq("%s: no range twice" % label, twice[:3], [])
    eq("%s: flat ranges never overlap" % label, overlap[:3], [])


def async_whole(label, t, starts_made):
    evs = [e for e in t["traceEvents"] if e.get("cat") == UA and
           e["ph"] in "be"]
    b = collections.Counter(e["id"] for e in evs if e["ph"] == "b")
    e = collections.Counter(e["id"] for e in evs if e["ph"] == "e")
    eq("%s: every async begin has its one end, every end its begin"
       % label, (sorted(set(b) ^ set(e))[:3],
                 [i for i, c in (b + e).items() if c != 2][:3]), ([], []))
    ends = {x["id"]: x for x in evs if x["ph"] == "e"}
    late = [x["name"] for x in evs if x["ph"] == "b" and x["id"] in ends
            and span_ns(ends[x["id"]])[0] < span_ns(x)[0]]
    eq("%s: no async range ends before it begins" % label, late[:3], [])
    nv = t["tprof"].get("nvtx", {})
    d = collections.defaultdict(lambda: -1, nv.get("dropped", {}))
    eq("%s: async pairs + starts dropped + ends lost = starts made" % label,
       len(b) + d["starts"] + nv.get("async_ends_lost", -1), starts_made)
    eq("%s: an end is dropped exactly when its start was" % label,
       d["ends"], d["starts"])


def counts_add_up(label, t, xs, pushes_made):
    tp = t["tprof"]
    nv = collections.defaultdict(lambda: -1, tp.get("nvtx", {}))
    d = collections.defaultdict(lambda: -1, nv.get("dropped", {}))
    check("%s: drops were forced" % label, tp["events_dropped"] > 0,
          "none dropped: the test proves nothing")
    eq("%s: ranges are paired by id" % label, nv.get("pairing"), "id")
    eq("%s: ranges written = the trailer's count" % label, len(xs),
       nv["ranges"])
    eq("%s: ranges written + pushes dropped = pushes made" % label,
       nv["ranges"] + d["pushes"], pushes_made)
    eq("%s: pops dropped = pushes dropped" % label, d["pops"], d["pushes"])
    check("%s: the range drops are among the events dropped" % label,
          0 <= sum(d.values()) <= tp["events_dropped"],
          (dict(d), tp["events_dropped"]))
    eq("%s: nothing unpaired, unclosed or unmatched" % label,
       (nv["unpaired_pops"], nv["unmatched_pops"], nv["unclosed"]),
       (0, 0, 0))


def converted_checks(label, path):
    out = path.replace(".trace.json.gz", ".pftrace.gz")
    p = run([CLI, "convert", path, "-o", out], preload=False)
    if check("%s: converts to Perfetto" % label, p.rc == 0, p.stderr):
        tprof_check(out, "%s: tprof check passes on the Perfetto form"
                    % label)
    merged = path.replace(".trace.json.gz", ".merged.json.gz")
    p = run([CLI, "merge", path, out, "-o", merged], preload=False)
    if check("%s: merges with its Perfetto form" % label, p.rc == 0,
             p.stderr):
        m = load(merged)["tprof"]["merged"]
        eq("%s: the merged trace carries each input's range account"
           % label, [x.get("nvtx", {}).get("pairing") for x in m],
           ["id", "id"])
        tprof_check(merged, "%s: tprof check passes on the merged trace"
                    % label)


def c_sources(mb, n):
    label = "range drops, %d MiB ring" % mb
    r = run([PROG, str(n)], env=dict(FORCE, TPROF_BUFFER_MB=str(mb)),
            timeout=300)
    eq("%s: exit code" % label, r.rc, 0)
    m = dict(l.split() for l in r.stdout.splitlines() if " " in l)
    t, path = trace_of(r)
    if not check("%s: a trace" % label, t is not None, r.stderr):
        return cleanup(r)
    xs = [e for e in t["traceEvents"] if e.get("cat") == UA and
          e["ph"] == "X"]
    check("%s: strict nesting" % label, nesting_ok(t))
    rounds_hold(label, xs)
    kinds = collections.Counter(ROUND.match(e["name"]).group(1)
                                for e in xs if ROUND.match(e["name"]))
    check("%s: every push source kept some ranges" % label,
          all(kinds[k] for k in ("f", "o", "n", "j", "da", "db", "t")),
          dict(kinds))
    clipped = [e for e in xs if e["args"].get("clipped")]
    ends = {e["name"][2:]: span_ns(e)[1] for e in xs
            if e["name"].startswith("da")}
    eq("%s: a clipped range ends with its kept enclosing one" % label,
       [e["name"] for e in clipped if e["name"][:2] != "db" or
        ends.get(e["name"][2:]) != span_ns(e)[1]][:3], [])
    counts_add_up(label, t, xs, int(m.get("pushes", -1)))
    async_whole(label, t, int(m.get("starts", -1)))
    tprof_check(path, "%s: tprof check passes" % label)
    converted_checks(label, path)
    cleanup(r)


PYPROG = """import sys, tprof
n = int(sys.argv[1])
for i in range(n):
    with tprof.range("p%d" % i):
        with tprof.range("q%d" % i):
            pass
print("pushes", 2 * n)
print("impl", tprof.implementation)
"""


def python_source(mb, n, impl):
    """impl: "c" (the helper's C extension) or "ctypes"."""
    label = "range drops, tprof.range (%s), %d MiB ring" % (impl, mb)
    d = os.path.join(os.environ.get("TMPDIR", "/tmp"),
                     "tprof-range-drops-%d.py" % os.getpid())
    with open(d, "w") as f:
        f.write(PYPROG)
    env = dict(FORCE, TPROF_BUFFER_MB=str(mb),
               PYTHONPATH=os.pathsep.join([PYDIR, PYEXT]),
               PYTHONDONTWRITEBYTECODE="1", TPROF_TRACE="nvtx",
               TPROF_PYTHON_EXT="0" if impl == "ctypes" else "1")
    r = run([sys.executable or "python3", d, str(n)], env=env, timeout=300)
    os.unlink(d)
    eq("%s: exit code" % label, r.rc, 0)
    t, path = trace_of(r)
    if not check("%s: a trace" % label, t is not None, r.stderr):
        return cleanup(r)
    xs = [e for e in t["traceEvents"] if e.get("cat") == UA and
          e["ph"] == "X"]
    rounds_hold(label, xs)
    nested = {e["name"][1:]: e for e in xs if e["name"][0] == "p"}
    outside = [e["name"] for e in xs if e["name"][0] == "q" and
               e["name"][1:] in nested and not
               (span_ns(nested[e["name"][1:]])[0] <= span_ns(e)[0] and
                span_ns(e)[1] <= span_ns(nested[e["name"][1:]])[1])]
    eq("%s: an inner range lies in its kept outer one" % label,
       outside[:3], [])
    m = dict(l.split() for l in r.stdout.splitlines() if " " in l)
    counts_add_up(label, t, xs, int(m.get("pushes", -1)))
    tprof_check(path, "%s: tprof check passes" % label)
    if impl == "ctypes" or os.path.exists(os.path.join(PYEXT, "_tprof" + (
            sysconfig.get_config_var("EXT_SUFFIX") or ".so"))):
        eq("%s: the path asked for" % label, m.get("impl"), impl)
    cleanup(r)


# 16 MiB is the default ring: 131072 records, which the rounds overflow.
for mb, n in ((1, 20000), (2, 30000), (4, 40000), (16, 60000)):
    c_sources(mb, n)
# The C extension, ten times as fast, fills the rings sooner.
for mb, n, impl in ((1, 60000, "ctypes"), (16, 150000, "c")):
    python_source(mb, n, impl)
done()
