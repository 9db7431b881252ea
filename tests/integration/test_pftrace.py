#!/usr/bin/env python3
"""TPROF_FORMAT=perfetto: the library writes <name>-rank<R>.pftrace.gz.

Each fixture that runs cheaply here (the CUDA runtime calls, the CUPTI
stand-in, NVTX, the NCCL stand-in, steps) runs twice with JSON and once
with Perfetto. The .pftrace.gz is decoded with the official schema and
compared event for event with the JSON trace: the same slices (track,
name, category, args), instants, async ranges, flows (by id, on the same
tracks) and counters (value), the same process and thread names, and
every track's slices strictly nested with ends after their begins.
Times and the few args that differ between the two JSON runs (pointers,
thread ids, bandwidths measured from a duration) cannot be compared
across runs and are left out; the encoders' times are compared exactly
by test_convert.py. Without the perfetto and protobuf modules the
protobuf half is a SKIP (pip install perfetto protobuf)."""
import glob
import json
import os
import re
import shutil
import subprocess
import tempfile
import time

from pftrace import decode, importer_flows, importer_nesting, schema
from tplib import (BUILD, NO_SHELL, RUN, SANITIZE, base_env, check, cleanup,
                   done, eq, load, prog, run, skip)

FAKE_CUPTI = os.path.join(BUILD, "tests", "fakecupti")
FAKE_NCCL = os.path.join(BUILD, "tests", "fakenccl")

FIXTURES = [
    ("calls", [prog("calls"), "2", "3"], {}),
    ("cupti", [prog("cupti_feed"), "full"], {}),
    ("nvtx", [prog("nvtx_calls")], {}),
    ("nccl", [prog("nccl_calls"), "fake"], {"LD_LIBRARY_PATH": FAKE_NCCL}),
    ("steps", [prog("steps"), "api", "4"], {}),
]

PID = re.compile(r"pid \d+")
# Args that depend on the run, not the encoder: addresses (ASLR, malloc),
# a bandwidth computed from the measured duration, thread ids. Others
# are found by running the JSON twice.
RUN_DEPENDENT = {"ptr", "dst", "src", "comm", "comms", "new comm",
                 "memory bandwidth (GB/s)", "thread"}


def proc_name(s):
    return PID.sub("pid N", s or "")


def hexint(v):
    """JSON writes pointers as "0x..." strings, Perfetto as integers."""
    if isinstance(v, str) and re.fullmatch(r"0x[0-9a-f]+", v):
        return int(v, 16)
    if isinstance(v, list):
        return [hexint(x) for x in v]
    if isinstance(v, dict):
        return {k: hexint(x) for k, x in v.items()}
    return v


def json_events(t):
    """The JSON trace as comparable records: (kind, track, name, cat,
    args) with ts for ordering; tracks named as the viewer names them."""
    evs = t["traceEvents"]
    pname = {e["pid"]: e["args"]["name"] for e in evs
             if e.get("ph") == "M" and e["name"] == "process_name"}
    tname = {(e["pid"], e["tid"]): e["args"]["name"] for e in evs
             if e.get("ph") == "M" and e["name"] == "thread_name"}
    me = t["tprof"]["pid"]

    def track(e):
        if e["pid"] == me:
            return ("thread", tname.get((e["pid"], e["tid"])))
        return (proc_name(pname.get(e["pid"])),
                tname.get((e["pid"], e["tid"])))

    out = []
    for e in evs:
        ph = e.get("ph")
        args = hexint(e.get("args", {}))
        if ph in ("X", "i"):
            out.append(("slice" if ph == "X" else "instant", track(e),
                        e["name"], e["cat"], args))
        elif ph == "b":
            out.append(("async", (proc_name(pname.get(e["pid"])),
                                  e["name"]), e["name"], e["cat"], args))
        elif ph in ("s", "f"):
            out.append(("flow" if ph == "s" else "flow_end", track(e),
                        e["id"]))
        elif ph == "C":
            for k, v in e["args"].items():
                out.append(("counter", (proc_name(pname.get(e["pid"])),
                                        e["name"] + " " + k), v))
    names = sorted(proc_name(v) for v in pname.values())
    threads = sorted(v for (p, _), v in tname.items() if p == me)
    return out, names, threads, sum(1 for e in evs if e.get("ph") == "e")


def pf_events(res):
    """The decoded Perfetto trace as the same records, and whether every
    track's slices nest."""
    tracks, evs, flags, clocks = res

    def track(uuid):
        d = tracks[uuid]
        if d.HasField("thread"):
            return ("thread", d.thread.thread_name)
        par = tracks.get(d.parent_uuid)
        pn = None
        if par is not None:
            pn = par.process.process_name if par.HasField("process") \
                else par.name
        return (proc_name(pn), d.name)

    def is_async(uuid):
        """An async track hangs under a process, not a device."""
        d = tracks[uuid]
        par = tracks.get(d.parent_uuid)
        return not d.HasField("thread") and par is not None and \
            par.HasField("process")

    out, ends = [], 0
    starts, terms = [], set()
    for e in evs:
        key = track(e["track"])
        # Flows: on a launch's slice and its GPU op's (the k-th op after
        # the first: id corr | k << 32, begun by an instant on the
        # launch). A start that no event ends (a call without GPU work)
        # is not a JSON flow; JSON has one "s" per correlation id.
        starts += [(key, f) for f in e["flow"]]
        terms |= set(e["term"])
        out.extend(("flow_end", key, f & 0xffffffff) for f in e["term"])
        if e["type"] == 1:			# SLICE_BEGIN
            if is_async(e["track"]):
                out.append(("async", (key[0], e["name"]), e["name"],
                            e["cat"], hexint(e["args"])))
            else:
                out.append(("slice", key, e["name"], e["cat"],
                            hexint(e["args"])))
        elif e["type"] == 2:			# SLICE_END
            ends += 1
        elif e["type"] == 3:			# INSTANT
            if e["flow"] or e["term"]:
                pass
            elif e["name"] != "tprof metadata":
                out.append(("instant", key, e["name"], e["cat"],
                            hexint(e["args"])))
        elif e["type"] == 4:			# COUNTER
            out.append(("counter", key, e["cv"]))
    out.extend(sorted({("flow", key, f & 0xffffffff) for key, f in starts
                       if f in terms}))
    names = sorted(proc_name(d.process.process_name) for d in tracks.values()
                   if d.HasField("process"))
    names += sorted(proc_name(d.name) for d in tracks.values()
                    if d.name.startswith("GPU ") and not d.parent_uuid)
    threads = sorted(d.thread.thread_name for d in tracks.values()
                     if d.HasField("thread"))
    nested, left = importer_nesting(evs)
    return out, names, threads, nested, left, ends


def volatile(a, b):
    """Arg keys whose values differ between two runs of one program."""
    keys = set()
    for x, y in zip(a, b):
        if len(x) == 5 and len(y) == 5 and x[4] != y[4]:
            keys |= {k for k in set(x[4]) | set(y[4])
                     if x[4].get(k) != y[4].get(k)}
    return keys


def strip(recs, keys):
    return sorted(json.dumps(r[:4] + ({k: v for k, v in r[4].items()
                                        if k not in keys},)
                             if len(r) == 5 else r, sort_keys=True)
                  for r in recs)


def one(r, pattern):
    paths = glob.glob(os.path.join(r.dir, pattern))
    return paths[0] if len(paths) == 1 else None


def compare(label, argv, env, pb):
    j1 = run(argv, env=env)
    j2 = run(argv, env=env)
    p = run(argv, env=dict(env, TPROF_FORMAT="perfetto"))
    eq(label + ": exit codes", (j1.rc, j2.rc, p.rc), (0, 0, 0))
    jpath, ppath = one(j1, "*.trace.json.gz"), one(p, "*.pftrace.gz")
    check(label + ": one .pftrace.gz, no JSON trace",
          ppath and not one(p, "*.trace.json.gz"), p.files())
    check(label + ": its summary beside it",
          one(p, "summaries/*.summary.json") is not None, p.all_files())
    if not (jpath and ppath and one(j2, "*.trace.json.gz")):
        return cleanup(j1, j2, p)
    a, names, threads, n_end = json_events(load(jpath))
    b = json_events(load(one(j2, "*.trace.json.gz")))[0]
    if pb is None:
        return cleanup(j1, j2, p)
    res, why = decode(pb, ppath)
    if not check(label + ": decodes with the official schema",
                 res is not None, why):
        return cleanup(j1, j2, p)
    got, pnames, pthreads, nested, left, ends = pf_events(res)
    keys = RUN_DEPENDENT | volatile(sorted(a, key=json.dumps),
                                    sorted(b, key=json.dumps))
    sg, sa = strip(got, keys), strip(a, keys)
    check(label + ": the same events", len(a) > 0 and sg == sa,
          "%d events (args not compared: %s); only in Perfetto: %s; only "
          "in JSON: %s" % (len(a), ", ".join(sorted(keys)) or "-",
                           sorted(set(sg) - set(sa))[:5],
                           sorted(set(sa) - set(sg))[:5]))
    check(label + ": slices nest on every track, each with its own end",
          nested)
    # Each JSON "f" is a link from its "s" in the importer (v1 flows do
    # not close at "f": a launch's "s" links every op of the launch); a
    # Perfetto flow links two events once.
    links = importer_flows(res[1])
    eq(label + ": flows linked as the importer links them", len(links),
       sum(1 for r in a if r[0] == "flow_end"))
    check(label + ": every link from a thread's slice or instant to a GPU "
          "op", all(res[0][x[0]].HasField("thread") and
                    not res[0][y[0]].HasField("thread") for x, y in links),
          links[:3])
    eq(label + ": async ranges left open",
       left, sum(1 for r in a if r[0] == "async") - n_end)
    eq(label + ": async ends", ends - sum(1 for r in got
                                          if r[0] == "slice"), n_end)
    eq(label + ": process names", sorted(pnames), sorted(names))
    eq(label + ": thread names", pthreads, threads)
    tr, evs, flags, clocks = res
    meta = [e["args"].get("trailer") for e in evs
            if e["name"] == "tprof metadata"]
    check(label + ": the run's metadata event",
          len(meta) == 1 and meta[0]["tprof"]["events_written"] > 0 and
          "distributedInfo" in meta[0], str(meta)[:200])
    eq(label + ": sequence flags", (flags[1], set(flags[2:]) <= {0, 2}),
       (1, True))
    # Runs of events on one thread use the sequence's default track (the
    # events above were compared on the tracks it resolves to).
    check(label + ": events on the default track",
          any(e["deftrack"] for e in evs))
    cleanup(j1, j2, p)


def self_contained(label, path, pb):
    """A file read alone: it decodes, every event's track is declared in
    it, and its metadata event is there. Returns the slice names."""
    res, why = decode(pb, path)
    if not check(label + ": decodes", res is not None, why):
        return []
    tracks, evs, flags, clocks = res
    check(label + ": every event's track declared in the file",
          all(e["track"] in tracks for e in evs),
          [e for e in evs if e["track"] not in tracks][:3])
    check(label + ": its metadata event",
          sum(1 for e in evs if e["name"] == "tprof metadata") == 1)
    return sorted(e["name"] for e in evs if e["type"] == 1)


def lifecycle(pb):
    """fork and exec: each process or image writes its own file with
    its own encoder (its own tracks and strings)."""
    env = {"TPROF_FORMAT": "perfetto"}
    r = run([prog("lifecycle"), "fork"], env=env, timeout=60)
    m = re.search(r"child (\d+)", r.stdout)
    child = m.group(1) if m else "?"
    want = sorted(["tprof-rank0.pftrace.gz",
                   "tprof-rank0-pid%s.pftrace.gz" % child])
    if "thread" in SANITIZE:
        # As in test_lifecycle.py: the files are checked, not the status.
        skip("fork: exit status 0", "TSan fails a forked child that starts "
             "threads after a multi-threaded fork (exit 66, 'dup thread "
             "with used id'), which it does not support")
        eq("fork: parent's and child's .pftrace.gz", r.files(), want)
    else:
        eq("fork: parent's and child's .pftrace.gz", (r.rc, r.files()),
           (0, want))
    if pb is not None and len(r.files()) == 2:
        names = self_contained("fork child", os.path.join(
            r.dir, "tprof-rank0-pid%s.pftrace.gz" % child), pb)
        eq("fork child: exactly its calls", names, ["cudaFree"] * 3)
        names = self_contained("fork parent", os.path.join(
            r.dir, "tprof-rank0.pftrace.gz"), pb)
        eq("fork parent: its mallocs, no child call",
           (names.count("cudaMalloc"), names.count("cudaFree")), (5, 0))
    cleanup(r)
    r = run([prog("lifecycle"), "exec"], env=env)
    files = r.files()
    eq("exec: two .pftrace.gz", (r.rc, len(files),
                                 all(f.endswith(".pftrace.gz")
                                     for f in files)), (0, 2, True))
    if pb is not None and len(files) == 2:
        other = [f for f in files if "-pid" in f][0]
        n1 = self_contained("exec image 1", os.path.join(
            r.dir, "tprof-rank0.pftrace.gz"), pb)
        n2 = self_contained("exec image 2", os.path.join(r.dir, other), pb)
        eq("exec: each image's calls", (n1.count("cudaMalloc"),
                                        n2.count("cudaFree")), (2, 4))
    cleanup(r)


def boottime(pb):
    """The clock snapshot holds BOOTTIME (6) beside REALTIME (1), as far
    apart as the machine's clocks are (measured here around the run,
    within 1 s): Perfetto v58 logs an import error when a proto trace
    does not relate BOOTTIME to its trace clock, and a system trace
    (traced, BOOTTIME) opened beside this one lines up with it."""
    before = time.clock_gettime_ns(time.CLOCK_BOOTTIME) - time.time_ns()
    r = run([prog("cupti_feed"), "full"], env={"TPROF_FORMAT": "perfetto"})
    after = time.clock_gettime_ns(time.CLOCK_BOOTTIME) - time.time_ns()
    path = one(r, "*.pftrace.gz")
    res, why = decode(pb, path) if path else (None, r.stderr)
    if check("boottime: decodes", res is not None, why):
        clocks = res[3]
        check("boottime: BOOTTIME - REALTIME in the snapshot",
              6 in clocks and 1 in clocks and
              min(before, after) - 10**9 <= clocks[6] - clocks[1] <=
              max(before, after) + 10**9,
              (clocks, before, after))
        # The metadata instant at the first event, not at the base
        # (floored to 10^14 ns: maybe before boot, which v58 drops).
        meta = [e["ts"] for e in res[1] if e["name"] == "tprof metadata"]
        first = min(e["ts"] for e in res[1]
                    if e["name"] != "tprof metadata")
        eq("boottime: the metadata event at the first event's time",
           meta, [first])
        # Named tracks (devices, streams, async): not merged by name,
        # renamed by a later descriptor (v58 keeps a mergeable track's
        # first name: "GPU 0", not "GPU 0 (Fake H100)").
        named = [d for d in res[0].values() if not d.HasField("thread")
                 and not d.HasField("process")]
        check("boottime: every named track non-mergeable",
              named and all(d.sibling_merge_behavior == 2 for d in named),
              [str(d) for d in named if d.sibling_merge_behavior != 2][:2])
    cleanup(r)


def gzip_level(pb):
    """TPROF_GZIP_LEVEL=6 (zlib's level 6 instead of level 1): the same
    events as level 1, and the level and compressor in the run's
    metadata."""
    runs, recs = [], []
    for lv in ("1", "6"):
        r = run([prog("cupti_feed"), "full"],
                env={"TPROF_FORMAT": "perfetto", "TPROF_GZIP_LEVEL": lv})
        runs.append(r)
        path = one(r, "*.pftrace.gz")
        res, why = decode(pb, path) if path else (None, r.stderr)
        if not check("gzip level %s: decodes" % lv, res is not None, why):
            return cleanup(*runs)
        meta = [e["args"]["trailer"]["tprof"] for e in res[1]
                if e["name"] == "tprof metadata"]
        eq("gzip level %s: in the run's metadata" % lv,
           [m["config"]["gzip_level"] for m in meta], [int(lv)])
        recs.append(pf_events(res)[0])
    eq("gzip level 6: zlib compresses", meta[0]["compressor"], "zlib")
    keys = RUN_DEPENDENT | volatile(sorted(recs[0], key=json.dumps),
                                    sorted(recs[1], key=json.dumps))
    check("gzip level 6: the events of level 1",
          len(recs[0]) > 0 and strip(recs[0], keys) == strip(recs[1], keys),
          "%d/%d events" % (len(recs[0]), len(recs[1])))
    r = run([prog("calls")], env={"TPROF_GZIP_LEVEL": "0"})
    lines = r.lines("tprof: error")
    check("bad TPROF_GZIP_LEVEL: one clear error, no trace, exit code kept",
          r.rc == 0 and len(lines) == 1 and "TPROF_GZIP_LEVEL='0'" in
          lines[0] and "1 to 9" in lines[0] and not r.files(), r.stderr)
    cleanup(r, *runs)


def tprof_run(flags):
    e = base_env()
    d = tempfile.mkdtemp(prefix="tprof-it-")
    e["TPROF_OUTPUT_DIR"] = d
    p = subprocess.run([RUN] + flags + [prog("calls")], env=e,
                       capture_output=True, text=True)
    files = sorted(os.listdir(d))
    shutil.rmtree(d, ignore_errors=True)
    return p, files


def tprof_run_checks():
    for flags in (["--format", "perfetto"], ["--format=perfetto"]):
        p, files = tprof_run(flags)
        eq("tprof-run %s: a .pftrace.gz" % " ".join(flags),
           (p.returncode, files), (0, ["summaries", "tprof-rank0.pftrace.gz"]))
    p, files = tprof_run(["--format", "json"])
    eq("tprof-run --format json: the JSON trace", (p.returncode, files),
       (0, ["summaries", "tprof-rank0.trace.json.gz"]))
    for flags in (["--gzip-level", "6"], ["--gzip-level=6"]):
        p, files = tprof_run(flags)
        eq("tprof-run %s: the trace" % " ".join(flags),
           (p.returncode, files),
           (0, ["summaries", "tprof-rank0.trace.json.gz"]))
    p, files = tprof_run(["--gzip-level", "10"])
    check("tprof-run --gzip-level 10: refused with exit 2 and one message",
          p.returncode == 2 and len(p.stderr.splitlines()) == 1 and
          "TPROF_GZIP_LEVEL='10'" in p.stderr and files == [],
          (p.returncode, p.stderr, files))
    p, files = tprof_run(["--format", "xml"])
    check("tprof-run --format xml: refused with exit 2 and one message",
          p.returncode == 2 and len(p.stderr.splitlines()) == 1 and
          "TPROF_FORMAT='xml'" in p.stderr and files == [],
          (p.returncode, p.stderr, files))


def main():
    pb = schema()
    if pb is None:
        skip("pftrace_decode", "no perfetto/protobuf modules: pip install "
             "perfetto protobuf, or put them on PYTHONPATH")
    for label, argv, env in FIXTURES:
        compare(label, argv, env, pb)
    lifecycle(pb)
    if pb is not None:
        gzip_level(pb)
        boottime(pb)
    r = run([prog("calls")], env={"TPROF_FORMAT": "protobuf"})
    lines = r.lines("tprof: error")
    check("bad TPROF_FORMAT: one clear error, no trace, exit code kept",
          r.rc == 0 and len(lines) == 1 and "TPROF_FORMAT='protobuf'" in
          lines[0] and "perfetto" in lines[0] and not r.files(),
          r.stderr)
    cleanup(r)
    if NO_SHELL:
        skip("tprof-run --format", NO_SHELL)
    else:
        tprof_run_checks()
    done()


if __name__ == "__main__":
    main()
