"""Process lifecycle: signals, fork, exec, exit codes, ranks, processes
with nothing to record, and many threads with zero loss."""
import gzip
import json
import os
import re
import signal
import subprocess
import time

from tplib import *


def wait_ready(p):
    line = p.stdout.readline()
    return line.strip() == "ready"


def signal_case(sig, handler):
    """The program's exit status with and without tprof must match."""
    statuses = []
    outdir = tempfile.mkdtemp(prefix="tprof-it-")
    for preload in (False, True):
        e = base_env()
        e["TPROF_OUTPUT_DIR"] = outdir
        if preload:
            e["LD_PRELOAD"] = PRELOAD
        if handler and "thread" in SANITIZE:
            # The program's handler calls exit(), whose atexit handlers
            # (the CUDA runtime's, tprof's) allocate: the program's
            # choice, which TSan reports as signal-unsafe. tprof's own
            # handler (the cases without one) is checked.
            e["TSAN_OPTIONS"] += ":report_signal_unsafe=0"
        argv = [prog("lifecycle"), "loop"] + (["handler"] if handler else [])
        p = subprocess.Popen(argv, env=e, stdout=subprocess.PIPE,
                             stderr=subprocess.PIPE, text=True)
        ok = wait_ready(p)
        time.sleep(0.05)
        p.send_signal(sig)
        out, err = p.communicate(timeout=30)
        statuses.append((ok, p.returncode, out))
    label = "%s%s" % (signal.Signals(sig).name, " with own handler" if handler else "")
    eq("signal %s: same exit status as without tprof" % label,
       statuses[1][1], statuses[0][1])
    eq("signal %s: same stdout" % label, statuses[1][2], statuses[0][2])
    files = listing(outdir)
    eq("signal %s: trace and summary completed and renamed" % label, files,
       ["summaries/tprof-rank0.summary.json",
        "summaries/tprof-rank0.summary.md",
        "tprof-rank0.trace.json.gz"])
    if "tprof-rank0.trace.json.gz" in files:
        path = os.path.join(outdir, "tprof-rank0.trace.json.gz")
        t = load(path)
        n = len(xevents(t, "cudaStreamSynchronize"))
        check("signal %s: events up to the signal are there" % label, n >= 10,
              "%d events" % n)
        eq("signal %s: tprof object counts them" % label,
           t["tprof"]["events_written"], n)
        tprof_check(path, "signal %s: tprof check passes" % label)
    shutil.rmtree(outdir, ignore_errors=True)


signal_case(signal.SIGTERM, False)
signal_case(signal.SIGINT, False)
signal_case(signal.SIGHUP, False)
signal_case(signal.SIGTERM, True)

# Exit codes, including exit() from another thread.
for code in (0, 3, 42):
    r = run([prog("lifecycle"), "exit", str(code)])
    eq("exit(%d) from a thread: status preserved" % code, r.rc, code)
    eq("exit(%d): trace written" % code, r.files(), ["tprof-rank0.trace.json.gz"])
    cleanup(r)
r = run([prog("calls"), "1", "1", "all", "5"])
eq("return 5 from main: status preserved", r.rc, 5)
cleanup(r)

# fork: the child writes its own file, named -pid<PID>.
r = run([prog("lifecycle"), "fork"], timeout=60)
if "thread" in SANITIZE:
    # The run ended (no deadlock) and the files are checked below.
    skip("fork: no deadlock, both exit 0", "TSan fails a forked child that "
         "starts threads after a multi-threaded fork (exit 66, 'dup thread "
         "with used id'), which it does not support")
else:
    eq("fork: no deadlock, both exit 0", r.rc, 0)
m = re.search(r"child (\d+)", r.stdout)
child = m.group(1) if m else "?"
eq("fork: parent's and child's files", r.files(),
   sorted(["tprof-rank0.trace.json.gz",
           "tprof-rank0-pid%s.trace.json.gz" % child]))
if len(r.files()) == 2:
    tc = load(os.path.join(r.dir, "tprof-rank0-pid%s.trace.json.gz" % child))
    names = sorted(set(e["name"] for e in xevents(tc)))
    eq("fork: child's file holds exactly the child's calls",
       (names, len(xevents(tc))), (["cudaFree"], 3))
    eq("fork: child's events carry the child's pid",
       set(e["pid"] for e in xevents(tc)), {int(child)})
    tp = load(os.path.join(r.dir, "tprof-rank0.trace.json.gz"))
    eq("fork: parent's file has its mallocs and memsets",
       (len(xevents(tp, "cudaMalloc")), len(xevents(tp, "cudaMemset"))), (5, 2))
    check("fork: parent's file has no child call", not xevents(tp, "cudaFree"))
    # The writer's extensions (the capture schedule's and NVTX's trailer
    # keys) are the child's too: its writer starts empty, not without them.
    eq("fork: the child's trailer has the same extension keys as the "
       "parent's", sorted(k for k in ("capture", "nvtx") if k in tc["tprof"]),
       sorted(k for k in ("capture", "nvtx") if k in tp["tprof"]))
    check("fork: the parent's spinner thread kept recording",
          len(xevents(tp, "cudaDeviceSynchronize")) > 0)
    for f in r.files():
        tprof_check(os.path.join(r.dir, f), "fork: %s passes tprof check" % f)
eq("fork: two exit lines on stderr", len(r.lines("tprof: wrote")), 2)
cleanup(r)

# exec: the trace is completed before the image is replaced, and the new
# program (same pid, same run) writes its own file.
r = run([prog("lifecycle"), "exec"])
eq("exec: new program ran", (r.rc, r.stdout), (0, "exec2 done\n"))
files = r.files()
eq("exec: two files", len(files), 2)
if len(files) == 2:
    t1 = load(os.path.join(r.dir, "tprof-rank0.trace.json.gz"))
    other = [f for f in files if "-pid" in f][0]
    t2 = load(os.path.join(r.dir, other))
    eq("exec: first image's calls", len(xevents(t1, "cudaMalloc")), 2)
    eq("exec: second image's calls", len(xevents(t2, "cudaFree")), 4)
    eq("exec: same run id across exec", t1["tprof"]["run_id"],
       t2["tprof"]["run_id"])
cleanup(r)

# Ranks.
r = run([prog("calls"), "1", "1"], env={"RANK": "3", "WORLD_SIZE": "8"})
eq("RANK=3: file name", r.files(), ["tprof-rank3.trace.json.gz"])
if r.files():
    path = os.path.join(r.dir, r.files()[0])
    t = load(path)
    eq("RANK=3: distributedInfo", (t["distributedInfo"]["rank"],
                                   t["distributedInfo"]["world_size"]), (3, 8))
    check("RANK=3: HTA's regex finds the rank",
          re.search(r'"rank":\s+(\d+)', raw(path)).group(1) == "3")
cleanup(r)
r = run([prog("calls"), "1", "1"], env={"TPROF_RANK": "5", "RANK": "3",
                                        "TPROF_NAME": "job"})
eq("TPROF_RANK overrides RANK, TPROF_NAME prefixes", r.files(),
   ["job-rank5.trace.json.gz"])
cleanup(r)
r = run([prog("calls"), "1", "1"], env={"SLURM_PROCID": "6", "SLURM_NTASKS": "7"})
eq("Slurm rank", r.files(), ["tprof-rank6.trace.json.gz"])
cleanup(r)

# Processes that make no CUDA call write nothing.
r = run(["bash", "-c", "echo hi; true"])
eq("no CUDA calls: no file", r.files(), [])
eq("no CUDA calls: output unchanged", (r.rc, r.stdout, r.stderr), (0, "hi\n", ""))
cleanup(r)

# RTLD_LOCAL: dlsym(RTLD_NEXT) finds nothing; the fallback finds it.
r = run([prog("dlopen_local"), prog("libuser.so"), "3"])
eq("RTLD_LOCAL: real cudaMalloc reached", r.stdout, "user_alloc -> 35\n")
if r.files():
    t = load(os.path.join(r.dir, r.files()[0]))
    eq("RTLD_LOCAL: calls recorded", len(xevents(t, "cudaMalloc")), 3)
else:
    check("RTLD_LOCAL: calls recorded", False, "no file")
cleanup(r)

# A hooked symbol with no libcudart loaded at all.
r = run([prog("dlopen_local"), "missing"])
eq("missing symbol: 'not initialized' returned, no crash",
   (r.rc, r.stdout), (0, "cudaMalloc -> 3\ncudaMalloc -> 3\n"))
errs = r.lines("tprof: error:")
eq("missing symbol: one stderr line", len(errs), 1)
check("missing symbol: the line names the symbol",
      errs and "cudaMalloc" in errs[0], str(errs))
cleanup(r)

# 16 threads x 100k calls: zero loss at the default ring size.
r = run([prog("calls"), "16", "100000", "launch"], timeout=300)
eq("16x100k: program ok", r.rc, 0)
path = os.path.join(r.dir, "tprof-rank0.trace.json.gz")
n = 0
tail = []
with gzip.open(path, "rt") as f:
    for line in f:
        if line.startswith('{"ph":"X"'):
            n += 1
        elif not line.startswith('{"ph":"M"'):
            tail.append(line)
eq("16x100k: every call is in the trace", n, 1600000)
m = re.search(r'"events_written": (\d+), "events_dropped": (\d+)', "".join(tail))
eq("16x100k: tprof object says 1.6M written, 0 dropped",
   m and (int(m.group(1)), int(m.group(2))), (1600000, 0))
tprof_check(path, "16x100k: tprof check passes")
cleanup(r)

# A tiny ring without a spill pool drops, counts exactly, never blocks.
r = run([prog("calls"), "1", "300000", "launch"],
        env={"TPROF_BUFFER_MB": "1", "TPROF_SPILL_MB": "0"})
t = load(os.path.join(r.dir, "tprof-rank0.trace.json.gz"))
written = len(xevents(t))
dropped = t["tprof"]["events_dropped"]
check("tiny ring: some events dropped", dropped > 0, "none dropped")
eq("tiny ring: written + dropped = calls", written + dropped, 300000)
eq("tiny ring: per-thread drop count", t["tprof"]["threads"][0]["dropped"], dropped)
check("tiny ring: exit line reports the drops",
      any("%d dropped" % dropped in l for l in r.lines()), str(r.lines()))
cleanup(r)

# The same burst with the default spill pool: what the tiny ring cannot
# hold is spilled, nothing dropped.
r = run([prog("calls"), "1", "300000", "launch"], env={"TPROF_BUFFER_MB": "1"})
t = load(os.path.join(r.dir, "tprof-rank0.trace.json.gz"))
eq("tiny ring, spill pool: every call written, none dropped",
   (len(xevents(t)), t["tprof"]["events_dropped"]), (300000, 0))
check("tiny ring, spill pool: chunks were taken",
      t["tprof"].get("spill", {}).get("taken", 0) > 0,
      str(t["tprof"].get("spill")))
tprof_check(os.path.join(r.dir, "tprof-rank0.trace.json.gz"),
            "tiny ring, spill pool: tprof check passes")
cleanup(r)
done()
