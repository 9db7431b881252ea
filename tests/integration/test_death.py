"""Deaths as they happen to jobs, against the program's own log of what
it issued: progs/deathlog.c runs 4 threads making paced CUDA calls and
logs each call's end in a file mapped MAP_SHARED (it survives any
death); after 1.5 s a worker thread (not main) dies by abort, SIGSEGV,
_exit, exit or SIGKILL while the others go on calling. The trace left
(after `tprof recover` for a kill) must hold every call of every thread
that ended up to 100 ms before the death, and no call the program
issued may go unrecorded and uncounted: a call missing from the trace is
one its thread's "dropped" counts, or one that ended after the death
(its thread was held in the hook while the trace was written, so the
program never saw it return before the process ended). The same with
the flight recorder (TPROF_FLIGHT=30): the window, dumped at the crash,
at exit with TPROF_FLIGHT_DUMP_AT_EXIT=1, and rebuilt by `tprof recover`
after a SIGKILL. A SIGKILL loses nothing the hooks recorded: every call
the program saw return before the kill is in the recovered trace, with
and without the flight recorder."""
import glob
import struct

import pfseq
from pftrace import schema
from tplib import *

PB = schema()

THREADS = 4
SECONDS = 1.5
MAX = 200000
BOUND_NS = 100 * 1000000


def read_log(path):
    with open(path, "rb") as f:
        data = f.read()
    death, n = struct.unpack_from("qq", data, 0)
    calls = {}
    for k in range(n):
        off = (2 + k * (MAX + 1)) * 8
        cnt = struct.unpack_from("q", data, off)[0]
        ends = struct.unpack_from("%dq" % cnt, data, off + 8)
        for i, end in enumerate(ends, 1):
            calls[k << 32 | i] = end
    return death, calls


def trace_of(outdir):
    names = sorted(glob.glob(os.path.join(outdir, "*.trace.json.gz")))
    return names


def one(how, flight):
    tag = "%s%s" % (how, " flight" if flight else "")
    outdir = tempfile.mkdtemp(prefix="tprof-it-")
    logp = os.path.join(outdir, "calls.log")
    env = {}
    if flight:
        env["TPROF_FLIGHT"] = "30"
        if how in ("exit", "Exit"):
            env["TPROF_FLIGHT_DUMP_AT_EXIT"] = "1"
    r = run([prog("deathlog"), how, str(THREADS), str(SECONDS), logp],
            env=env, outdir=outdir, timeout=120)
    want = {"abort": -signal.SIGABRT, "segv": -signal.SIGSEGV, "exit": 3,
            "Exit": 3, "kill": -signal.SIGKILL}[how]
    eq("%s: the program's exit status" % tag, r.rc, want)
    if how == "kill":
        p = subprocess.run([CLI, "recover", outdir], capture_output=True,
                           text=True, timeout=120)
        eq("%s: tprof recover exit 0" % tag, p.returncode, 0)
    death, calls = read_log(logp)
    traces = trace_of(outdir)
    if not eq("%s: one trace" % tag, [os.path.basename(t) for t in traces],
              ["tprof-rank0.trace.json.gz"]):
        print("  files: %r\n  stderr: %s" % (os.listdir(outdir),
                                            r.stderr[-2000:]))
        return
    tprof_check(traces[0], "%s: tprof check passes" % tag)
    t = load(traces[0])
    got = {int(e["args"]["ptr"], 16) for e in xevents(t, "cudaMemset")
           if "ptr" in e.get("args", {})}
    before = {c for c, end in calls.items() if end <= death - BOUND_NS}
    lost = sorted(before - got)
    check("%s: every call of every thread up to 100 ms before the death "
          "(%d calls)" % (tag, len(before)), not lost and len(before) > 1000,
          "%d missing, first %s" % (len(lost), [hex(c) for c in lost[:5]]))
    # A call the program saw return before the trace ended is in it,
    # or counted as dropped: the other threads were held in the hook
    # while the trace was written. Only the call a thread was inside
    # when recording stopped may end in between and be missing (at most
    # one per thread). A SIGKILL has no end: the bound above is all.
    if how == "kill":
        # The bound of a SIGKILL: the rings and the flight window live in
        # file mappings, so every call recorded before the kill is there
        # (none was dropped: the rings did not fill).
        missing = [c for c, e in calls.items() if c not in got and
                   e <= death]
        check("%s: every call the program saw return before the kill "
              "(%d missing)" % (tag, len(missing)), not missing,
              [hex(c) for c in missing[:5]])
        if flight:
            fl = t["tprof"].get("flight") or {}
            eq("%s: the window's trailer" % tag,
               (t["tprof"].get("recovered"), fl.get("seconds"),
                fl.get("trigger"), fl.get("window_events", 0) > 1000),
               (True, 30.0, "killed", True))
        shutil.rmtree(outdir, ignore_errors=True)
        return
    end = t["tprof"]["end_unix_ns"]
    dropped = t["tprof"].get("events_dropped") or 0
    missing = [c for c, e in calls.items() if c not in got and e <= end]
    check("%s: every call the program saw return before the trace's end "
          "is in it (%d missing, %d dropped)" % (tag, len(missing), dropped),
          len(missing) <= dropped + THREADS - 1,
          [hex(c) for c in missing[:5]])
    shutil.rmtree(outdir, ignore_errors=True)


def perfetto_kill():
    """TPROF_FORMAT=perfetto with a 1 s window, SIGKILLed after 2.5 s: the
    chunks that declared the threads' tracks have aged out, so the
    recovered trace decodes only with the descriptors the flight file
    logged beside its chunks. Every call that ended in the window's last
    part, up to 100 ms before the death, is there; none that ended well
    before the window."""
    tag = "kill flight perfetto"
    if PB is None:
        skip(tag, "no perfetto/protobuf modules")
        return
    outdir = tempfile.mkdtemp(prefix="tprof-it-")
    logp = os.path.join(outdir, "calls.log")
    # 2.5 s: a second of calls older than the window even where the
    # start is slow (a sanitizer's).
    r = run([prog("deathlog"), "kill", str(THREADS), "2.5", logp],
            env={"TPROF_FLIGHT": "1", "TPROF_FORMAT": "perfetto"},
            outdir=outdir, timeout=120)
    eq("%s: the program's exit status" % tag, r.rc, -signal.SIGKILL)
    p = subprocess.run([CLI, "recover", outdir], capture_output=True,
                       text=True, timeout=120)
    eq("%s: tprof recover exit 0" % tag, p.returncode, 0)
    path = os.path.join(outdir, "tprof-rank0.pftrace.gz")
    try:
        d = pfseq.decode(PB, path)
    except (pfseq.Bad, OSError) as e:
        check("%s: decodes strictly (every track declared)" % tag, False,
              "%s %s" % (e, p.stderr[-1000:]))
        return
    death, calls = read_log(logp)
    got = {s["args"]["ptr"] for s in d["slices"]
           if s["name"] == "cudaMemset" and "ptr" in s["args"]}
    late = {c for c, end in calls.items()
            if death - 700000000 <= end <= death - BOUND_NS}
    lost = sorted(late - got)
    check("%s: every call of every thread in the window's last 0.6 s up "
          "to 100 ms before the death (%d calls)" % (tag, len(late)),
          not lost and len(late) > 100,
          "%d missing, first %s" % (len(lost), [hex(c) for c in lost[:5]]))
    old = {c for c, end in calls.items() if end < death - 1300000000}
    check("%s: none that ended well before the window (%d such calls)" %
          (tag, len(old)), old and not (old & got), len(old & got))
    fl = (d["meta"] or {}).get("tprof", {}).get("flight") or {}
    eq("%s: the window's trailer" % tag,
       (fl.get("seconds"), fl.get("trigger"), fl.get("left_out", 0) > 0 or
        len(old) > 0), (1.0, "killed", True))
    shutil.rmtree(outdir, ignore_errors=True)


for how in ("abort", "segv", "exit", "Exit", "kill"):
    one(how, False)
for how in ("abort", "segv", "exit", "kill"):
    one(how, True)
perfetto_kill()

done()
