#!/usr/bin/env python3
"""Opt-in (`make test-trace-processor`, needs a trace_processor_shell:
TRACE_PROCESSOR=PATH, or one on PATH, or build-tp/ from
scripts/build-trace-processor.sh): Perfetto's own importer reads tprof's
Perfetto traces.

For each trace it imports, the import has no error and no data loss
(the `stats` table), and:
- library traces (TPROF_FORMAT=perfetto, the fixtures test_pftrace.py
  runs): every slice, instant, async range and counter value of the JSON
  trace of the same program (another run) is there, by name, category
  and track as the importer resolved it (thread name; device and stream;
  process), the same number of flows, each from a thread to a GPU
  stream, the same process and thread names;
- `tprof convert` of a JSON trace (a library trace, a Kineto trace, the
  converter's own fixture): the same run, so every slice is compared
  exactly with the JSON: ts and dur in ns, name, category, track, depth
  in its track, args with their values, flows between the same slices,
  counters; and, where this trace_processor was built with its JSON
  importer, with what that importer makes of the JSON file itself;
- `tprof merge` of two ranks to .pftrace.gz: both ranks' processes and
  every slice of both;
- a killed program's Perfetto trace completed by `tprof recover` (every
  call the JSON recovery holds), and the flight recorder's dump.
"""
import json
import os
import re
import signal
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "integration"))
sys.path.insert(0, HERE)
import flightlib  # noqa: E402
import kineto_fixture  # noqa: E402
import tplib_tp  # noqa: E402
from test_pftrace import (FIXTURES, RUN_DEPENDENT,  # noqa: E402
                          hexint, json_events, one, proc_name)
from tplib import (CLI, PRELOAD, base_env, check, cleanup,  # noqa: E402
                   done, eq, load, prog, run, skip, xevents)


def tp_records(sl, cnt):
    """The imported slices and counter values as test_pftrace's JSON
    records (kind, track, name, category), less the flow instants
    ("ac2g": what JSON's flow events are) and the metadata instant."""
    out = []
    for s in sl:
        if s["cat"] == "ac2g" or s["name"] == "tprof metadata":
            continue
        if s["tid"] is not None:
            track = ("thread", s["thname"])
        elif s["apid"] is not None:
            out.append(("async", (proc_name(s["aprname"]), s["name"]),
                        s["name"], s["cat"]))
            continue
        else:
            track = (proc_name(s["pname"]), s["tname"])
        out.append(("slice", track, s["name"], s["cat"]))
    for name, parent, ts, v in cnt:
        out.append(("counter", (proc_name(parent), name), float(v)))
    return sorted(out, key=json.dumps)


def json_records(recs):
    out = []
    for r in recs:
        if r[0] in ("slice", "instant", "async"):
            out.append(("slice" if r[0] != "async" else "async",) +
                       tuple(r[1:4]))
        elif r[0] == "counter":
            out.append(("counter", r[1], float(r[2])))
    return sorted(out, key=json.dumps)


def no_errors(label, sh, path):
    errs = tplib_tp.errors(sh, path)
    return check(label + ": imported with no error or data loss",
                 errs == [], errs[:10])


def library(sh, label, argv, env):
    """A fixture's Perfetto trace against the JSON of another run."""
    j = run(argv, env=env)
    p = run(argv, env=dict(env, TPROF_FORMAT="perfetto"))
    jpath, ppath = one(j, "*.trace.json.gz"), one(p, "*.pftrace.gz")
    if not check(label + ": both traces written", jpath and ppath,
                 (j.files(), p.files())):
        return cleanup(j, p)
    no_errors(label, sh, ppath)
    want, pnames, threads, _ = json_events(load(jpath))
    sl = tplib_tp.slices(sh, ppath)
    got = tp_records(sl, tplib_tp.counters(sh, ppath))
    exp = json_records(want)
    check(label + ": every slice, instant, async range and counter on its "
          "track", got == exp and len(exp) > 0,
          "%d vs %d; only imported: %s; only in JSON: %s" % (
              len(got), len(exp),
              [r for r in got if r not in exp][:4],
              [r for r in exp if r not in got][:4]))
    fl = tplib_tp.flows(sh, ppath)
    byid = {s["id"]: s for s in sl}
    eq(label + ": flows", len(fl), sum(1 for r in want if r[0] == "flow_end"))
    check(label + ": every flow from a thread to a GPU stream",
          all(byid[a]["tid"] is not None and byid[b]["tid"] is None and
              (byid[b]["pname"] or "").startswith("GPU ")
              for a, b in fl), fl[:3])
    procs, tops, thr = tplib_tp.names(sh, ppath)
    eq(label + ": process and device names",
       sorted(proc_name(n) for n in procs + tops), sorted(pnames))
    eq(label + ": thread names", sorted(thr), sorted(threads))
    cleanup(j, p)


# --- the library's two formats, both through trace_processor -----------

def canon(k):
    """An arg's key as both importers can give it: JSON's keeps the
    name's ".", "[" and "]", Perfetto's annotations make them "_"."""
    return sanitized(k)


def imported(sh, path):
    """What an import holds that both formats must say alike: the slices
    (less tprof's metadata instant, which only Perfetto has: JSON keeps
    its trailer as top-level members; and less the flow instants, "ac2g",
    which Perfetto writes where a flow's end has no slice to ride on and
    JSON writes as flow events, never slices: their flows are counted),
    each as (name, {key: value}) with the args' keys made canonical, the
    flow and counter counts."""
    a = tplib_tp.args(sh, path)
    sl = [(s["name"], {canon(k): value(v) for k, v in
                       a.get(s["args"], {}).items()})
          for s in tplib_tp.slices(sh, path)
          if s["name"] != "tprof metadata" and s["cat"] != "ac2g"]
    return sl, len(tplib_tp.flows(sh, path)), \
        len(tplib_tp.counters(sh, path))


def by_name(sl, drop=()):
    """name -> the sorted args of its slices, keys in drop left out."""
    out = {}
    for name, args in sl:
        out.setdefault(name, []).append(json.dumps(
            {k: v for k, v in args.items() if k not in drop},
            sort_keys=True))
    return {k: sorted(v) for k, v in out.items()}


def both_formats(sh, label, argv, env):
    """The library's JSON and Perfetto traces of one program, both
    imported by trace_processor: as many slices, flows, counter values
    and args, the same distinct names, and every slice's arg values by
    name. Times differ between runs, so the JSON is written twice: an
    arg whose values differ between those two (addresses, a bandwidth)
    is left out of the values, never out of the counts."""
    j1 = run(argv, env=env)
    j2 = run(argv, env=env)
    p = run(argv, env=dict(env, TPROF_FORMAT="perfetto"))
    paths = (one(j1, "*.trace.json.gz"), one(j2, "*.trace.json.gz"),
             one(p, "*.pftrace.gz"))
    if not check(label + ": JSON twice and Perfetto written", all(paths),
                 [r.files() for r in (j1, j2, p)]):
        return cleanup(j1, j2, p)
    (js, jf, jc), (js2, _, _), (ps, pf, pc) = (imported(sh, x)
                                               for x in paths)
    eq(label + ": as many slices in both imports", len(ps), len(js))
    eq(label + ": as many flows", pf, jf)
    eq(label + ": as many counter values", pc, jc)
    eq(label + ": as many args", sum(len(a) for _, a in ps),
       sum(len(a) for _, a in js))
    eq(label + ": the same distinct names", sorted(set(n for n, _ in ps)),
       sorted(set(n for n, _ in js)))
    b1, b2 = by_name(js), by_name(js2)
    varying = set(RUN_DEPENDENT)
    for name in b1:
        for x, y in zip(b1[name], b2.get(name, [])):
            dx, dy = json.loads(x), json.loads(y)
            varying |= {k for k in dx if dx.get(k) != dy.get(k)}
    want, got = by_name(js, varying), by_name(ps, varying)
    diff = [n for n in want if want[n] != got.get(n)]
    check(label + ": every slice's arg values, by name (%d keys vary "
          "between runs)" % len(varying - set(RUN_DEPENDENT)),
          not diff and len(want) > 0,
          diff[:3] and (diff[0], want[diff[0]][:2],
                        got.get(diff[0], [])[:2]))
    cleanup(j1, j2, p)


# --- same trace, two forms: exact --------------------------------------

def sanitized(k):
    """An annotation's name as trace_processor keeps it: ".", "[" and "]"
    are its path's separators and become "_" (debug_annotation_parser)."""
    return k.replace(".", "_").replace("[", "_").replace("]", "_")


def flat(args):
    """JSON args flattened as trace_processor flattens annotations: a
    dict's members as "a.b", an array's elements as "a[0]". A null leaves
    no arg (trace_processor keeps none for it)."""
    out = {}

    def walk(key, v):
        if isinstance(v, dict):
            for k, x in v.items():
                walk(key + "." + sanitized(k) if key else sanitized(k), x)
        elif isinstance(v, list):
            for i, x in enumerate(v):
                walk("%s[%d]" % (key, i), x)
        elif v is not None:
            out[key] = v
    walk("", args)
    return out


NUMBER = re.compile(r"-?[0-9]+(\.[0-9]*)?([eE][-+]?[0-9]+)?")


def value(v):
    """A value as both sides can hold it: integers past 64 bits are legacy
    JSON in Perfetto, which trace_processor parses as a double and keeps
    as text (compared to 15 digits); null is that text too."""
    v = hexint(v)
    if v is None:
        return "null"
    if isinstance(v, bool):
        return int(v)
    if isinstance(v, (int, float)) and not -2**63 <= v < 2**64:
        return "%.15g" % v
    if isinstance(v, str) and len(v) > 20 and NUMBER.fullmatch(v):
        return "%.15g" % float(v)
    if isinstance(v, float) and v.is_integer():
        return int(v)
    if isinstance(v, float):
        return round(v, 9)
    return v


def convertible(e):
    """tprof convert skips (and counts) events without an integer pid:
    Kineto's "Record Window End", whose pid and tid are ""."""
    return isinstance(e.get("pid"), int)


def json_slices(t):
    """The JSON's X and i events as the importer should show them: ns,
    the track as a name pair, flattened args, depth. Per thread or
    stream, in start order (longest first, instants after the slices of
    their time), each slice nests in the slice open on its lane; one
    that would outlast it goes to the first lane where it nests, a track
    named "<track> (k)" under the same process or device (a lane holds
    255 open slices, as deep as this importer nests), and an instant to
    the lane whose innermost open slice started last."""
    evs = t["traceEvents"]
    pname = {e["pid"]: e["args"]["name"] for e in evs
             if e.get("ph") == "M" and e["name"] == "process_name"}
    tname = {(e["pid"], e["tid"]): e["args"]["name"] for e in evs
             if e.get("ph") == "M" and e["name"] == "thread_name"}
    tracks = {}
    for i, e in enumerate(evs):
        if e.get("ph") in ("X", "i") and convertible(e):
            ts, dur = round(e["ts"] * 1000), round(e.get("dur", 0) * 1000)
            tracks.setdefault((e["pid"], e["tid"]), []).append(
                (ts, -dur, e["ph"] == "i", i))
    out = []
    for (pid, tid), lst in tracks.items():
        gpu = 0 <= pid < 256
        proc = pname.get(pid, "GPU %d" % pid if gpu else None)
        thr = tname.get((pid, tid), "stream %d" % tid if gpu else None)
        lanes = [[]]			# per lane: stack of (start, end)
        for ts, negdur, inst, i in sorted(lst):
            end = ts - negdur
            for st in lanes:
                while st and st[-1][1] <= ts:
                    st.pop()
            if inst:
                k = max(range(len(lanes)), key=lambda k: (
                    lanes[k][-1][0] if lanes[k] else -2**63, -k))
            else:
                k = next((k for k, st in enumerate(lanes)
                          if not st or (st[-1][1] >= end and
                                        len(st) < 255)), len(lanes))
                if k == len(lanes):
                    lanes.append([])
            depth = len(lanes[k])
            if not inst:
                lanes[k].append((ts, end))
            e = evs[i]
            out.append({"ts": ts, "dur": -negdur, "name": e["name"],
                        "cat": e.get("cat"), "depth": depth,
                        "track": (str(proc), str(thr) if not k else
                                  "%s (%d)" % (thr, k + 1)),
                        "args": {x: value(v) for x, v in
                                 flat(e.get("args", {})).items()}})
    return out


def tp_slices(sh, path, base):
    """The imported slices in the same form, times less base; flow
    instants (JSON's flow events: an instant at a flow's end, or any
    "ac2g" one) left out. Returns them and id -> slice."""
    sl = tplib_tp.slices(sh, path)
    ar = tplib_tp.args(sh, path)
    ends = {x for pair in tplib_tp.flows(sh, path) for x in pair}
    out, byid = [], {}
    for s in sl:
        byid[s["id"]] = s
        s["flow"] = s["dur"] == 0 and (s["cat"] == "ac2g" or
                                       s["id"] in ends)
        if s["flow"] or s["name"] == "tprof metadata":
            continue
        if s["tid"] is not None:	# a thread's lane: its own name
            track = (str(s["prname"]), str(s["tname"] or s["thname"]))
        elif s["apid"] is not None:
            continue
        else:
            track = (str(s["pname"]), str(s["tname"]))
        out.append({"ts": s["ts"] - base, "dur": s["dur"], "name": s["name"],
                    "cat": s["cat"], "depth": s["depth"], "track": track,
                    "args": {k: value(v) for k, v in
                             ar.get(s["args"], {}).items()}})
    return out, byid


def key(s):
    return json.dumps([s["ts"], s["track"], -s["dur"], s["name"], s["cat"],
                       s["args"]], sort_keys=True, default=str)


def flow_pairs(sh, path, byid, base):
    """Each flow as (from, to) slices: a flow instant stands for the
    slice it sits in (what JSON's flow events bind to)."""
    def up(i):
        s = byid[i]
        if s["flow"] and s["parent"] is not None:
            s = byid[s["parent"]]
        return (s["ts"] - base, s["name"])
    return sorted((up(a), up(b)) for a, b in tplib_tp.flows(sh, path))


def json_flow_pairs(t):
    """Each JSON flow end linked to its start, both bound to the slice
    enclosing them on their thread (Perfetto's JSON importer: "s" to the
    enclosing slice, "f" with bp "e" to the enclosing one)."""
    xs = {}
    for e in t["traceEvents"]:
        if e.get("ph") == "X":
            xs.setdefault((e["pid"], e["tid"]), []).append(
                (round(e["ts"] * 1000), round(e["dur"] * 1000), e["name"]))

    def enclosing(e):
        """The innermost slice open at the event: started last, then
        the shortest."""
        ts = round(e["ts"] * 1000)
        best = None
        for s, d, n in xs.get((e["pid"], e["tid"]), []):
            if s <= ts < s + d and (best is None or (s, -d) > (best[0],
                                                               -best[1])):
                best = (s, d, n)
        return best and (best[0], best[2])

    def key(e):		# JSON's flows: id, category and name
        return (e["id"], e.get("cat"), e.get("name"))
    starts = {key(e): e for e in t["traceEvents"] if e.get("ph") == "s"}
    out = []
    for e in t["traceEvents"]:
        if e.get("ph") == "f" and key(e) in starts:
            a, b = enclosing(starts[key(e)]), enclosing(e)
            if a and b:
                out.append((a, b))
    return sorted(out)


def base_of(t):
    return int(t.get("baseTimeNanoseconds") or 0)


def same_run(sh, label, jpath, json_tp):
    """jpath converted to Perfetto and imported: exactly the JSON."""
    d = tempfile.mkdtemp(prefix="tprof-tp-")
    out = os.path.join(d, "out.pftrace.gz")
    p = subprocess.run([CLI, "convert", jpath, "-o", out],
                       capture_output=True, text=True)
    if not eq(label + ": converted", p.returncode, 0):
        return
    no_errors(label + " (converted)", sh, out)
    t = load(jpath)
    base = base_of(t)
    got, byid = tp_slices(sh, out, base)
    want = json_slices(t)
    got = sorted(got, key=key)
    want = sorted(want, key=key)
    flat_want = [dict(x, depth=0) for x in want]
    flat_got = [dict(x, depth=0) for x in got]
    check(label + ": every slice exact (ns, name, category, track, args)",
          flat_got == flat_want and len(want) > 0,
          "%d vs %d; first difference: %s" % (
              len(got), len(want),
              next(((a, b) for a, b in zip(flat_got, flat_want) if a != b),
                   None)))
    check(label + ": every slice at its depth (equal starts: longest "
          "outside, instants inside, overlaps on lanes)", got == want,
          next(((a, b) for a, b in zip(got, want) if a != b), None))
    fp, wp = flow_pairs(sh, out, byid, base), json_flow_pairs(t)
    check(label + ": flows between the same slices", fp == wp,
          "%d vs %d: %s" % (len(fp), len(wp),
                            [x for x in fp if x not in wp][:2] +
                            [x for x in wp if x not in fp][:2]))
    cnt = [(n, p, ts - base, float(v)) for n, p, ts, v in
           tplib_tp.counters(sh, out)]
    wc = []
    for e in t["traceEvents"]:
        if e.get("ph") == "C":
            for k, v in e["args"].items():
                wc.append((round(e["ts"] * 1000), e["name"] + " " + k,
                           float(v)))
    eq(label + ": counters", sorted((ts, n, v) for n, _, ts, v in cnt),
       sorted(wc))
    if json_tp:
        # Its nesting is not compared: this importer (v43) nests equal
        # starts in file order, where later ones sort longest first.
        jfl = tplib_tp.flows(sh, jpath)
        eq(label + ": as many flows as its JSON import", len(fp), len(jfl))


def overlaps():
    """Slices that overlap without nesting on a thread and on a stream,
    a flow's end at the second kernel's start, an instant in the lane."""
    ev = [{"ph": "X", "cat": "cpu_op", "name": n, "pid": 4242,
           "tid": 4243, "ts": t, "dur": u}
          for n, t, u in [("a", 10.0, 10.0), ("b", 19.5, 10.0),
                          ("c", 21.0, 1.0), ("d", 19.6, 0.2)]]
    ev += [{"ph": "X", "cat": "kernel", "name": n, "pid": 0, "tid": 7,
            "ts": t, "dur": u}
           for n, t, u in [("k1", 10.0, 10.0), ("k2", 19.999, 10.0),
                           ("k3", 29.998, 5.0)]]
    ev += [{"ph": "i", "s": "t", "cat": "m", "name": "mark", "pid": 4242,
            "tid": 4243, "ts": 19.7},
           {"ph": "s", "cat": "ac2g", "name": "ac2g", "id": 9,
            "pid": 4242, "tid": 4243, "ts": 19.5},
           {"ph": "f", "bp": "e", "cat": "ac2g", "name": "ac2g", "id": 9,
            "pid": 0, "tid": 7, "ts": 19.999},
           # Kineto's fwdbwd flows share small ids with ac2g's.
           {"ph": "X", "cat": "cpu_op", "name": "fwd", "pid": 4242,
            "tid": 4244, "ts": 5.0, "dur": 1.0},
           {"ph": "X", "cat": "cpu_op", "name": "bwd", "pid": 4242,
            "tid": 4245, "ts": 40.0, "dur": 1.0},
           {"ph": "s", "cat": "fwdbwd", "name": "fwdbwd", "id": 9,
            "pid": 4242, "tid": 4244, "ts": 5.0},
           {"ph": "f", "bp": "e", "cat": "fwdbwd", "name": "fwdbwd",
            "id": 9, "pid": 4242, "tid": 4245, "ts": 40.0},
           {"ph": "M", "name": "thread_name", "pid": 4242, "tid": 4243,
            "args": {"name": "python"}},
           {"ph": "M", "name": "process_name", "pid": 4242, "tid": 0,
            "args": {"name": "rank 0: python"}}]
    return {"baseTimeNanoseconds": 1000, "traceEvents": ev}


def plain(sl):
    """Slices less flow instants and metadata: a merge reads the ranks'
    flows as JSON's and writes them as instants."""
    return sum(1 for s in sl if s["cat"] != "ac2g" and
               s["name"] != "tprof metadata")


def recovered(sh):
    """A program killed with most of its calls still in its rings, its
    trace completed by `tprof recover`, in both formats: the Perfetto
    one imports cleanly and holds every call the JSON one holds."""
    n = {}
    for fmt in ("json", "perfetto"):
        d = tempfile.mkdtemp(prefix="tprof-tp-kill-")
        e = base_env()
        e.update({"TPROF_OUTPUT_DIR": d, "LD_PRELOAD": PRELOAD,
                  "TPROF_FORMAT": fmt})
        p = subprocess.run([prog("killself"), "400", "3000"], env=e,
                           capture_output=True, timeout=120)
        r = subprocess.run([CLI, "recover", d], capture_output=True,
                           timeout=300)
        eq("recover %s: killed, then recovered" % fmt,
           (p.returncode, r.returncode), (-signal.SIGKILL, 0))
        if fmt == "json":
            n[fmt] = len(xevents(load(os.path.join(
                d, "tprof-rank0.trace.json.gz"))))
            continue
        path = os.path.join(d, "tprof-rank0.pftrace.gz")
        no_errors("recover perfetto", sh, path)
        # Less the "tprof rings" instants: a ring's drops, which JSON
        # puts in the ring thread's thread_name args (docs/design/encoders.md).
        n[fmt] = plain([x for x in tplib_tp.slices(sh, path)
                        if x["name"] != "tprof rings"])
    eq("recover: every call of the JSON recovery imported", n["perfetto"],
       n["json"])


def flight(sh):
    """The flight recorder's dump at SIGTERM: imports cleanly, every
    slice closed."""
    d = tempfile.mkdtemp(prefix="tprof-tp-flight-")
    p = flightlib.paced(d, os.path.join(d, "last"), 100000,
                        {"TPROF_FORMAT": "perfetto"})
    time.sleep(3.0)
    p.send_signal(signal.SIGTERM)
    p.communicate(timeout=30)
    path = os.path.join(d, "tprof-rank0.pftrace.gz")
    if not check("flight: dumped", os.path.exists(path), os.listdir(d)):
        return
    no_errors("flight", sh, path)
    sl = tplib_tp.slices(sh, path)
    check("flight: the window's calls, every slice closed",
          sum(1 for x in sl if x["name"] == "cudaMemset") > 100 and
          all(x["dur"] >= 0 for x in sl), len(sl))


def merged(sh):
    """Two ranks' library traces merged into one .pftrace.gz."""
    d = tempfile.mkdtemp(prefix="tprof-tp-merge-")
    n = 0
    for rank in (0, 1):
        r = run([prog("cupti_feed"), "full"], env={
            "TPROF_FORMAT": "perfetto", "TPROF_OUTPUT_DIR": d,
            "RANK": str(rank), "WORLD_SIZE": "2"})
        eq("merge: rank %d traced" % rank, r.rc, 0)
    for f in os.listdir(d):
        if f.endswith(".pftrace.gz"):
            n += plain(tplib_tp.slices(sh, os.path.join(d, f)))
    out = os.path.join(d, "all.pftrace.gz")
    p = subprocess.run([CLI, "merge", d, "-o", out], capture_output=True,
                       text=True)
    if not eq("merge: merged", p.returncode, 0):
        return
    no_errors("merge", sh, out)
    procs, tops, _ = tplib_tp.names(sh, out)
    check("merge: both ranks' processes, and each rank's GPU",
          sorted(re.sub(r"pid \d+", "pid N", x) for x in procs) == [
              "rank 0: GPU 0 (Fake H100)",
              "rank 0: cupti_feed (rank 0, pid N)",
              "rank 1: GPU 0 (Fake H100)",
              "rank 1: cupti_feed (rank 1, pid N)"], procs)
    eq("merge: every slice of both", plain(tplib_tp.slices(sh, out)), n)


def main():
    path = tplib_tp.find_shell()
    if not path:
        print("SKIP trace_processor: no trace_processor_shell (set "
              "TRACE_PROCESSOR, or build one: scripts/build-trace-processor.sh)")
        sys.exit(0)
    sh = tplib_tp.Shell(path)
    print("trace_processor: %s (%s)" % (path, sh.version()))
    for label, argv, env in FIXTURES:
        library(sh, label, argv, env)

    d = tempfile.mkdtemp(prefix="tprof-tp-json-")
    jfx = os.path.join(d, "fixture.json")
    import test_convert
    with open(jfx, "w") as f:
        json.dump(test_convert.fixture(), f)
    json_tp = len(tplib_tp.slices(sh, jfx)) > 0
    if not json_tp:
        skip("trace_processor's JSON import", "this trace_processor was "
             "built without it: the JSON side is read by Python alone")
    if json_tp:
        for label, argv, env in FIXTURES:
            both_formats(sh, label + " both formats", argv, env)
    same_run(sh, "convert fixture", jfx, json_tp)
    ov = os.path.join(d, "overlap.json")
    with open(ov, "w") as f:
        json.dump(overlaps(), f)
    same_run(sh, "overlaps", ov, json_tp)
    dp = os.path.join(d, "deep.json")
    with open(dp, "w") as f:
        json.dump({"baseTimeNanoseconds": 1000,
                   "traceEvents": test_convert.deep_events(300)}, f)
    same_run(sh, "300 nested", dp, json_tp)
    for i, kw in enumerate([{}, {"nccl": True, "gpu_overlap": True}]):
        t, _ = kineto_fixture.make(rank=i, **kw)
        src = kineto_fixture.write(os.path.join(d, "k%d.json.gz" % i), t)
        same_run(sh, "kineto %d" % i, src, json_tp)
    for label, argv, env in FIXTURES:
        j = run(argv, env=env)
        jpath = one(j, "*.trace.json.gz")
        if check(label + " JSON: written", jpath, j.files()):
            same_run(sh, label + " converted", jpath, json_tp)
        cleanup(j)
    merged(sh)
    recovered(sh)
    flight(sh)
    done()


if __name__ == "__main__":
    main()
