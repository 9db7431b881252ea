"""tprof check and tprof report within a fixed memory budget.

What outlives an event (check: X slices and flow events; report: the GPU
analyses' records, joins, delays and busy intervals) goes through an
external sort within $TPROF_CLI_MEM_BUDGET, spilling sorted runs to an
unlinked temporary file in $TMPDIR past it (docs/design/memory.md).

1. The same answers whatever the budget: on small traces with known
   contents (Kineto fixtures with every quirk, the same events shuffled,
   a tprof trace of a program run under the preload, a trace out of time
   order, a trace with more problems than check prints, a trace with
   repeated correlation ids whose join is worked out by hand), check's
   output and report --json are byte for byte the same with the default
   budget (sorted in memory) and with 1 KiB (dozens of runs merged).
2. Memory: on generated ~50 and ~100 MB traces (bigtrace.py) with a
   4 MiB budget, peak RSS stays under a fixed bound and does not grow
   from one to the other (within 10 %); the spill path is the one taken
   (with no usable TMPDIR the tiny budget fails, saying why, and the
   default budget does not need a file).
"""
import gzip
import json
import os
import random
import shutil
import subprocess
import tempfile

import bigtrace
import kineto_fixture
from tplib import CLI, SANITIZE, check, done, eq, prog, run, skip

TMP = tempfile.mkdtemp(prefix="tprof-membudget-")
TINY = "1K"
BUDGET = "4M"
RSS_BOUND_KB = 24 * 1024	# budget + the parser's and inflater's buffers


# Peak RSS through GNU time: a child of this process would count this
# process's own memory too (Linux keeps the high-water mark across fork
# and exec), while time's child is forked from time.
TIME = "/usr/bin/time"


def cli(args, budget=None, tmpdir=None, rss=False):
    """(rc, stdout, stderr, peak RSS in KiB or 0) of tprof ARGS."""
    env = dict(os.environ)
    env.pop("TPROF_CLI_MEM_BUDGET", None)
    if budget:
        env["TPROF_CLI_MEM_BUDGET"] = budget
    if tmpdir:
        env["TMPDIR"] = tmpdir
    rssf = os.path.join(TMP, "rss.txt")
    argv = [CLI] + args
    if rss:
        argv = [TIME, "-f", "%M", "-o", rssf] + argv
    p = subprocess.run(argv, capture_output=True, text=True, env=env,
                       timeout=120)
    kb = 0
    if rss:
        with open(rssf) as f:
            kb = int(f.read().split()[-1])
    return p.returncode, p.stdout, p.stderr, kb


def write_json(name, trace):
    path = os.path.join(TMP, name)
    with open(path, "w") as f:
        json.dump(trace, f)
    return path


def shuffled(trace, seed):
    t = dict(trace)
    ev = list(trace["traceEvents"])
    random.Random(seed).shuffle(ev)
    t["traceEvents"] = ev
    return t


def problems_trace():
    """More problems than check prints (20), on several tracks and out of
    order: partial overlaps, flows with no start, no end, or ending
    before they start."""
    ev = []
    for track in range(3):
        for i in range(12):
            ts = 100.0 * i
            ev.append({"ph": "X", "name": "a%d" % i, "pid": 1,
                       "tid": track, "ts": ts, "dur": 60.0})
            ev.append({"ph": "X", "name": "b%d" % i, "pid": 1,
                       "tid": track, "ts": ts + 50.0, "dur": 20.0})
    for i in range(30):
        ev.append({"ph": "s", "id": i, "cat": "c", "name": "n", "pid": 1,
                   "tid": 0, "ts": 10.0 * i + (5.0 if i % 3 == 2 else 0.0)})
        if i % 3:
            ev.append({"ph": "f", "id": i, "cat": "c", "name": "n",
                       "pid": 1, "tid": 1, "ts": 10.0 * i + 1.0,
                       "bp": "e"})
    for i in range(5):
        ev.append({"ph": "f", "id": 1000 + i, "cat": "c", "name": "n",
                   "pid": 1, "tid": 1, "ts": 1.0, "bp": "e"})
    random.Random(7).shuffle(ev)
    return {"schemaVersion": 1, "displayTimeUnit": "ms",
            "distributedInfo": {"rank": 0, "world_size": 1},
            "traceEvents": ev}


def dup_corr_trace():
    """Correlation id 1 twice: launches [10, 12) and [20, 21) (the second
    ignored: a slice joins the first call of its id), kernels at 5 (before
    any call: not joined), 30 and 50 (10 us each): 2 launches, delays 18
    and 38 us; range R [9, 13) holds the first call (GPU 20 us), S
    [19, 22) the ignored one (GPU 0)."""
    def x(cat, name, tid, ts, dur, corr=None, pid=0):
        a = {"correlation": corr} if corr else {}
        return {"ph": "X", "cat": cat, "name": name, "pid": pid,
                "tid": tid, "ts": ts, "dur": dur, "args": a}
    ev = [x("kernel", "gemm_c", 7, 50, 10, 1),
          x("kernel", "gemm_a", 7, 5, 2, 1),
          x("kernel", "gemm_b", 7, 30, 10, 1),
          x("cuda_runtime", "cudaLaunchKernel", 9, 20, 1, 1, pid=9),
          x("cuda_runtime", "cudaLaunchKernel", 9, 10, 2, 1, pid=9),
          x("user_annotation", "R", 9, 9, 4, pid=9),
          x("user_annotation", "S", 9, 19, 3, pid=9)]
    return {"schemaVersion": 1,
            "distributedInfo": {"rank": 0, "world_size": 1},
            "traceEvents": ev}


def inputs():
    """(name, path, whether check takes --foreign)."""
    out = []
    variants = {
        "plain": {},
        "string tids": {"string_tids": True},
        "profiler span": {"profiler_span": True},
        "unmatched flows": {"unmatched_flows": 40},
        "GPU overlaps": {"gpu_overlap": True},
    }
    for name, kw in variants.items():
        t, _ = kineto_fixture.make(steps=12, kernel_us=(10.0, 20.0, 5.0),
                                   **kw)
        fname = name.replace(" ", "_")
        out.append(("Kineto " + name, kineto_fixture.write(
            os.path.join(TMP, fname + ".pt.trace.json.gz"), t), True))
        out.append(("Kineto " + name + ", shuffled",
                    write_json(fname + "-shuf.pt.trace.json",
                               shuffled(t, 11)), True))
    p = os.path.join(TMP, "order.pt.trace.json")
    bigtrace.write(p, 0.3)
    out.append(("out of time order", p, True))
    out.append(("problems", write_json("problems.json", problems_trace()),
                True))
    out.append(("repeated correlation ids",
                write_json("dup.json", dup_corr_trace()), True))
    r = run([prog("steps"), "api", "4"])
    traces = [os.path.join(r.dir, f) for f in os.listdir(r.dir)
              if f.endswith(".trace.json.gz")]
    if check("tprof trace written", r.rc == 0 and len(traces) == 1,
             r.files()):
        dst = os.path.join(TMP, os.path.basename(traces[0]))
        shutil.copy(traces[0], dst)
        out.append(("tprof trace", dst, False))
    shutil.rmtree(r.dir, ignore_errors=True)
    return out


def test_same_answers():
    for name, path, foreign in inputs():
        args = ["check"] + (["--foreign"] if foreign else []) + [path]
        a = cli(args)
        b = ck = cli(args, TINY)
        check("check, %s: same output with a %s budget (spilled)" %
              (name, TINY), a[:3] == b[:3] and a[1],
              "default %r / %r" % (a[:3], b[:3]))
        a = cli(["report", "--json", path])
        b = cli(["report", "--json", path], TINY)
        check("report --json, %s: same output with a %s budget (spilled)"
              % (name, TINY), a[:3] == b[:3] and a[0] == 0,
              "rc %d/%d, %s" % (a[0], b[0], (a[2] + b[2])[-300:]))
        if name == "problems":
            eq("check, problems: 20 shown of them all",
               (ck[1].count(": error: "), ck[1].splitlines()[-1]),
               (20, "%s: 41 more problems not shown (61 in total)" %
                path))
        if name == "repeated correlation ids" and b[0] == 0:
            g = json.loads(b[1])["gpu"][0]
            eq("report, repeated correlation ids: the join, spilled",
               (g["launches"], g["launch_delay_sum_ns"],
                g["launch_delay_min_ns"], g["launch_delay_p50_ns"],
                g["launch_delay_p90_ns"], g["launch_delay_max_ns"],
                [(x["name"], x["gpu_ns"]) for x in g["ranges"]]),
               (2, 56000, 18000, 18000, 38000, 38000,
                [("R", 20000), ("S", 0)]))


def test_memory():
    paths, rss = {}, {}
    measure = not SANITIZE and os.access(TIME, os.X_OK)
    for mb in (50, 100):
        paths[mb] = os.path.join(TMP, "big%d.pt.trace.json" % mb)
        bigtrace.write(paths[mb], mb)
    for mb in (50, 100):
        rc, out, _, kb = cli(["check", "--foreign", paths[mb]], BUDGET,
                             rss=measure)
        eq("check, %d MB trace: ok" % mb, (rc, out.split(": ")[-1][:3]),
           (0, "ok "))
        rss[("check", mb)] = kb
        rc, out, err, kb = cli(["report", "--json", paths[mb]], BUDGET,
                               rss=measure)
        g = json.loads(out)["gpu"][0] if rc == 0 else {}
        eq("report, %d MB trace: every launch joined" % mb,
           (rc, g.get("launches")),
           (0, bigtrace.STEPS * bigtrace.launches_for(mb)))
        rss[("report", mb)] = kb
    rc, out, _, _ = cli(["check", "--foreign", paths[50]], BUDGET,
                        tmpdir=os.path.join(TMP, "none"))
    check("check: past the budget it spills (no TMPDIR: fails, saying "
          "so)", rc == 1 and "cannot create a temporary file in " +
          os.path.join(TMP, "none") in out, out[-300:])
    rc, out, err, _ = cli(["report", "--json", paths[50]], BUDGET,
                          tmpdir=os.path.join(TMP, "none"))
    check("report: past the budget it spills (no TMPDIR: fails, saying "
          "so)", rc == 1 and "set TMPDIR to a writable directory" in err,
          err[-300:])
    rc, out, _, _ = cli(["check", "--foreign", paths[50]],
                        tmpdir=os.path.join(TMP, "none"))
    eq("check: within the default budget no file is needed", rc, 0)
    if not measure:
        skip("peak RSS", "a sanitizer's runtime changes memory use"
             if SANITIZE else TIME + " (GNU time) is not installed")
        return
    for cmd in ("check", "report"):
        a, b = rss[(cmd, 50)], rss[(cmd, 100)]
        check("%s: peak RSS under %d MiB with a %s budget (%d KiB on "
              "100 MB)" % (cmd, RSS_BOUND_KB // 1024, BUDGET, b),
              b <= RSS_BOUND_KB, "%d KiB" % b)
        check("%s: peak RSS does not grow from 50 to 100 MB (%d, %d KiB)"
              % (cmd, a, b), b <= a * 1.10, "%d -> %d KiB" % (a, b))
    for p in paths.values():
        os.unlink(p)


def test_bad_budget():
    path = write_json("dup.json", dup_corr_trace())
    rc, out, _, _ = cli(["check", path], "lots")
    check("check: a budget that is not a size is refused",
          rc == 1 and "TPROF_CLI_MEM_BUDGET=lots is not a size" in out, out)
    rc, _, err, _ = cli(["report", path], "-5M")
    check("report: a budget that is not a size is refused",
          rc == 1 and "TPROF_CLI_MEM_BUDGET=-5M is not a size" in err, err)


test_same_answers()
test_memory()
test_bad_budget()
if not os.environ.get("KEEP"):
    shutil.rmtree(TMP, ignore_errors=True)
done()
