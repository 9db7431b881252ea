"""The rings file (uncatchable deaths): a SIGKILLed
process's rings live in <dir>/.tprof-rings.<pid>.<n>, and `tprof recover`
cuts its .tmp at the last sync point and appends every record since from
the rings, so that every call is either recorded or counted as dropped.

progs/ringkill.cu: an "early" thread makes 500 cudaStreamSynchronize
calls and ends; three threads call cudaStreamSynchronize as fast as they
can; a paced one launches ring_tick<<<>>> every 2 ms. Each counts the
calls it started and finished in a shared file; after "ready" the test
SIGKILLs it."""
import collections
import os
import resource
import signal
import struct
import subprocess
import time

from tplib import *

FAST = 3
EARLY_CALLS = 500
REC = struct.Struct("QQQq")     # started, finished, spare, tid
NREC = FAST + 2                 # early, fast..., paced
RINGS = ".tprof-rings."
TMP = "tprof-rank0.trace.json.gz.tmp"


def counts_file(d):
    path = os.path.join(d, "counts")
    with open(path, "wb") as f:
        f.write(b"\0" * REC.size * NREC)
    return path


def read_counts(path):
    with open(path, "rb") as f:
        data = f.read()
    return [REC.unpack_from(data, i * REC.size) for i in range(NREC)]


def killed(env_extra=None, preexec=None, linger=1.0):
    """Runs ringkill until ready, lets it record for linger s, SIGKILLs
    it: (outdir, got ready, returncode, counts, stderr)."""
    outdir = tempfile.mkdtemp(prefix="tprof-it-")
    cpath = counts_file(outdir)
    e = base_env()
    e["TPROF_OUTPUT_DIR"] = outdir
    e["LD_PRELOAD"] = PRELOAD
    e.update(env_extra or {})
    p = subprocess.Popen([prog("ringkill"), cpath], env=e, preexec_fn=preexec,
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                         text=True)
    ready = p.stdout.readline().strip() == "ready"
    time.sleep(linger)
    p.send_signal(signal.SIGKILL)
    _, err = p.communicate(timeout=60)
    return outdir, ready, p.returncode, read_counts(cpath), err


def rings_files(d):
    return [f for f in os.listdir(d) if f.startswith(RINGS)]


def exact_accounting():
    outdir, ready, rc, counts, _ = killed()
    check("rings: the program got ready", ready)
    eq("rings: killed", rc, -signal.SIGKILL)
    eq("rings: the .tmp and one rings file are left",
       (sorted(f for f in listing(outdir) if not f.startswith(RINGS)),
        len(rings_files(outdir))), (["counts", TMP], 1))
    rf = rings_files(outdir)
    st = os.stat(os.path.join(outdir, rf[0])) if rf else None
    eq("rings: the rings file is the user's only (0600)",
       st and st.st_mode & 0o777, 0o600)
    p = subprocess.run([CLI, "recover", outdir], capture_output=True, text=True,
                       timeout=300)
    eq("rings recover: exit 0", p.returncode, 0)
    lines = p.stderr.splitlines()
    check("rings recover: one line, naming the records from the rings",
          len(lines) == 1 and "of them from its rings file" in lines[0],
          p.stderr)
    eq("rings recover: the trace and its summary, the rings file removed",
       listing(outdir), ["counts", "summaries/tprof-rank0.summary.json",
                         "tprof-rank0.trace.json.gz"])
    path = os.path.join(outdir, "tprof-rank0.trace.json.gz")
    if not os.path.exists(path):
        return
    tprof_check(path, "rings recover: tprof check passes")
    t = load(path)
    check("rings recover: nesting holds", nesting_ok(t))
    tp = t["tprof"]
    fr = tp.get("from_rings", {})
    xs = [e for e in t["traceEvents"] if e.get("ph") == "X"]
    from_rings = [e for e in xs if e["args"].get("from_rings")]
    eq("rings recover: from_rings.records counts the events it added",
       fr.get("records"), len(from_rings))
    check("rings recover: records came from the rings", len(from_rings) > 0,
          str(fr))
    eq("rings recover: four live rings read, none unreadable",
       (fr.get("threads"), fr.get("unreadable"), tp.get("events_lost")),
       (FAST + 1, 0, 0))
    eq("rings recover: events_recovered counts every event",
       tp["events_recovered"], len(t["traceEvents"]))
    names = {e["tid"]: e["args"] for e in t["traceEvents"]
             if e.get("ph") == "M" and e.get("name") == "thread_name"
             and "dropped" in e.get("args", {})}
    eq("rings recover: from_rings.dropped is the threads' drops",
       fr.get("dropped"), sum(a["dropped"] for a in names.values()))
    eq("rings recover: from_rings.spilled_lost is the threads' spilled "
       "records the kill took", fr.get("spilled_lost"),
       sum(a.get("spilled_lost", 0) for a in names.values()))
    twice = [k for k, c in collections.Counter(
        (e["tid"], e["ts"], e["dur"]) for e in xs).items() if c > 1]
    eq("rings recover: no call is in the trace twice", twice[:3], [])
    n = collections.Counter(e["tid"] for e in xs)
    started, finished, _, tid = counts[0]
    eq("rings recover: the thread that ended has exactly its %d calls"
       % EARLY_CALLS, (n[tid], started, finished), (EARLY_CALLS,) * 3)
    for i in range(1, NREC):
        started, finished, _, tid = counts[i]
        dropped = names.get(tid, {}).get("dropped")
        # Spilled records (in chunks of the process's memory, not of the
        # rings file) die with it: counted, one slot per call here.
        lost = names.get(tid, {}).get("spilled_lost", 0)
        got = n[tid] + (dropped or 0) + lost
        check("rings recover: thread %d: recorded + dropped + spilled "
              "and lost within [finished %d, started %d]"
              % (i, finished, started),
              dropped is not None and finished <= got <= started,
              "recorded %d dropped %s lost %d" % (n[tid], dropped, lost))
    ptid = counts[NREC - 1][3]
    launches = [e for e in xs if e["tid"] == ptid]
    eq("rings recover: the paced thread's launches name their kernel",
       collections.Counter((e["name"], e["args"].get("kernel"))
                           for e in launches),
       {("cudaLaunchKernel", "ring_tick"): len(launches)})
    check("rings recover: some named launches came from the rings",
          any(e["args"].get("from_rings") for e in launches))
    shutil.rmtree(outdir, ignore_errors=True)


exact_accounting()


def switched_off():
    outdir, ready, rc, _, err = killed({"TPROF_RING_FILE": "0"}, linger=0.3)
    check("TPROF_RING_FILE=0: the program ran", ready and rc == -signal.SIGKILL)
    eq("TPROF_RING_FILE=0: no rings file", rings_files(outdir), [])
    shutil.rmtree(outdir, ignore_errors=True)
    r = run([prog("calls")], env={"TPROF_RING_FILE": "2"})
    check("TPROF_RING_FILE=2: one error line naming the variable",
          "TPROF_RING_FILE='2' is not valid" in r.stderr, r.stderr)
    cleanup(r)


switched_off()


def file_size_limit():
    """Under ulimit -f the file is not made: growing it could raise
    SIGXFSZ; the program runs as without tprof."""
    def limit():
        resource.setrlimit(resource.RLIMIT_FSIZE, (1 << 30, 1 << 30))
    outdir, ready, rc, _, err = killed(preexec=limit, linger=0.3)
    check("ulimit -f: the program ran until killed",
          ready and rc == -signal.SIGKILL, err)
    eq("ulimit -f: no rings file, the .tmp is there",
       (rings_files(outdir), TMP in listing(outdir)), ([], True))
    shutil.rmtree(outdir, ignore_errors=True)


file_size_limit()


def normal_exit_removes():
    r = run([prog("calls")])
    eq("normal exit: the trace complete, no rings file left",
       (r.rc, rings_files(r.dir)), (0, []))
    cleanup(r)
    r = run([prog("calls")], env={"TPROF_FLIGHT": "5"})
    eq("flight mode: no rings file", (r.rc, rings_files(r.dir)), (0, []))
    cleanup(r)


normal_exit_removes()


def orphan_removed():
    """A rings file whose process is gone and left no .tmp."""
    outdir, _, _, _, _ = killed(linger=0.2)
    os.unlink(os.path.join(outdir, TMP))
    p = subprocess.run([CLI, "recover", outdir], capture_output=True, text=True)
    eq("orphan: rings file removed", rings_files(outdir), [])
    check("orphan: one note says so",
          len(p.stderr.splitlines()) == 1 and "is gone and left no trace" in
          p.stderr, p.stderr)
    shutil.rmtree(outdir, ignore_errors=True)


orphan_removed()


def cannot_write():
    """tprof recover that cannot write the recovered trace (a 64 KiB
    file-size limit, SIGXFSZ ignored: every write past it fails with
    EFBIG) says so and exits 1; the .tmp and its rings are left for a
    later try."""
    outdir, _, _, _, _ = killed(linger=0.5)

    def small():
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
        resource.setrlimit(resource.RLIMIT_FSIZE, (65536, 65536))
    p = subprocess.run([CLI, "recover", outdir], capture_output=True,
                       text=True, preexec_fn=small)
    eq("cannot write: exit 1, one line naming the trace",
       (p.returncode, len([l for l in p.stderr.splitlines()
                           if "cannot write" in l])), (1, 1))
    eq("cannot write: the .tmp and its rings file left",
       (os.path.exists(os.path.join(outdir, TMP)),
        len(rings_files(outdir))), (True, 1))
    p = subprocess.run([CLI, "recover", outdir], capture_output=True,
                       text=True)
    eq("cannot write: a second try without the limit recovers it, exit 0",
       (p.returncode, os.path.exists(os.path.join(
           outdir, "tprof-rank0.trace.json.gz"))), (0, True))
    shutil.rmtree(outdir, ignore_errors=True)


cannot_write()
done()
