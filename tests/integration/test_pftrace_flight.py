#!/usr/bin/env python3
"""TPROF_FORMAT=perfetto after a kill and in the flight recorder (with
the rings file and the window).

Recovery: progs/killself.c makes a known set of calls on two threads,
lets a sync point put the first part into the .pftrace.gz.tmp, makes the
rest in a burst and SIGKILLs itself, so most of the burst is still in
its rings. It runs once as JSON and once as Perfetto; `tprof recover`
completes each, and the Perfetto trace, decoded strictly with the
official schema (pfseq.py: each sequence's interning and clock its own,
every track declared, every slice paired), must hold exactly the calls
the JSON recovery holds, and both exactly the calls made: per thread,
the same names and pointers in the same time order. A burst larger than
a 1 MiB ring checks the accounting: recorded + dropped == made, per
thread; TPROF_RING_FILE=0 checks the cut after the last whole packet.

Flight recorder: progs/paced.c makes numbered calls every 2 ms; a
SIGTERM, `tprof dump` and a second dump at SIGINT each write a
.pftrace.gz that decodes alone: the calls of the last second, in order,
none missing, none that ended before the window, with the window's
stats in the metadata; a hang (TPROF_HANG, four stand-in NCCL ranks, one
skipping a collective) dumps each waiting rank's window as a
.pftrace.gz with the stuck call as an unfinished slice, named by its
JSON hang dump. Without the perfetto and protobuf modules the
decoding half is a SKIP."""
import collections
import glob
import json
import os
import signal
import shutil
import struct
import subprocess
import tempfile
import time

import flightlib
import pfseq
from pftrace import schema
from tplib import *

PB = schema()
N1, N2 = 400, 3000
WORKER = 1000000


def decode(path, tag):
    """The decoded trace, or None (a failure said, or the SKIP)."""
    if PB is None:
        return None
    try:
        return pfseq.decode(PB, path)
    except pfseq.Bad as e:
        check("%s: decodes as Perfetto's importer reads it" % tag, False,
              str(e))
        return None


def killself(fmt, extra=None, n2=N2):
    outdir = tempfile.mkdtemp(prefix="tprof-it-")
    e = base_env()
    e.update({"TPROF_OUTPUT_DIR": outdir, "LD_PRELOAD": PRELOAD,
              "TPROF_FORMAT": fmt})
    e.update(extra or {})
    p = subprocess.run([prog("killself"), str(N1), str(n2)], env=e,
                       capture_output=True, text=True, timeout=120)
    eq("%s kill: the program died by SIGKILL" % fmt, p.returncode,
       -signal.SIGKILL)
    r = subprocess.run([CLI, "recover", outdir], capture_output=True,
                       text=True, timeout=300)
    eq("%s kill: tprof recover exit 0" % fmt, r.returncode, 0)
    return outdir, r.stderr


def expected(base):
    out = []
    for i in range(1, N1 + N2 + 1):
        out += [("cudaMemset", base + i), ("cudaStreamSynchronize", None)]
    return out


def by_thread(events, ptr):
    """{first call's base: [(name, ptr)] in time order} and the number
    of events marked from_rings."""
    th = collections.defaultdict(list)
    for e in events:
        th[e["tid"]].append(e)
    out, rings = {}, 0
    for evs in th.values():
        evs.sort(key=lambda e: (e["ts"], -e["dur"]))
        calls = [(e["name"], ptr(e["args"]["ptr"]) if "ptr" in e["args"]
                  else None) for e in evs]
        rings += sum(1 for e in evs if e["args"].get("from_rings"))
        if calls and calls[0][1] is not None:
            out[WORKER if calls[0][1] > WORKER else 0] = calls
    return out, rings


def recovery_matches_json():
    jdir, _ = killself("json")
    pdir, err = killself("perfetto")
    eq("perfetto kill: the trace recovered, nothing else left",
       sorted(f for f in listing(pdir) if not f.startswith("summaries")),
       ["tprof-rank0.pftrace.gz"])
    check("perfetto kill: recover says how many came from the rings",
          "of them from its rings file" in err, err)
    # The summary of the recovered trace, read back through the Perfetto
    # reader, counts every call as the JSON recovery's does.
    sums = []
    for d_ in (jdir, pdir):
        sp = os.path.join(d_, "summaries", "tprof-rank0.summary.json")
        sums.append(json.load(open(sp)) if os.path.exists(sp) else None)
    if check("perfetto kill: a summary written beside the trace",
             sums[1] is not None, "%s %s" % (listing(pdir), err)):
        def calls(sm):
            return sorted((r["cat"], r["name"], r["count"]) for r in
                          sm.get("calls", []))
        eq("perfetto kill: its calls per API those of the JSON recovery's",
           calls(sums[1]), calls(sums[0]))
    jpath = os.path.join(jdir, "tprof-rank0.trace.json.gz")
    jt = load(jpath)
    jcalls, jrings = by_thread(xevents(jt), lambda s: int(s, 16))
    want = {0: expected(0), WORKER: expected(WORKER)}
    eq("json kill: the recovery holds every call made, in order", jcalls,
       want)
    d = decode(os.path.join(pdir, "tprof-rank0.pftrace.gz"), "perfetto kill")
    if d is None:
        if PB is None:
            skip("perfetto kill: decoding", "no perfetto/protobuf modules")
        return
    eq("perfetto kill: three sequences (the killed writer's, the rings', "
       "the trailer's)", len(d["seqs"]), 3)
    eq("perfetto kill: every slice closed", d["open"], 0)
    xs = pfseq.as_json(d)
    pcalls, prings = by_thread(xs, lambda v: v)
    eq("perfetto kill: the same calls as the JSON recovery, per thread, "
       "in time order", pcalls, jcalls)
    eq("perfetto kill: event count", len(xs), len(xevents(jt)))
    tp = (d["meta"] or {}).get("tprof", {})
    fr = tp.get("from_rings", {})
    eq("perfetto kill: from_rings.records counts the slices it added",
       fr.get("records"), prings)
    check("perfetto kill: records came from the rings (the burst)",
          prings > 0, fr)
    eq("perfetto kill: the metadata is typed (dict entries, not JSON text)",
       d["meta_typed"], [True])
    eq("perfetto kill: two rings read, none unreadable, nothing lost",
       (fr.get("threads"), fr.get("unreadable"), tp.get("events_lost"),
        tp.get("recovered")), (2, 0, 0, True))
    eq("perfetto kill: events_written + records == the slices",
       tp.get("events_written", 0) + fr.get("records", 0), len(xs))
    seq_of = collections.Counter(s["seq"] for s in d["slices"])
    eq("perfetto kill: the rings' slices on their own sequence",
       seq_of[d["seqs"][1]], prings)
    rings = [i for i in d["instants"] if i["name"] == "tprof rings"]
    eq("perfetto kill: one 'tprof rings' instant per ring, no drops",
       sorted((pfseq.thread_of(d, i["track"]) is not None,
               i["args"]["dropped"]) for i in rings), [(True, 0)] * 2)
    shutil.rmtree(jdir, ignore_errors=True)
    shutil.rmtree(pdir, ignore_errors=True)


recovery_matches_json()


def no_ring_file():
    """TPROF_RING_FILE=0: the .tmp alone, cut after its last whole
    packet: a prefix of each thread's calls."""
    pdir, err = killself("perfetto", {"TPROF_RING_FILE": "0"})
    eq("perfetto kill, no rings file: the trace recovered",
       sorted(f for f in listing(pdir) if not f.startswith("summaries")),
       ["tprof-rank0.pftrace.gz"])
    d = decode(os.path.join(pdir, "tprof-rank0.pftrace.gz"),
               "perfetto kill, no rings file")
    if d is not None:
        calls, rings = by_thread(pfseq.as_json(d), lambda v: v)
        check("perfetto kill, no rings file: each thread's calls a prefix "
              "of what it made, the first part there",
              all(v == expected(k)[:len(v)] and len(v) >= 2 * N1
                  for k, v in calls.items()) and len(calls) == 2,
              {k: len(v) for k, v in calls.items()})
        tp = (d["meta"] or {}).get("tprof", {})
        eq("perfetto kill, no rings file: events_lost unknown, none from "
           "rings", (tp.get("events_lost", 0), rings, len(d["seqs"])),
           (None, 0, 2))
    shutil.rmtree(pdir, ignore_errors=True)


no_ring_file()


def drops_accounting():
    """A burst larger than a 1 MiB ring without a spill pool: every call
    recorded or counted as dropped, per thread, exactly."""
    n2 = 40000
    pdir, err = killself("perfetto", {"TPROF_BUFFER_MB": "1",
                                      "TPROF_SPILL_MB": "0"}, n2=n2)
    d = decode(os.path.join(pdir, "tprof-rank0.pftrace.gz"),
               "perfetto drops")
    if d is not None:
        n = collections.Counter(pfseq.thread_of(d, s["track"])
                                for s in d["slices"])
        drops = collections.Counter()
        for i in d["instants"]:
            if i["name"] == "tprof rings":
                drops[pfseq.thread_of(d, i["track"])] += i["args"]["dropped"]
        eq("perfetto drops: two threads recorded", len(n), 2)
        check("perfetto drops: the rings dropped", sum(drops.values()) > 0,
              dict(drops))
        eq("perfetto drops: recorded + dropped == made, per thread",
           sorted(n[t] + drops[t] for t in n), [2 * (N1 + n2)] * 2)
        fr = (d["meta"] or {}).get("tprof", {}).get("from_rings", {})
        eq("perfetto drops: from_rings.dropped sums them",
           fr.get("dropped"), sum(drops.values()))
    shutil.rmtree(pdir, ignore_errors=True)


drops_accounting()


def flight_kill():
    """TPROF_FLIGHT=30 in Perfetto, SIGKILLed: the window survives in
    the flight file (chunks, and every track descriptor logged past
    them) and the rings file; `tprof recover` rebuilds it as a
    .pftrace.gz holding exactly the calls the JSON flight recovery
    holds, and both every call made."""
    fl = {"TPROF_FLIGHT": "30"}
    jdir, _ = killself("json", fl)
    pdir, err = killself("perfetto", fl)
    eq("perfetto flight kill: the window recovered, nothing else left",
       sorted(f for f in listing(pdir) if not f.startswith("summaries")),
       ["tprof-rank0.pftrace.gz"])
    check("perfetto flight kill: recover says it is the flight recorder's "
          "window", "the flight recorder's window" in err, err)
    jt = load(os.path.join(jdir, "tprof-rank0.trace.json.gz"))
    jcalls, _ = by_thread(xevents(jt), lambda s: int(s, 16))
    want = {0: expected(0), WORKER: expected(WORKER)}
    eq("json flight kill: the window holds every call made, in order",
       jcalls, want)
    d = decode(os.path.join(pdir, "tprof-rank0.pftrace.gz"),
               "perfetto flight kill")
    if d is None:
        if PB is None:
            skip("perfetto flight kill: decoding", "no perfetto/protobuf "
                 "modules")
        return
    eq("perfetto flight kill: every slice closed", d["open"], 0)
    xs = pfseq.as_json(d)
    pcalls, prings = by_thread(xs, lambda v: v)
    eq("perfetto flight kill: the same calls as the JSON recovery, per "
       "thread, in time order", pcalls, jcalls)
    tp = (d["meta"] or {}).get("tprof", {})
    fw = tp.get("flight") or {}
    eq("perfetto flight kill: the trailer says recovered, killed, 30 s",
       (tp.get("recovered"), fw.get("trigger"), fw.get("seconds"),
        tp.get("events_lost")), (True, "killed", 30.0, 0))
    eq("perfetto flight kill: window + rings == the slices",
       fw.get("window_events", 0) + fw.get("from_rings", 0), len(xs))
    check("perfetto flight kill: both parts used (chunks and rings)",
          fw.get("window_events", 0) > 0 and prings > 0, fw)
    # A thread is its (pid, tid) to the importer: the window's tracks
    # and the rings' are one thread, named by the rings' descriptor.
    th = collections.defaultdict(set)
    for t in d["tracks"].values():
        if t.HasField("thread"):
            th[t.thread.tid].add(t.thread.thread_name)
    eq("perfetto flight kill: both threads declared, each named",
       sorted((len(names - {""}) == 1) for names in th.values()),
       [True, True])
    shutil.rmtree(jdir, ignore_errors=True)
    shutil.rmtree(pdir, ignore_errors=True)


flight_kill()



def paced(outdir, extra=None):
    return flightlib.paced(outdir, os.path.join(outdir, "last"), 100000,
                           dict(extra or {}, TPROF_FORMAT="perfetto"))


def last_call(outdir):
    with open(os.path.join(outdir, "last"), "rb") as f:
        return struct.unpack("<q", f.read(8))[0]


def check_window(tag, path, trigger, last=None, running=False):
    d = decode(path, tag)
    if d is None:
        return None
    eq("%s: every slice closed" % tag, d["open"], 0)
    xs = [s for s in d["slices"] if s["name"] == "cudaMemset"]
    ids = [s["args"]["ptr"] for s in xs]
    if not check("%s: calls in the dump" % tag, len(ids) > 0):
        return d
    fl = d["meta"]["tprof"]["flight"]
    ends = [s["ts"] + s["dur"] for s in d["slices"]]
    flightlib.window(tag, ids, ends, min(s["ts"] + s["dur"] for s in xs),
                     fl, trigger, last, running, "slice")
    th = [t for t in d["tracks"].values() if t.HasField("thread")]
    check("%s: the thread's track is declared and named" % tag,
          len(th) == 1 and th[0].thread.thread_name, th)
    return d


def flight_sigterm():
    outdir = tempfile.mkdtemp(prefix="tprof-it-")
    p = paced(outdir)
    time.sleep(3.0)
    p.send_signal(signal.SIGTERM)
    out, err = p.communicate(timeout=30)
    eq("perfetto flight SIGTERM: exit status unchanged", p.returncode,
       -signal.SIGTERM)
    eq("perfetto flight SIGTERM: one dump, no .tmp",
       sorted(f for f in os.listdir(outdir) if f != "summaries"),
       ["last", "tprof-rank0.pftrace.gz"])
    path = os.path.join(outdir, "tprof-rank0.pftrace.gz")
    if os.path.exists(path):
        check_window("perfetto flight SIGTERM", path, "SIGTERM",
                     last_call(outdir))
    shutil.rmtree(outdir, ignore_errors=True)


flight_sigterm()


def flight_dumps():
    outdir = tempfile.mkdtemp(prefix="tprof-it-")
    p = paced(outdir, {"TPROF_DUMP_SIGNAL": "USR2"})
    time.sleep(1.5)
    r = subprocess.run([CLI, "dump", str(p.pid)], capture_output=True,
                       text=True, timeout=30)
    eq("perfetto flight dump: tprof dump exit 0", r.returncode, 0)
    first = os.path.join(outdir, "tprof-rank0.pftrace.gz")
    t0 = time.monotonic()
    while not os.path.exists(first) and time.monotonic() - t0 < 5:
        time.sleep(0.02)
    time.sleep(1.2)
    eq("perfetto flight dump: the program goes on", p.poll(), None)
    p.send_signal(signal.SIGINT)
    p.communicate(timeout=30)
    eq("perfetto flight dump: exit status (SIGINT)", p.returncode,
       -signal.SIGINT)
    eq("perfetto flight dump: two dumps, no .tmp",
       sorted(f for f in os.listdir(outdir) if f != "summaries"),
       ["last", "tprof-dump2-rank0.pftrace.gz", "tprof-rank0.pftrace.gz"])
    d1 = check_window("perfetto flight dump 1", first, "signal",
                      running=True) if os.path.exists(first) else None
    second = os.path.join(outdir, "tprof-dump2-rank0.pftrace.gz")
    d2 = check_window("perfetto flight dump 2", second, "SIGINT",
                      last_call(outdir)) if os.path.exists(second) else None
    if d1 and d2:
        a = [s["args"]["ptr"] for s in d1["slices"]]
        b = [s["args"]["ptr"] for s in d2["slices"]]
        check("perfetto flight dump: the second window starts after the "
              "first ends (1.2 s apart)", a and b and b[0] > a[-1],
              (a[-1:], b[:1]))
        eq("perfetto flight dump: the same thread track in both",
           [(u, t.thread.tid) for u, t in d1["tracks"].items()
            if t.HasField("thread")],
           [(u, t.thread.tid) for u, t in d2["tracks"].items()
            if t.HasField("thread")])
    shutil.rmtree(outdir, ignore_errors=True)


flight_dumps()


def flight_exit():
    outdir = tempfile.mkdtemp(prefix="tprof-it-")
    e = base_env()
    e.update({"LD_PRELOAD": PRELOAD, "TPROF_OUTPUT_DIR": outdir,
              "TPROF_FLIGHT": "1", "TPROF_FORMAT": "perfetto"})
    p = subprocess.run([prog("paced"), "1000", "300",
                        os.path.join(outdir, "last")], env=e,
                       capture_output=True, text=True, timeout=60)
    eq("perfetto flight exit: nothing written",
       (p.returncode, sorted(os.listdir(outdir))), (0, ["last"]))
    shutil.rmtree(outdir, ignore_errors=True)


flight_exit()


def typed_trailer():
    """The trailer's JSON as typed annotations, value for value: escapes,
    non-ASCII, integers past int64 and past 64 bits, doubles, null, empty
    and nested containers (through tprof convert, which hands the JSON's
    top-level members to the same encoder)."""
    if PB is None:
        return skip("typed trailer", "no perfetto/protobuf modules")
    tp = {"s": "a\"b\\c\n\u00e9\U0001F600/", "i": -5, "u": 2 ** 64 - 1,
          "big": 2 ** 70, "d": 1.25, "t": True, "f": False, "n": None,
          "e": [], "o": {}, "nest": [[1, {"k": [2.5, "x"]}], {"z": None}]}
    d = tempfile.mkdtemp(prefix="tprof-it-")
    src = os.path.join(d, "in.json")
    with open(src, "w") as f:
        f.write('{"traceEvents": [{"ph": "X", "name": "a", "pid": 1, '
                '"tid": 1, "ts": 1.0, "dur": 1.0}],\n"tprof": %s}\n'
                % json.dumps(tp))
    out = os.path.join(d, "out.pftrace")
    r = subprocess.run([CLI, "convert", src, "-o", out], capture_output=True,
                       text=True, timeout=60)
    eq("typed trailer: convert exit 0", r.returncode, 0)
    t = decode(out, "typed trailer") if r.returncode == 0 else None
    if t is not None:
        eq("typed trailer: typed", t["meta_typed"], [True])
        eq("typed trailer: every value as in the JSON", t["meta"],
           {"tprof": tp})
    shutil.rmtree(d, ignore_errors=True)


typed_trailer()


def hang_flight():
    """TPROF_HANG with the flight recorder in Perfetto: 4 ranks of the
    stand-in NCCL on the simulated GPU, rank 2 stuck in host code before
    the last step's allreduces; each waiting rank's hang dump (JSON, by
    design) names its window, a .pftrace.gz holding the stuck stream sync
    as an unfinished slice and the calls before it; rank 2, asked, dumps
    its window too."""
    n, steps = 4, 3
    outdir = tempfile.mkdtemp(prefix="tprof-it-")
    bar = os.path.join(outdir, "barrier")
    os.mkdir(bar)
    procs = []
    for r in range(n):
        e = base_env()
        e.update({"LD_PRELOAD": PRELOAD, "TPROF_OUTPUT_DIR": outdir,
                  "LD_LIBRARY_PATH": os.path.join(BUILD, "tests", "sim",
                                                  "lib") + ":" +
                  os.path.join(BUILD, "tests", "fakenccl"),
                  "FAKE_NCCL_BARRIER": bar, "TPROF_HANG": "1",
                  "TPROF_RANK": str(r), "WORLD_SIZE": str(n),
                  "TPROF_RUN_ID": "hangtest", "TPROF_FLIGHT": "5",
                  "TPROF_FORMAT": "perfetto", "TPROF_DUMP_SIGNAL": "USR2"})
        procs.append(subprocess.Popen(
            [prog("nccl_ranks"), str(r), str(n), "host", str(steps)], env=e,
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True))
    hangs = os.path.join(outdir, "hangs")
    t0 = time.monotonic()
    dumps = {}
    while time.monotonic() - t0 < 15 and len(dumps) < n:
        time.sleep(0.05)
        for f in sorted(glob.glob(os.path.join(hangs, "*.hang.json"))):
            with open(f) as fh:
                j = json.load(fh)
            dumps[j["rank"]] = j
    time.sleep(0.3)
    eq("perfetto hang+flight: every rank dumps", sorted(dumps), [0, 1, 2, 3])
    for r in sorted(dumps):
        tr = dumps[r]["trace"]
        eq("perfetto hang+flight rank %d: the dump names its trace" % r, tr,
           os.path.join(outdir, "tprof-rank%d.pftrace.gz" % r))
        d = decode(tr, "perfetto hang+flight rank %d" % r) if tr and \
            os.path.exists(tr) else None
        if d is None:
            continue
        un = [s for s in d["slices"] if s["cat"] == "unfinished"]
        eq("perfetto hang+flight rank %d: the stuck call, unfinished" % r,
           [(s["name"], s["args"].get("stuck")) for s in un],
           [] if r == 2 else [("cudaStreamSynchronize", 1)])
        eq("perfetto hang+flight rank %d: the window's calls" % r,
           (sum(1 for s in d["slices"] if s["name"] == "ncclAllReduce" and
                s["cat"] == "nccl"),
            sum(1 for s in d["slices"] if s["name"] == "ncclCommInitRank"),
            d["meta"]["tprof"]["flight"]["trigger"]),
           (2 * (steps - 1), 1, "peer") if r == 2 else
           (2 * steps, 1, "hang"))
    for p in procs:
        if p.poll() is None:
            p.send_signal(signal.SIGTERM)
    codes = [p.communicate(timeout=30) and p.returncode for p in procs]
    eq("perfetto hang+flight: exit statuses", codes, [-signal.SIGTERM] * n)
    eq("perfetto hang+flight: no .tmp left",
       [f for f in os.listdir(outdir) if f.endswith(".tmp")], [])
    shutil.rmtree(outdir, ignore_errors=True)


hang_flight()
done()
