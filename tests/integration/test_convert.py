#!/usr/bin/env python3
"""tprof convert: a JSON trace to Perfetto protobuf (decoded with the
official schema, perfetto_trace_pb2 from the `perfetto` PyPI package, and
compared event for event with the JSON) and to JSON (compared with the
input). Without the perfetto and protobuf modules the protobuf checks are
SKIPs (pip install perfetto protobuf, or point PYTHONPATH at them)."""
import gzip
import json
import os
import random
import signal
import subprocess
import tempfile
import time

import tplib
from pftrace import (decode, importer_flows, importer_nesting,
                     importer_slices, read_trace, track_key)
from tplib import check, eq, skip

BASE = 1795500000000000000


def fixture():
    """Every phase the converter knows, nesting with equal starts and ends,
    a GPU device (pid < 256), typed args of each kind."""
    pid, tid = 4242, 4243
    ev = [
        {"ph": "M", "name": "process_name", "pid": pid, "tid": 0,
         "args": {"name": "rank 0: python3 (rank 0, pid 4242)"}},
        {"ph": "M", "name": "process_sort_index", "pid": pid, "tid": 0,
         "args": {"sort_index": 3}},
        {"ph": "X", "cat": "cuda_runtime", "name": "inner", "pid": pid,
         "tid": tid, "ts": 10.0, "dur": 2.5,
         "args": {"ret": 0, "kernel": "void k<float>(float*)",
                  "grid": [64, 128, 1], "ratio": 0.25, "neg": -7,
                  "big": 18446744073709551615, "ok": True,
                  "flops": 340282366920938463463374607431768211455,
                  "nested": {"a": 1, "b": "x\"y\n\u00e9"}, "none": None}},
        {"ph": "X", "cat": "cuda_runtime", "name": "outer", "pid": pid,
         "tid": tid, "ts": 10.0, "dur": 5.001},
        {"ph": "X", "cat": "kernel", "name": "void k<float>(float*)",
         "pid": 0, "tid": 7, "ts": 11.123, "dur": 3.0,
         "args": {"correlation": 1000, "stream": 7}},
        {"ph": "s", "cat": "ac2g", "name": "ac2g", "id": 1000, "pid": pid,
         "tid": tid, "ts": 10.5},
        {"ph": "f", "bp": "e", "cat": "ac2g", "name": "ac2g", "id": 1000,
         "pid": 0, "tid": 7, "ts": 11.123},
        {"ph": "C", "cat": "gpu_memory", "name": "GPU memory", "pid": 0,
         "tid": 0, "ts": 12.0, "args": {"allocated": 1048576}},
        {"ph": "b", "cat": "user_annotation", "name": "range", "id": 5,
         "pid": pid, "tid": tid, "ts": 9.0},
        {"ph": "e", "cat": "user_annotation", "id": 5, "pid": pid,
         "tid": tid, "ts": 20.0},
        {"ph": "i", "s": "t", "cat": "user_annotation", "name": "mark",
         "pid": pid, "tid": tid, "ts": 8.0},
        {"ph": "X", "cat": "cuda_runtime", "name": "early", "pid": pid,
         "tid": tid, "ts": 1.000, "dur": 0.5},
        {"ph": "M", "name": "process_name", "pid": 0, "tid": 0,
         "args": {"name": "GPU 0 (H100)"}},
        {"ph": "M", "name": "thread_name", "pid": 0, "tid": 7,
         "args": {"name": "stream 7"}},
        {"ph": "M", "name": "thread_name", "pid": pid, "tid": tid,
         "args": {"name": "python3"}},
    ]
    return {"schemaVersion": 1, "traceName": "t", "displayTimeUnit": "ms",
            "baseTimeNanoseconds": BASE, "traceEvents": ev,
            "distributedInfo": {"rank": 0, "world_size": 1},
            "tprof": {"version": "x"}}


def convert(src, out):
    p = subprocess.run([tplib.CLI, "convert", src, "-o", out],
                       capture_output=True, text=True)
    return p.returncode, p.stdout, p.stderr


def ns(us):
    return round(us * 1000)


def test_json(d, src, want):
    out = os.path.join(d, "out.json.gz")
    rc, so, se = convert(src, out)
    eq("convert_json_rc", (rc, so), (0, ""))
    check("convert_json_message", "(15 events, 0 skipped)" in se, se)
    got = json.load(gzip.open(out))
    for e in got["traceEvents"] + want["traceEvents"]:
        for k in ("ts", "dur"):
            if k in e:
                e[k] = ns(e[k])
    eq("convert_json_events", got["traceEvents"], want["traceEvents"])
    eq("convert_json_trailer", (got["tprof"], got["distributedInfo"]),
       (want["tprof"], want["distributedInfo"]))
    eq("convert_json_base", got["baseTimeNanoseconds"], BASE)
    p = subprocess.run([tplib.CLI, "check", out], capture_output=True,
                       text=True)
    eq("convert_json_check", p.returncode, 0)


def test_perfetto(d, src, want, pb, gz):
    name = "convert_pf" + ("_gz" if gz else "")
    out = os.path.join(d, "out.pftrace" + (".gz" if gz else ""))
    rc, so, se = convert(src, out)
    eq(name + "_rc", (rc, so), (0, ""))
    res, why = decode(pb, out)
    if not check(name + "_decodes", res is not None, why):
        return
    tracks, evs, flags, clocks = res
    eq(name + "_flags", (flags[1], set(flags[2:])), (1, {0, 2}))
    # Only packets with a track event or interned data need the state.
    # No BOOTTIME known: the trace clock is TRACE_FILE (11), equal to
    # REALTIME, so trace_processor v58 relates its BOOTTIME fallback.
    eq(name + "_clocks", clocks, {64: 0, 65: 0, 1: BASE, 11: BASE})
    keyed = [dict(e, track=track_key(tracks, e["track"])) for e in evs]
    thr = ("thread", 4242, 4243, "python3")
    strm = ("track", "GPU 0 (H100)", "stream 7", False)
    # Slices: each BEGIN of a complete event is followed by its END.
    slices = []
    for i, e in enumerate(keyed):
        if e["type"] == 1 and keyed[i + 1]["type"] == 2 and \
           keyed[i + 1]["track"] == e["track"] and e["cat"] != \
           "user_annotation":
            slices.append((e["name"], e["cat"], e["track"], e["ts"],
                           keyed[i + 1]["ts"] - e["ts"], e["args"]))
    # Written in start order, longest first at equal starts (the
    # fixture's "inner" comes before "outer" of the same start).
    wx = sorted([(e["name"], e["cat"], thr if e["pid"] else strm,
                  ns(e["ts"]), ns(e["dur"]), e.get("args", {}))
                 for e in want["traceEvents"] if e["ph"] == "X"],
                key=lambda x: (x[3], -x[4]))
    eq(name + "_slices", slices, wx)
    # As Perfetto's importer pairs them: "outer" encloses "inner" (it
    # did not when the slices were written in the input's order).
    eq(name + "_nesting", importer_nesting(evs), (True, 0))
    eq(name + "_depths", [(s[1], s[2], s[3], s[4]) for s in
                          importer_slices(keyed) if s[0] == thr],
       [("early", 1000, 500, 0), ("inner", 10000, 2500, 1),
        ("outer", 10000, 5001, 0)])
    flows = [(e["track"], e["ts"], e["flow"], e["term"]) for e in keyed
             if e["flow"] or e["term"]]
    eq(name + "_flows", flows, [(thr, 10500, [1000], []),
                                (strm, 11123, [], [1000])])
    ctr = [(e["track"], e["ts"], e["cv"]) for e in keyed if e["type"] == 4]
    eq(name + "_counters", ctr, [(("track", "GPU 0 (H100)",
                                   "GPU memory allocated", True), 12000,
                                  1048576)])
    asy = [(e["type"], e["track"][1:3], e["ts"], e["name"]) for e in keyed
           if e["type"] != 3 and e["cat"] == "user_annotation" or
           (e["type"] == 2 and e["track"][0] == "track" and
            e["track"][2] == "user_annotation")]
    eq(name + "_async", asy, [(1, ("rank 0: python3 (rank 0, pid 4242)",
                                   "user_annotation"), 9000, "range"),
                              (2, ("rank 0: python3 (rank 0, pid 4242)",
                                   "user_annotation"), 20000, None)])
    inst = [(e["track"], e["ts"], e["name"]) for e in keyed
            if e["type"] == 3 and not e["flow"] and not e["term"]
            and e["name"] != "tprof metadata"]
    eq(name + "_instants", inst, [(thr, 8000, "mark")])
    procs = {(t.process.pid, t.process.process_name,
              t.process.legacy_sort_index)
             for t in tracks.values() if t.HasField("process")}
    eq(name + "_processes", procs,
       {(4242, "rank 0: python3 (rank 0, pid 4242)", 3)})
    meta = [e["args"]["trailer"] for e in keyed
            if e["name"] == "tprof metadata"]
    eq(name + "_metadata", meta, [{"distributedInfo": {"rank": 0,
                                                       "world_size": 1},
                                   "tprof": {"version": "x"}}])


def test_killed(d):
    """convert killed while it writes: no OUT, no OUT.tmp.* left. Its
    input is a FIFO that holds the start of a trace and stays open, so
    the conversion waits for more with its output begun."""
    fifo = os.path.join(d, "in.fifo")
    os.mkfifo(fifo)
    p = subprocess.Popen([tplib.CLI, "convert", fifo, "-o",
                          os.path.join(d, "k.pftrace.gz")],
                         stderr=subprocess.DEVNULL)
    w = open(fifo, "w")
    w.write('{"traceEvents": [{"ph": "X", "name": "a", "pid": 1, '
            '"tid": 1, "ts": 1.000, "dur": 2.000},')
    w.flush()
    begun = False
    for _ in range(200):
        begun = any(f.startswith("k.pftrace.gz.tmp.")
                    for f in os.listdir(d))
        if begun or p.poll() is not None:
            break
        time.sleep(0.05)
    p.send_signal(signal.SIGTERM)
    rc = p.wait(timeout=30)
    try:
        w.close()
    except BrokenPipeError:
        pass
    eq("convert killed: it had begun OUT, then SIGTERM",
       (begun, rc), (True, -signal.SIGTERM))
    eq("convert killed: nothing left",
       [f for f in os.listdir(d) if f.startswith("k.pftrace")], [])
    os.unlink(fifo)


def convert_events(d, stem, ev, pb, label):
    """ev as a JSON trace converted to Perfetto: the decoded trace, or
    None (after a FAIL) when it does not decode."""
    src = os.path.join(d, stem + ".json")
    with open(src, "w") as f:
        json.dump({"baseTimeNanoseconds": BASE, "traceEvents": ev}, f)
    out = os.path.join(d, stem + ".pftrace")
    rc, so, se = convert(src, out)
    eq(label + "_rc", rc, 0)
    res, why = decode(pb, out)
    if not check(label + "_decodes", res is not None, why):
        return None
    return res


def test_clear(d, pb):
    """Past the intern table's 65536 strings the sequence's incremental
    state is cleared and interning starts over: every name and time still
    resolves."""
    n = 70000
    ev = [{"ph": "X", "cat": "c", "name": "k%d" % i, "pid": 4242,
           "tid": 4242, "ts": i * 1.0, "dur": 0.5} for i in range(n)]
    res = convert_events(d, "many", ev, pb, "convert_pf_clear")
    if res is None:
        return
    tracks, evs, flags, clocks = res
    eq("convert_pf_clear_count", flags.count(1), 2)
    got = [(e["name"], e["cat"], e["ts"]) for e in evs if e["type"] == 1]
    eq("convert_pf_clear_names", got,
       [("k%d" % i, "c", i * 1000) for i in range(n)])
    ends = [e["ts"] for e in evs if e["type"] == 2]
    eq("convert_pf_clear_ends", ends, [i * 1000 + 500 for i in range(n)])


def test_end_order(d, pb):
    """Events in end order (a child before its parent), several sharing a
    start, as a writer that emits each event when it ends: each slice
    nests under its own parent, as the JSON importer nests them."""
    tid = 4242
    x = [("h", 0, 2), ("s", 5, 2), ("p", 0, 10), ("q", 12, 3), ("g", 0, 20)]
    ev = [{"ph": "X", "cat": "c", "name": n, "pid": tid, "tid": tid,
           "ts": float(t), "dur": float(u)} for n, t, u in x]
    res = convert_events(d, "endorder", ev, pb, "convert_end_order")
    if res is None:
        return
    evs = res[1]
    eq("convert_end_order_nesting", importer_nesting(evs), (True, 0))
    eq("convert_end_order_depths",
       [s[1:] for s in importer_slices(evs)],
       [("g", 0, 20000, 0), ("h", 0, 2000, 2), ("p", 0, 10000, 1),
        ("q", 12000, 3000, 1), ("s", 5000, 2000, 2)])


def test_nulls(d, pb):
    """null and empty containers, at the top and nested: no annotation
    holds legacy JSON "null" (Perfetto v58's importer aborts on one,
    json_args.cc "Unreachable", and the trace does not open): a null is
    an annotation without a value; [] and {} stay legacy JSON, so they
    do not read back as null. Read back: the same args."""
    args = {"e": [], "d": {}, "z": None,
            "n": {"x": None, "y": [None, 1], "w": {}}}
    ev = [{"ph": "X", "cat": "c", "name": "a", "pid": 1, "tid": 1,
           "ts": 1.0, "dur": 1.0, "args": args}]
    res = convert_events(d, "nulls", ev, pb, "convert_nulls")
    if res is None:
        return
    got = [e["args"] for e in res[1] if e["name"] == "a"]
    eq("convert_nulls: decoded, the same args", got, [args])
    legacy = []

    def walk(a):
        if a.WhichOneof("value") == "legacy_json_value":
            legacy.append(a.legacy_json_value)
        for x in list(a.dict_entries) + list(a.array_values):
            walk(x)
    for p in read_trace(pb, os.path.join(d, "nulls.pftrace")).packet:
        for a in p.track_event.debug_annotations:
            walk(a)
    eq("convert_nulls: legacy JSON only for the empty containers",
       sorted(legacy), ["[]", "{}", "{}"])
    back = os.path.join(d, "nulls.back.json")
    rc, _, se = convert(os.path.join(d, "nulls.pftrace"), back)
    with open(back) as f:
        eq("convert_nulls: read back, the same args",
           [e["args"] for e in json.load(f)["traceEvents"]
            if e.get("ph") == "X"], [args])


def track_name(tracks, uuid):
    """A decoded track's name: its thread's, else its own."""
    t = tracks[uuid]
    return t.thread.thread_name if t.HasField("thread") else t.name


def deep_events(n):
    """n slices nested on one thread named "python" (a Kineto trace's
    Python stack with with_stack=True): f<i> at 10 us + i ns, lasting
    2 (n - i) ns (test_trace_processor.py uses them too)."""
    ev = [{"ph": "X", "cat": "python_function", "name": "f%d" % i,
           "pid": 4242, "tid": 4243, "ts": 10.0 + i / 1000,
           "dur": (2 * (n - i)) / 1000} for i in range(n)]
    return ev + [{"ph": "M", "name": "thread_name", "pid": 4242,
                  "tid": 4243, "args": {"name": "python"}}]


def test_deep(d, pb):
    """300 nested slices: the first 255 nest on the thread, as deep as
    Perfetto's importer keeps them (v43: depth is a uint8; v58: 512,
    slice_max_depth_exceeded); the rest go on to a lane, where they
    show, each with its own time."""
    n = 300
    res = convert_events(d, "deep", deep_events(n), pb, "convert_deep")
    if res is None:
        return
    tracks, evs, flags, clocks = res
    got = sorted((int(s[1][1:]), track_name(tracks, s[0]), s[2], s[3],
                  s[4]) for s in importer_slices(evs))
    want = [(i, "python" if i < 255 else "python (2)", 10000 + i,
             2 * (n - i), i if i < 255 else i - 255) for i in range(n)]
    eq("convert_deep: 255 on the thread, the rest on one lane", got, want)


def test_overlap(d, pb):
    """Kernels on one stream that overlap without nesting (each starts
    1 ns before the previous ends, as CUPTI's times sometimes have them)
    and a flow's end at a kernel's start: the importer pairs an unnamed
    SLICE_END with the innermost open slice, so overlapping slices on one
    track would swap ends. Each slice keeps its duration (the second on
    a lane, "stream 7 (2)"); the flow's instant nests in its kernel."""
    k = [("a", 10.0, 10.0), ("b", 19.999, 10.0), ("c", 29.998, 5.0),
         ("d", 40.0, 2.0)]
    ev = [{"ph": "X", "cat": "kernel", "name": n, "pid": 0, "tid": 7,
           "ts": t, "dur": u} for n, t, u in k]
    ev += [{"ph": "X", "cat": "cpu_op", "name": n, "pid": 4242, "tid": 4243,
            "ts": t, "dur": u} for n, t, u in [("op1", 10.0, 10.0),
                                                ("op2", 19.5, 10.0)]]
    ev += [{"ph": "M", "name": "thread_name", "pid": 4242, "tid": 4243,
            "args": {"name": "python"}}]
    ev += [{"ph": "M", "name": "thread_name", "pid": 0, "tid": 7,
            "args": {"name": "stream 7"}},
           {"ph": "X", "cat": "cuda_runtime", "name": "launch", "pid": 4242,
            "tid": 4242, "ts": 19.0, "dur": 0.5},
           {"ph": "s", "cat": "ac2g", "name": "ac2g", "id": 5, "pid": 4242,
            "tid": 4242, "ts": 19.0},
           {"ph": "f", "bp": "e", "cat": "ac2g", "name": "ac2g", "id": 5,
            "pid": 0, "tid": 7, "ts": 19.999}]
    res = convert_events(d, "overlap", ev, pb, "convert_overlap")
    if res is None:
        return
    tracks, evs, flags, clocks = res
    got = [(track_name(tracks, s[0]), s[1], s[2], s[3], s[4])
           for s in importer_slices(evs) if s[1] != "launch"]
    eq("convert_overlap_slices", sorted(got),
       [("python", "op1", 10000, 10000, 0),
        ("python (2)", "op2", 19500, 10000, 0),
        ("stream 7", "a", 10000, 10000, 0),
        ("stream 7", "c", 29998, 5000, 0),
        ("stream 7", "d", 40000, 2000, 0),
        ("stream 7 (2)", "b", 19999, 10000, 0)])
    thr = [t for t in tracks.values() if t.name == "python (2)"]
    check("convert_overlap_thread_lane_under_thread",
          len(thr) == 1 and tracks[thr[0].parent_uuid].HasField("thread"),
          [str(t) for t in thr])
    # Read back: the lanes' slices are their stream's and thread's again.
    back = os.path.join(d, "overlap.back.json")
    eq("convert_overlap_back_rc", convert(os.path.join(
        d, "overlap.pftrace"), back)[0], 0)
    with open(back) as f:
        bt = json.load(f)
    xs = lambda evs: sorted((e["name"], e["pid"], e["tid"], e["ts"],
                             e["dur"]) for e in evs if e["ph"] == "X")
    eq("convert_overlap_back_slices", xs(bt["traceEvents"]), xs(ev))
    eq("convert_overlap_back_names", sorted(
        (e["pid"], e["tid"], e["args"]["name"]) for e in bt["traceEvents"]
        if e["ph"] == "M" and e["name"] == "thread_name"),
        [(0, 7, "stream 7"), (4242, 4243, "python")])
    lanes = [t for t in tracks.values() if t.name == "stream 7 (2)"]
    check("convert_overlap_lane_beside",
          len(lanes) == 1 and tracks[lanes[0].parent_uuid].name.startswith(
              "GPU 0"), [str(t) for t in lanes])
    # The flow's end: written after "b" opens, on b's lane.
    order = [(e["type"], e["name"], tracks[e["track"]].name) for e in evs
             if e["ts"] == 19999]
    eq("convert_overlap_flow_in_kernel", order,
       [(1, "b", "stream 7 (2)"), (3, "ac2g", "stream 7 (2)")])


def test_flow_ids(d, pb):
    """Kineto's fwdbwd and ac2g flows with the same id (JSON matches a
    flow by id, category and name; Perfetto by id alone): each links its
    own events."""
    ev = [{"ph": "X", "cat": "c", "name": n, "pid": 4242, "tid": t,
           "ts": ts, "dur": 1.0}
          for n, t, ts in [("fwd", 1, 5.0), ("launch", 1, 10.0),
                           ("bwd", 2, 40.0)]]
    ev += [{"ph": "X", "cat": "kernel", "name": "k", "pid": 0, "tid": 7,
            "ts": 20.0, "dur": 1.0}]
    ev += [{"ph": ph, "cat": c, "name": c, "id": 9, "pid": p, "tid": t,
            "ts": ts, "bp": "e"}
           for ph, c, p, t, ts in [("s", "fwdbwd", 4242, 1, 5.0),
                                   ("s", "ac2g", 4242, 1, 10.0),
                                   ("f", "ac2g", 0, 7, 20.0),
                                   ("f", "fwdbwd", 4242, 2, 40.0)]]
    res = convert_events(d, "flowids", ev, pb, "convert_flow_ids")
    if res is None:
        return
    links = sorted((a[1], b[1]) for a, b in importer_flows(res[1]))
    eq("convert_flow_ids_links", links, [(5000, 40000), (10000, 20000)])


def test_fanout_cap(d, pb):
    """A launch whose flow ends on 65537 kernels: the first end and the
    next 65535 (k = 1..65535 in bits 32-47, encode/flow_ids.h) are each
    linked by the importer; the last end keeps the base id (no room for
    k: Perfetto links it to nothing, JSON to the "s"); read back, the
    JSON's one "s" and 65537 "f"s of id 5."""
    n = 65537
    ev = [{"ph": "X", "cat": "cuda_runtime", "name": "launch", "pid": 4242,
           "tid": 1, "ts": 10.0, "dur": 1.0},
          {"ph": "s", "cat": "ac2g", "name": "ac2g", "id": 5, "pid": 4242,
           "tid": 1, "ts": 10.0}]
    for i in range(n):
        ts = 20.0 + i * 0.002
        ev.append({"ph": "X", "cat": "kernel", "name": "k", "pid": 0,
                   "tid": 7, "ts": ts, "dur": 0.001})
        ev.append({"ph": "f", "cat": "ac2g", "name": "ac2g", "id": 5,
                   "pid": 0, "tid": 7, "ts": ts, "bp": "e"})
    res = convert_events(d, "fanout", ev, pb, "convert_fanout_cap")
    if res is None:
        return
    links = importer_flows(res[1])
    eq("convert_fanout_cap: links (the importer's)", len(links), n - 1)
    back = os.path.join(d, "fanout.back.json")
    rc, _, se = convert(os.path.join(d, "fanout.pftrace"), back)
    if not eq("convert_fanout_cap: reads back", rc, 0):
        return print(se)
    with open(back) as f:
        fl = [(e["ph"], e["id"]) for e in json.load(f)["traceEvents"]
              if e.get("ph") in ("s", "f")]
    eq("convert_fanout_cap: read back, one s and every f, id 5",
       sorted(set(fl)), [("f", 5), ("s", 5)])
    eq("convert_fanout_cap: read back, counts",
       (fl.count(("s", 5)), fl.count(("f", 5))), (1, n))


def gzip_levels(d):
    """--gzip-level 6: the bytes of level 1, compressed smaller (launches
    of a training step's kernels with ns jitter, as the writer's
    benchmark makes them); a level out of 1-9 refused with one line and
    no OUT."""
    rng = random.Random(7)
    step = [(rng.choice("abcd"), rng.choice((64, 128, 4096, 8192)),
             rng.choice((1, 2))) for _ in range(256)]
    ev, t = [], 0
    for i in range(20000):
        k, g, s = step[i % 256]
        t += rng.randint(100, 500)
        dur = rng.randint(500, 900)
        ev.append({"ph": "X", "cat": "cuda_runtime",
                   "name": "cudaLaunchKernel", "pid": 7, "tid": 7,
                   "ts": t / 1000, "dur": dur / 1000,
                   "args": {"ret": 0, "correlation": i + 1,
                            "kernel": "void kernel_%s<float>(int)" % k,
                            "grid": [g, 1, 1], "block": [256, 1, 1],
                            "stream": "0x%x" % (0x55d4c3a1f2b0 * s)}})
        t += dur
    src = os.path.join(d, "levels.json")
    with open(src, "w") as f:
        json.dump({"traceEvents": ev}, f)
    outs = {}
    for lv in ("1", "6"):
        out = os.path.join(d, "lv%s.pftrace.gz" % lv)
        p = subprocess.run([tplib.CLI, "convert", src, "-o", out,
                            "--gzip-level", lv], capture_output=True,
                           text=True)
        eq("convert --gzip-level %s: exit 0" % lv, p.returncode, 0)
        outs[lv] = out
    if all(os.path.exists(o) for o in outs.values()):
        with gzip.open(outs["1"]) as a, gzip.open(outs["6"]) as b:
            eq("convert --gzip-level 6: the same bytes as level 1",
               a.read() == b.read(), True)
        s1, s6 = (os.path.getsize(outs[lv]) for lv in ("1", "6"))
        check("convert --gzip-level 6: smaller than level 1",
              s6 < s1 * 0.8, "%d vs %d bytes" % (s6, s1))
    for bad in (["--gzip-level", "0"], ["--gzip-level=10"],
                ["--gzip-level"]):
        out = os.path.join(d, "bad-level.pftrace.gz")
        p = subprocess.run([tplib.CLI, "convert", src, "-o", out] + bad,
                           capture_output=True, text=True)
        check("convert %s: exit 2, one line, no OUT" % " ".join(bad),
              p.returncode == 2 and not os.path.exists(out) and
              len(p.stderr.splitlines()) == 1, p.stderr)


def test_kineto(d, pb):
    """A torch.profiler trace (kineto_fixture: pretty-printed, metadata
    last, a "Record Window End" instant with empty pid and tid): every X
    event becomes one slice with its name, category, ts, dur and args, on
    the CPU thread or the GPU stream its pid/tid names."""
    import kineto_fixture
    trace, _ = kineto_fixture.make()
    src = kineto_fixture.write(os.path.join(d, "kineto.json.gz"), trace)
    out = os.path.join(d, "kineto.pftrace.gz")
    rc, so, se = convert(src, out)
    eq("convert_kineto_rc", rc, 0)
    res, why = decode(pb, out)
    if not check("convert_kineto_decodes", res is not None, why):
        return
    tracks, evs, flags, clocks = res
    got = []
    for i, e in enumerate(evs):
        if e["type"] == 1 and evs[i + 1]["type"] == 2:
            t = tracks[e["track"]]
            where = (t.thread.pid, t.thread.tid) if t.HasField("thread") \
                else ("gpu", tracks[t.parent_uuid].name, t.name)
            got.append((e["name"], e["cat"], where, e["ts"],
                        evs[i + 1]["ts"] - e["ts"], e["args"]))
    names = {e["pid"]: e["args"]["name"] for e in trace["traceEvents"]
             if e["ph"] == "M" and e["name"] == "process_name"}
    tnames = {(e["pid"], e["tid"]): e["args"]["name"]
              for e in trace["traceEvents"]
              if e["ph"] == "M" and e["name"] == "thread_name"}
    want = []
    for e in trace["traceEvents"]:
        if e["ph"] != "X":
            continue
        if e["pid"] < 256:
            where = ("gpu", names.get(e["pid"], "GPU %d" % e["pid"]),
                     tnames.get((e["pid"], e["tid"]),
                                "stream %d" % e["tid"]))
        else:
            where = (e["pid"], e["tid"])
        want.append((e["name"], e["cat"], where, ns(e["ts"]),
                     ns(e["ts"] + e["dur"]) - ns(e["ts"]),
                     e.get("args", {})))
    check("convert_kineto_has_gpu", any(w[2][0] == "gpu" for w in want),
          "no GPU events in the fixture")
    eq("convert_kineto_slices", sorted(got, key=repr),
       sorted(want, key=repr))
    eq("convert_kineto_nesting", importer_nesting(evs), (True, 0))


def main():
    want = fixture()
    with tempfile.TemporaryDirectory() as d:
        src = os.path.join(d, "in.json")
        with open(src, "w") as f:
            json.dump(want, f)
        test_json(d, src, json.loads(json.dumps(want)))
        rc, so, se = convert(src, os.path.join(d, "x.txt"))
        eq("convert_bad_suffix: exit 2, one line naming the help",
           (rc, so, se), (2, "", "tprof convert: OUT must end in .pftrace, "
                          ".pftrace.gz, .json or .json.gz; see 'tprof "
                          "convert --help'\n"))
        test_killed(d)
        gzip_levels(d)
        open(os.path.join(d, "bad.json"), "w").write('{"traceEvents": [')
        rc, so, se = convert(os.path.join(d, "bad.json"),
                             os.path.join(d, "bad.pftrace"))
        check("convert_bad_input", rc == 1 and se.startswith("tprof: ")
              and not os.path.exists(os.path.join(d, "bad.pftrace")), se)
        try:
            from perfetto.protos.perfetto.trace import perfetto_trace_pb2
        except Exception as e:
            skip("convert_perfetto", "no perfetto/protobuf modules (%s)" % e)
            tplib.done()
        for gz in (False, True):
            test_perfetto(d, src, want, perfetto_trace_pb2, gz)
        test_clear(d, perfetto_trace_pb2)
        test_end_order(d, perfetto_trace_pb2)
        test_overlap(d, perfetto_trace_pb2)
        test_deep(d, perfetto_trace_pb2)
        test_nulls(d, perfetto_trace_pb2)
        test_flow_ids(d, perfetto_trace_pb2)
        test_fanout_cap(d, perfetto_trace_pb2)
        test_kineto(d, perfetto_trace_pb2)
    tplib.done()


if __name__ == "__main__":
    main()
