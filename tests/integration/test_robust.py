"""Never hurt the program, never lose the trace (issue 17): quick versions
of the fault-injection runs (make test-stress runs the long ones, with
TPROF_STRESS=1): thread churn with an RSS bound, a program that closes and
dup2s over every descriptor, bursts that fill a ring while the writer is
idle, SIGTERM while many threads record."""
import os
import signal
import subprocess
import time

from tplib import *

STRESS = os.environ.get("TPROF_STRESS") == "1"
ROBUST = prog("robust")


def trace_of(r):
    path = os.path.join(r.dir, "tprof-rank0.trace.json.gz")
    return load(path) if os.path.exists(path) else None


def churn():
    """Memory follows the live threads, not the ended ones: 16 at a time,
    6 calls each (before the fix: 1.4 GB at 2000 threads, 23 GB and the
    OOM killer at 100k)."""
    n = 100000 if STRESS else 2000
    r = run([ROBUST, "churn", str(n), "16", "6"], timeout=600)
    eq("churn %d threads: exit status" % n, r.rc, 0)
    kb = int(r.stdout.split()[1]) if r.stdout.startswith("hwm_kb") else -1
    if "thread" in SANITIZE:
        # TSan's shadow of every thread's stack is resident memory too.
        skip("churn %d threads: peak RSS under 64 MiB" % n,
             "TSan's own memory counts in the RSS and varies from run to "
             "run (%d KiB here)" % kb)
    else:
        check("churn %d threads: peak RSS under 64 MiB" % n, 0 < kb < 65536,
              "%d KiB" % kb)
    t = trace_of(r)
    if not check("churn: trace written", t is not None, r.stderr):
        return
    calls = n * 6 + 1
    eq("churn: every call recorded", len(xevents(t, "cudaStreamSynchronize")),
       calls)
    eq("churn: totals exact", (t["tprof"]["events_written"],
                               t["tprof"]["events_dropped"]), (calls, 0))
    cleanup(r)


def fds():
    """The program closes every descriptor and dup2s its own file over
    every number: tprof must not write into it, and must not lose the
    trace (before the fix: a stop byte in the program's file, a 10 s hang
    at exit and no trace)."""
    outdir = tempfile.mkdtemp(prefix="tprof-it-")
    own = os.path.join(outdir, "own.txt")
    t0 = time.time()
    r = run([ROBUST, "fds", "1000", own], outdir=outdir)
    took = time.time() - t0
    eq("fds: exit status", r.rc, 0)
    with open(own, "rb") as f:
        eq("fds: the program's file holds only what it wrote", f.read(),
           b"the program's own line\n")
    check("fds: no wait at exit", took < 5, "%.1f s" % took)
    t = trace_of(r)
    if check("fds: trace completed and renamed", t is not None,
             " ".join(r.all_files()) + r.stderr):
        eq("fds: calls before and after the program's dup2s",
           len(xevents(t, "cudaStreamSynchronize")), 2000)
        tprof_check(os.path.join(r.dir, "tprof-rank0.trace.json.gz"),
                    "fds: tprof check passes")
    eq("fds: no error line", [l for l in r.lines() if "error" in l], [])
    cleanup(r)


def burst():
    """A ring that fills within one writer cycle wakes the writer: at an
    offered rate well below the writer's throughput nothing is dropped
    (before the fix: 69% of 400k calls at 500k/s with a 1 MiB ring)."""
    n = 300000
    r = run([ROBUST, "burst", str(n), "300000"],
            env={"TPROF_BUFFER_MB": "1"})
    eq("burst: exit status", r.rc, 0)
    t = trace_of(r)
    if not check("burst: trace written", t is not None, r.stderr):
        return
    w, d = t["tprof"]["events_written"], t["tprof"]["events_dropped"]
    eq("burst: written + dropped = calls", w + d, n + 1)
    if "thread" in SANITIZE:
        # A throughput bound: TSan slows the writer about tenfold, below
        # the offered 300k calls/s.
        skip("burst: at most 1% dropped at 300k calls/s with a 1 MiB ring",
             "TSan slows the writer below the offered rate (%d dropped)" % d)
    else:
        check("burst: at most 1% dropped at 300k calls/s with a 1 MiB ring",
              d <= (n + 1) // 100, "%d dropped" % d)
    cleanup(r)


def term(threads):
    """SIGTERM while many threads record: the trace up to the signal is
    completed and renamed, and the exit status is the signal's (before the
    fix: lost without a word in most runs at 16 threads and more)."""
    outdir = tempfile.mkdtemp(prefix="tprof-it-")
    e = base_env()
    e["TPROF_OUTPUT_DIR"] = outdir
    e["LD_PRELOAD"] = PRELOAD
    p = subprocess.Popen([ROBUST, "term", str(threads)], env=e,
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                         text=True)
    ready = p.stdout.readline().strip() == "ready"
    time.sleep(0.5)
    p.send_signal(signal.SIGTERM)
    label = "SIGTERM at %d threads" % threads
    if "thread" in SANITIZE:
        # The half second records ~400k events, which TSan's writer
        # takes a minute or more to write on a loaded machine: the 120 s
        # bound is not checked, the trace still is.
        skip(label + ": done within 120 s", "TSan writes about ten times "
             "slower; waited up to 900 s")
        out, err = p.communicate(timeout=900)
    else:
        out, err = p.communicate(timeout=120)
    check(label + ": ready", ready, err)
    eq(label + ": killed by SIGTERM", p.returncode, -signal.SIGTERM)
    files = sorted(os.listdir(outdir))
    path = os.path.join(outdir, "tprof-rank0.trace.json.gz")
    if check(label + ": trace completed and renamed", os.path.exists(path),
             "%s %s" % (files, err)):
        t = load(path)
        n = len(xevents(t, "cudaStreamSynchronize"))
        check(label + ": events recorded", n > 1000, "%d" % n)
        eq(label + ": all counted", t["tprof"]["events_written"], n)
    eq(label + ": no error line",
       [l for l in err.splitlines() if l.startswith("tprof: error")], [])
    shutil.rmtree(outdir, ignore_errors=True)


def shared_dir():
    """Someone who can write to the output directory plants a junk
    <name>-rank0 .tmp (forcing the -pid name) and links at the names the
    process will use: nothing is written through them (before the fix the
    victim was truncated and overwritten with the trace and summary)."""
    outdir = tempfile.mkdtemp(prefix="tprof-it-")
    victim = os.path.join(tempfile.mkdtemp(prefix="tprof-victim-"), "v")
    with open(victim, "w") as f:
        f.write("victim\n")
    with open(os.path.join(outdir, "tprof-rank0.trace.json.gz.tmp"), "w") as f:
        f.write("junk")
    plant = " ".join("ln -s %s %s/tprof-rank0-pid$$%s;" % (victim, outdir, x)
                     for x in (".trace.json.gz.tmp", ".summary.json.tmp.$$",
                               ".summary.md.tmp.$$"))
    r = run(["sh", "-c", plant + " exec %s fds 10 /dev/null" % ROBUST],
            outdir=outdir, env={"TPROF_SUMMARY": None})
    eq("shared dir: exit status", r.rc, 0)
    with open(victim, "rb") as f:
        eq("shared dir: the links' target is untouched", f.read()[:20],
           b"victim\n")
    traces = [f for f in r.all_files() if f.endswith(".trace.json.gz")]
    eq("shared dir: the trace is written under the -pid name",
       len(traces) == 1 and "-pid" in traces[0], True)
    sums = [f for f in r.all_files() if f.endswith((".summary.json",
                                                     ".summary.md"))]
    eq("shared dir: both summaries written as regular files",
       [os.path.islink(os.path.join(outdir, f)) for f in sums],
       [False, False])
    cleanup(r)
    shutil.rmtree(os.path.dirname(victim), ignore_errors=True)

    base = tempfile.mkdtemp(prefix="tprof-it-")
    sub = os.path.join(base, "a", "b")
    r = run([ROBUST, "fds", "10", "/dev/null"], outdir=sub,
            preexec_fn=lambda: os.umask(0))
    modes = [os.stat(os.path.join(base, d)).st_mode & 0o777
             for d in ("a", "a/b")]
    eq("umask 0: directories tprof makes are not world-writable",
       [m & 0o002 for m in modes], [0, 0])
    shutil.rmtree(base, ignore_errors=True)


def cli_outputs():
    """tprof merge -o and report --html write through a FIFO (as they
    would to /dev/stdout) and refuse a link to a regular file: never
    replace either with a regular file."""
    r = run([ROBUST, "fds", "10", "/dev/null"])
    trace = os.path.join(r.dir, "tprof-rank0.trace.json.gz")
    work = tempfile.mkdtemp(prefix="tprof-it-")
    fifo = os.path.join(work, "fifo")
    os.mkfifo(fifo)
    for what, argv in (("merge -o", lambda o: [CLI, "merge", trace, "-o", o]),
                       ("report --html",
                        lambda o: [CLI, "report", "--html", o, trace])):
        reader = subprocess.Popen(["cat", fifo], stdout=subprocess.PIPE)
        try:
            p = subprocess.run(argv(fifo), capture_output=True, timeout=60)
        finally:
            if p_open(reader):	# the CLI never opened it: let cat go
                with open(fifo, "wb"):
                    pass
        got = reader.communicate(timeout=60)[0]
        eq("%s FIFO: exit status" % what, p.returncode, 0)
        check("%s FIFO: still a FIFO" % what,
              stat_kind(fifo) == "fifo", stat_kind(fifo))
        check("%s FIFO: the output went through it" % what, len(got) > 100,
              "%d bytes" % len(got))
        target = os.path.join(work, "target")
        link = os.path.join(work, "link")
        with open(target, "w") as f:
            f.write("mine\n")
        if os.path.lexists(link):
            os.unlink(link)
        os.symlink(target, link)
        p = subprocess.run(argv(link), capture_output=True, text=True,
                           timeout=60)
        eq("%s link: refused" % what, p.returncode, 1)
        check("%s link: still a link" % what, os.path.islink(link), "")
        with open(target) as f:
            eq("%s link: target untouched" % what, f.read(), "mine\n")
        lines = [l for l in p.stderr.splitlines() if l.startswith("tprof")]
        check("%s link: one line naming the link" % what,
              len(lines) == 1 and "symbolic link" in lines[0], p.stderr)
    shutil.rmtree(work, ignore_errors=True)
    cleanup(r)


def p_open(p):
    time.sleep(0.1)
    return p.poll() is None


def stat_kind(path):
    import stat
    m = os.lstat(path).st_mode
    return "fifo" if stat.S_ISFIFO(m) else "link" if stat.S_ISLNK(m) else \
        "file" if stat.S_ISREG(m) else "other"


churn()
shared_dir()
cli_outputs()
fds()
burst()
term(16)
if STRESS:
    term(64)
done()
