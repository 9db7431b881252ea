"""Deaths that skip the normal exit path: a crash
signal or _exit completes and renames the trace, the process dies exactly
as it would without tprof, and what a SIGKILLed process left is made a
valid trace by `tprof recover` (and by `tprof report` on its directory).

progs/crash.c: an "early" thread makes 500 calls and ends; three workers
call until the process dies, counting the calls they started and finished
in a shared file, which main snapshots just before it dies."""
import os
import resource
import signal
import struct
import subprocess
import time

from tplib import *

EARLY_CALLS = 500
WORKERS = 3
REC = struct.Struct("QQQq")     # started, finished, snap_finished, tid


def counts_file(d):
    path = os.path.join(d, "counts")
    with open(path, "wb") as f:
        f.write(b"\0" * REC.size * (WORKERS + 1))
    return path


def read_counts(path):
    with open(path, "rb") as f:
        data = f.read()
    return [REC.unpack_from(data, i * REC.size) for i in range(WORKERS + 1)]


def spawn(argv, env, cwd, out, err):
    """fork/exec by hand: the raw wait status (with its core-dump flag) is
    what the test compares, and cores go to cwd."""
    pid = os.fork()
    if pid == 0:
        try:
            os.chdir(cwd)
            resource.setrlimit(resource.RLIMIT_CORE, (resource.RLIM_INFINITY,
                                                      resource.RLIM_INFINITY))
            os.dup2(out, 1)
            os.dup2(err, 2)
            os.execve(argv[0], argv, env)
        finally:
            os._exit(127)
    return pid


def run_raw(argv, preload, outdir):
    """(raw wait status, stdout, stderr) of argv, with or without tprof."""
    e = base_env()
    e["TPROF_OUTPUT_DIR"] = outdir
    if preload:
        e["LD_PRELOAD"] = PRELOAD
    cwd = tempfile.mkdtemp(prefix="tprof-core-")
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        pid = spawn(argv, e, cwd, out.fileno(), err.fileno())
        _, status = os.waitpid(pid, 0)
        out.seek(0)
        err.seek(0)
        res = (status, out.read().decode(), err.read().decode())
    shutil.rmtree(cwd, ignore_errors=True)
    return res


# TSan's and ASan's runtimes set RLIMIT_CORE to 0 (disable_coredump, on
# by default on 64-bit for their terabytes of shadow memory).
NO_CORE = "thread" in SANITIZE or "address" in SANITIZE


def describe(status):
    """The wait status in words. Under TSan or ASan the runtime sets
    RLIMIT_CORE to 0 (NO_CORE): whether a core was dumped is then the
    sanitizer's doing, compared only in runs without one."""
    if os.WIFSIGNALED(status):
        core = os.WCOREDUMP(status) and not NO_CORE
        return "signal %d%s" % (os.WTERMSIG(status),
                                " (core dumped)" if core else "")
    return "exit %d" % os.WEXITSTATUS(status)


def per_thread(trace, counts):
    n = {}
    for e in xevents(trace, "cudaStreamSynchronize"):
        n[e["tid"]] = n.get(e["tid"], 0) + 1
    return [n.get(c[3], 0) for c in counts]


def check_counts(label, trace, counts, lower_is_snap):
    got = per_thread(trace, counts)
    eq("%s: the thread that ended has exactly its %d calls" % (label, EARLY_CALLS),
       got[0], EARLY_CALLS)
    for i in range(1, WORKERS + 1):
        started, finished, snap, tid = counts[i]
        lo = snap if lower_is_snap else 0
        check("%s: worker %d recorded within [%d, %d]" % (label, i, lo, started),
              lo <= got[i] <= started, "recorded %d" % got[i])


def crash_case(mode, want_sig, want_out, ended_by):
    outdir = tempfile.mkdtemp(prefix="tprof-it-")
    bare = tempfile.mkdtemp(prefix="tprof-it-")
    argv = [prog("crash"), mode, counts_file(bare)]
    st0, out0, _ = run_raw(argv, False, bare)
    cpath = counts_file(outdir)
    st1, out1, err1 = run_raw([prog("crash"), mode, cpath], True, outdir)
    eq("%s: same wait status as without tprof (%s)" % (mode, describe(st0)),
       describe(st1), describe(st0))
    if NO_CORE:		# no core under TSan or ASan: see describe()
        want_sig = want_sig.replace(" (core dumped)", "")
    eq("%s: the status is the program's own" % mode, describe(st0), want_sig)
    eq("%s: same stdout" % mode, out1, out0)
    eq("%s: stdout is the program's" % mode, out1, want_out)
    names = listing(outdir)
    eq("%s: trace and summaries completed and renamed" % mode, names,
       ["counts", "summaries/tprof-rank0.summary.json",
        "summaries/tprof-rank0.summary.md", "tprof-rank0.trace.json.gz"])
    path = os.path.join(outdir, "tprof-rank0.trace.json.gz")
    if os.path.exists(path):
        t = load(path)
        tprof_check(path, "%s: tprof check passes" % mode)
        eq("%s: the trailer names the cause" % mode,
           t["tprof"].get("ended_by"), ended_by)
        eq("%s: events_written counts the events" % mode,
           t["tprof"]["events_written"], len(xevents(t, "cudaStreamSynchronize")))
        check_counts(mode, t, read_counts(cpath), True)
    lines = [l for l in err1.splitlines() if l.startswith("tprof: wrote")]
    eq("%s: one 'wrote' line on stderr" % mode, len(lines), 1)
    shutil.rmtree(outdir, ignore_errors=True)
    shutil.rmtree(bare, ignore_errors=True)


crash_case("abort", "signal %d (core dumped)" % signal.SIGABRT, "", "SIGABRT")
crash_case("segv", "signal %d (core dumped)" % signal.SIGSEGV, "", "SIGSEGV")
crash_case("segv-handler", "signal %d (core dumped)" % signal.SIGSEGV,
           "own handler\n", "SIGSEGV")
crash_case("exit3", "exit 3", "", "_exit")


def python_faulthandler():
    """Python's faulthandler chains to the disposition it found: the
    process still dies by SIGSEGV, after faulthandler's report."""
    code = "import ctypes; ctypes.string_at(0)"
    res = []
    for preload in (False, True):
        d = tempfile.mkdtemp(prefix="tprof-it-")
        st, out, err = run_raw([sys.executable, "-X", "faulthandler", "-c", code],
                               preload, d)
        res.append((describe(st), "Fatal Python error: Segmentation fault" in err))
        shutil.rmtree(d, ignore_errors=True)
    eq("faulthandler: same status and report as without tprof", res[1], res[0])
    check("faulthandler: it reported the fault", res[0][1], str(res[0]))


python_faulthandler()


def start_kill(outdir, env=None):
    """Starts `crash kill` traced into outdir; the process and the path of
    its counters."""
    cpath = counts_file(outdir)
    e = base_env()
    e.update(env or {})
    e["TPROF_OUTPUT_DIR"] = outdir
    e["LD_PRELOAD"] = PRELOAD
    p = subprocess.Popen([prog("crash"), "kill", cpath], env=e,
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    return p, cpath


def killed_run(outdir, env=None):
    """Runs crash kill until it is ready, SIGKILLs it; its counters."""
    p, cpath = start_kill(outdir, env)
    ready = p.stdout.readline().strip() == "ready"
    # The early thread ended 1.6 s before "ready"; 1.5 s more leaves the
    # writer (every 50 ms) and its sync (every 1 s) room on a loaded
    # machine.
    time.sleep(1.5)
    p.send_signal(signal.SIGKILL)
    p.communicate(timeout=30)
    return ready, p.returncode, read_counts(cpath)


def kill_case():
    outdir = tempfile.mkdtemp(prefix="tprof-it-")
    ready, rc, counts = killed_run(outdir)
    check("SIGKILL: the program got ready", ready)
    eq("SIGKILL: killed", rc, -signal.SIGKILL)
    eq("SIGKILL: only the .tmp and the rings file are left",
       [f for f in listing(outdir) if not f.startswith(".tprof-rings.")],
       ["counts", "tprof-rank0.trace.json.gz.tmp"])
    eq("SIGKILL: one rings file",
       len([f for f in listing(outdir) if f.startswith(".tprof-rings.")]), 1)
    p = subprocess.run([CLI, "recover", outdir], capture_output=True, text=True)
    eq("recover: exit 0", p.returncode, 0)
    path = os.path.join(outdir, "tprof-rank0.trace.json.gz")
    lines = p.stderr.splitlines()
    check("recover: one line names the recovered trace",
          len(lines) == 1 and lines[0].startswith("tprof: recovered " + path),
          p.stderr)
    eq("recover: the trace and its summary, no .tmp", listing(outdir),
       ["counts", "summaries/tprof-rank0.summary.json",
        "tprof-rank0.trace.json.gz"])
    if not os.path.exists(path):
        return
    t = load(path)
    tprof_check(path, "recover: tprof check passes")
    eq("recover: the trailer says recovered", t["tprof"].get("recovered"), True)
    eq("recover: events_recovered counts the events",
       t["tprof"]["events_recovered"], len(t["traceEvents"]))
    eq("recover: the rank is the process's own", t["distributedInfo"],
       {"rank": 0, "world_size": 1})
    check("recover: nesting holds", nesting_ok(t))
    check_counts("recover", t, counts, False)
    # With the rings file, nothing recorded is lost: each worker's
    # recorded + dropped (its thread_name's count) is at least what it
    # finished.
    got = per_thread(t, counts)
    drops = {e["tid"]: e["args"]["dropped"] for e in t["traceEvents"]
             if e.get("ph") == "M" and e.get("name") == "thread_name"
             and "dropped" in e.get("args", {})}
    for i in range(1, WORKERS + 1):
        started, finished, _, tid = counts[i]
        check("recover: worker %d recorded + dropped within [finished %d, "
              "started %d]" % (i, finished, started),
              tid in drops and finished <= got[i] + drops[tid] <= started,
              "recorded %d dropped %s" % (got[i], drops.get(tid)))
    s = load(os.path.join(outdir, "summaries", "tprof-rank0.summary.json"))
    eq("recover: the summary counts the recovered calls",
       s["calls"][0]["count"] if s.get("calls") else None,
       len(xevents(t, "cudaStreamSynchronize")))
    p = subprocess.run([CLI, "recover", outdir], capture_output=True, text=True)
    eq("recover again: nothing to do, one line says so",
       (p.returncode, p.stderr),
       (0, "tprof: %s: nothing to recover (no .tmp trace or rings file a "
        "killed process left)\n" % outdir))
    shutil.rmtree(outdir, ignore_errors=True)


kill_case()


def kill_level6():
    """The same kill with TPROF_GZIP_LEVEL=6 (zlib's level 6 in the
    writer): recover cuts the stream at its last sync point as at level
    1, and the trace holds what the workers finished."""
    outdir = tempfile.mkdtemp(prefix="tprof-it-")
    ready, rc, counts = killed_run(outdir, {"TPROF_GZIP_LEVEL": "6"})
    eq("level 6, SIGKILL: ready, killed", (ready, rc), (True, -signal.SIGKILL))
    p = subprocess.run([CLI, "recover", outdir], capture_output=True, text=True)
    path = os.path.join(outdir, "tprof-rank0.trace.json.gz")
    eq("level 6, recover: exit 0, the trace", (p.returncode,
                                              os.path.exists(path)), (0, True))
    if os.path.exists(path):
        t = load(path)
        tprof_check(path, "level 6, recover: tprof check passes")
        check("level 6, recover: nesting holds", nesting_ok(t))
        check_counts("level 6, recover", t, counts, False)
    shutil.rmtree(outdir, ignore_errors=True)


kill_level6()


def report_recovers():
    outdir = tempfile.mkdtemp(prefix="tprof-it-")
    killed_run(outdir)
    p = subprocess.run([CLI, "report", outdir], capture_output=True, text=True)
    eq("report DIR: exit 0", p.returncode, 0)
    check("report DIR: it recovered the killed trace first",
          "tprof: recovered " in p.stderr, p.stderr)
    check("report DIR: the report has the rank",
          "| 0 | " in p.stdout, p.stdout[:400])
    eq("report DIR: no .tmp left", [f for f in listing(outdir) if f.endswith(".tmp")], [])
    shutil.rmtree(outdir, ignore_errors=True)


report_recovers()


def live_tmp_left():
    """A .tmp whose process is still running is not touched."""
    outdir = tempfile.mkdtemp(prefix="tprof-it-")
    p, _ = start_kill(outdir)
    p.stdout.readline()
    r = subprocess.run([CLI, "recover", outdir], capture_output=True, text=True)
    check("recover: a live process's .tmp is left, with one line",
          "is still running; left as it is" in r.stderr and
          "tprof-rank0.trace.json.gz.tmp" in listing(outdir), r.stderr)
    p.send_signal(signal.SIGKILL)
    p.communicate(timeout=30)
    shutil.rmtree(outdir, ignore_errors=True)


live_tmp_left()


def dead_pid():
    """A pid that is not running: a child already reaped."""
    p = subprocess.Popen(["true"])
    p.wait()
    return p.pid


def gzip_cut(path, comment, text, cut_after, mtime=0):
    """A gzip file as a killed writer leaves it: header with comment, a raw
    deflate stream synced after the first cut_after bytes of text, then
    the rest compressed but neither flushed nor ended."""
    import zlib
    head = (bytes([0x1f, 0x8b, 8, 0x10]) + struct.pack("<I", mtime) +
            bytes([0, 3]) + comment.encode() + b"\0")
    z = zlib.compressobj(1, zlib.DEFLATED, -15)
    body = z.compress(text[:cut_after]) + z.flush(zlib.Z_SYNC_FLUSH)
    body += z.compress(text[cut_after:])
    with open(path, "wb") as f:
        f.write(head + body)


def crafted_cut():
    """find_cut: strings holding brackets and braces, and an event cut in
    the middle of a string; rank and world from the gzip comment."""
    outdir = tempfile.mkdtemp(prefix="tprof-it-")
    ev = ('{"ph":"X","cat":"c","name":"a]}{[\\\"x","pid":1,"tid":1,'
          '"ts":%d.000,"dur":1.000,"args":{"s":"},]"}}')
    text = ('{"schemaVersion": 1,\n"traceName": "t-rank2",\n'
            '"displayTimeUnit": "ms",\n"baseTimeNanoseconds": 0,\n'
            '"traceEvents": [\n' + ",\n".join(ev % i for i in range(3)) +
            ',\n{"ph":"X","name":"cut ]} he').encode()
    pid = dead_pid()
    gzip_cut(os.path.join(outdir, "t-rank2.trace.json.gz.tmp"),
             "tprof run=r9 pid=%d rank=2 world=4" % pid, text, len(text) - 5)
    p = subprocess.run([CLI, "recover", outdir], capture_output=True, text=True)
    path = os.path.join(outdir, "t-rank2.trace.json.gz")
    eq("recover crafted: the trace and its summary", listing(outdir),
       ["summaries/t-rank2.summary.json", "t-rank2.trace.json.gz"])
    if os.path.exists(path):
        t = load(path)
        eq("recover crafted: the three whole events, strings intact",
           [e["name"] for e in t["traceEvents"]], ['a]}{["x'] * 3)
        eq("recover crafted: rank and world from the header",
           t["distributedInfo"], {"rank": 2, "world_size": 4})
        eq("recover crafted: the counts", (t["tprof"]["events_recovered"],
           t["tprof"]["pid"], t["tprof"]["run_id"]), (3, pid, "r9"))
        tprof_check(path, "recover crafted: tprof check passes")
    # Nothing but the header: nothing to recover, the .tmp is removed.
    gzip_cut(os.path.join(outdir, "e-rank0.trace.json.gz.tmp"),
             "tprof run=r9 pid=%d rank=0 world=1" % pid,
             b'{"schemaVersion": 1,\n"trace', 10)
    p = subprocess.run([CLI, "recover", outdir], capture_output=True, text=True)
    check("recover: a .tmp with no event is removed, with one line",
          "died before it wrote any event" in p.stderr and
          "e-rank0.trace.json.gz.tmp" not in listing(outdir), p.stderr)
    # A complete stream whose process died before the rename: renamed as
    # it is, trailer and all.
    import zlib
    whole = text[:text.rindex(b",\n{")] + b'\n],\n"tprof": {"mine": 1}}\n'
    z = zlib.compressobj(1, zlib.DEFLATED, -15)
    body = z.compress(whole) + z.flush()
    head = bytes([0x1f, 0x8b, 8, 0x10, 0, 0, 0, 0, 0, 3])
    head += ("tprof run=r9 pid=%d rank=1 world=2" % pid).encode() + b"\0"
    tail = struct.pack("<II", zlib.crc32(whole), len(whole))
    with open(os.path.join(outdir, "w-rank1.trace.json.gz.tmp"), "wb") as f:
        f.write(head + body + tail)
    p = subprocess.run([CLI, "recover", outdir], capture_output=True, text=True)
    wpath = os.path.join(outdir, "w-rank1.trace.json.gz")
    check("recover: a complete .tmp is renamed as it is",
          os.path.exists(wpath) and raw(wpath) == whole.decode() and
          "complete, renamed" in p.stderr, p.stderr)
    shutil.rmtree(outdir, ignore_errors=True)


crafted_cut()


def pid_reused():
    """The writer's pid now belongs to a process that started after the
    file was made (this test, for a file "made" in 2001): it is gone."""
    outdir = tempfile.mkdtemp(prefix="tprof-it-")
    text = (b'{"schemaVersion": 1,\n"traceEvents": [\n{"ph":"X","name":"a",'
            b'"pid":1,"tid":1,"ts":1.000,"dur":1.000}')
    gzip_cut(os.path.join(outdir, "r-rank0.trace.json.gz.tmp"),
             "tprof run=r8 pid=%d rank=0 world=1" % os.getpid(), text,
             len(text), mtime=1000000000)
    p = subprocess.run([CLI, "recover", outdir], capture_output=True, text=True)
    check("recover: a pid reused by a newer process does not keep the .tmp",
          listing(outdir) == ["r-rank0.trace.json.gz",
                              "summaries/r-rank0.summary.json"], p.stderr)
    shutil.rmtree(outdir, ignore_errors=True)


pid_reused()


def crash_write_fails():
    """abort() while the trace cannot be written (RLIMIT_FSIZE, SIGXFSZ
    ignored as a shell does): the program still dies by SIGABRT."""
    outdir = tempfile.mkdtemp(prefix="tprof-it-")
    cpath = counts_file(outdir)
    e = base_env()
    e["TPROF_OUTPUT_DIR"] = outdir
    e["LD_PRELOAD"] = PRELOAD

    def limit():
        resource.setrlimit(resource.RLIMIT_FSIZE, (4096, 4096))
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
    p = subprocess.run([prog("crash"), "abort", cpath], env=e, capture_output=True,
                       text=True, preexec_fn=limit, timeout=60)
    eq("abort with the disk full: still dies by SIGABRT", p.returncode,
       -signal.SIGABRT)
    lines = [l for l in p.stderr.splitlines() if l.startswith("tprof: error:")]
    check("abort with the disk full: one tprof error line naming the cause",
          len(lines) == 1 and "File too large" in lines[0], p.stderr)
    shutil.rmtree(outdir, ignore_errors=True)


if "thread" in SANITIZE:
    skip("abort with the disk full",
         "under RLIMIT_FSIZE TSan's runtime takes SIGBUS in its own shadow "
         "memory (__tsan::MemoryAccessRange)")
else:
    crash_write_fails()
done()
