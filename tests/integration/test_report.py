"""tprof report: one report over many ranks.

Inputs whose answers are known, built here: hand-written summary.json files
(docs/reference/summary-format.md) for four ranks, one of them 30% slower; Kineto
traces from kineto_fixture.py; a trace of a program run under the preload.
Checks the Markdown's numbers, --json's exact ones, the --html page (parsed
as XML), --summaries, and the errors bad inputs give.
"""
import glob
import gzip
import json
import math
import os
import shutil
import subprocess
import tempfile
import xml.etree.ElementTree as ET

import kineto_fixture
from tplib import CLI, check, done, eq, prog, run

TMP = tempfile.mkdtemp(prefix="tprof-report-")
MS = 1000000


def tprof(*args):
    p = subprocess.run([CLI, "report"] + list(args), capture_output=True,
                       text=True, timeout=60)
    return p.returncode, p.stdout, p.stderr


def report_json(*args):
    rc, out, err = tprof("--json", *args)
    if rc:
        print("tprof report failed: " + err)
        return None
    return json.loads(out)


# The report's number formats, predicted with integers as it writes them.
def fmt_ns(v):
    n = int(math.floor(abs(v) + 0.5))
    sign = "-" if v < 0 and n else ""
    if n < 1000:
        return "%s%d ns" % (sign, n)
    if n < 1000000:
        return "%s%d.%03d \u00b5s" % (sign, n // 1000, n % 1000)
    if n < 999999500:
        r = (n + 500) // 1000
        return "%s%d.%03d ms" % (sign, r // 1000, r % 1000)
    r = (n + 500000) // 1000000
    return "%s%d.%03d s" % (sign, r // 1000, r % 1000)


def fmt_diff(v):
    s = fmt_ns(v)
    return s if s.startswith("-") else "+" + s


def ratio3(v):
    return "%.3f" % (math.floor(v * 1000 + 0.5) / 1000)


def ratio4(v):
    return math.floor(v * 10000 + 0.5) / 10000


def milli(v):
    return math.floor(v * 1000 + 0.5) / 1000


def hist_bucket(v):
    """summary/hist.h's bucket of a value."""
    if v < 32:
        return v
    e = v.bit_length() - 1
    return (e - 3) * 16 + ((v >> (e - 4)) & 15)


def md_row(md, *first):
    """The table row whose first cells are `first`, as a list of cells."""
    for line in md.splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if cells[:len(first)] == list(first):
            return cells
    return None


# --- 1. hand-written summaries of four ranks --------------------------------

def row(cat, name, count, total, durs=None):
    durs = durs or [total // count] * count
    h = {}
    for d in durs:
        h[hist_bucket(d)] = h.get(hist_bucket(d), 0) + 1
    mean = total / count
    return {"cat": cat, "name": name, "count": count, "total_ns": total,
            "mean_ns": mean, "std_ns": 0, "min_ns": min(durs),
            "max_ns": max(durs), "p50_ns": min(durs), "p90_ns": max(durs),
            "p99_ns": max(durs), "share": 0.1, "dropped": 0,
            "hist": sorted([b, n] for b, n in h.items())}


GEMM = [100 * MS, 100 * MS, 100 * MS, 130 * MS]     # rank 3 is 30% slower
NCCL = [20 * MS, 22 * MS, 24 * MS]                  # ranks 0-2 only
ADD = [100000, 100000, 100000, 200000]              # uneven but under 1 ms
STEPS = [
    [100 * MS] * 10,
    [99 * MS, 101 * MS] * 5,
    [100 * MS] * 9 + [110 * MS],
    [130 * MS] * 10,
]


def summary(rank):
    steps = STEPS[rank]
    calls = [row("kernel", "gemm_kernel", 1000, GEMM[rank]),
             row("cuda_runtime", "cudaLaunchKernel", 1000, 5 * MS),
             row("cpu_op", "aten::add", 10, ADD[rank]),
             # steps are not names: a hand-made file may list them
             row("user_annotation", "ProfilerStep#0", 1, steps[0])]
    if rank < 3:
        calls.append(row("nccl", "ncclAllReduce", 100, NCCL[rank]))
    t, times = 0, []
    for i, d in enumerate(steps):
        times.append([i, t, d])
        t += d
    return {
        "schema": "tprof.summary", "schema_version": 1,
        "tprof_version": "0.6.0", "source": "tprof", "name": "job",
        "trace": "job-rank%d.trace.json.gz" % rank, "host": "node%d" % rank,
        "pid": 1000 + rank, "rank": rank, "world_size": 4,
        "base_time_ns": 1763600000000000000, "start_ns": 0, "end_ns": t,
        "wall_ns": t, "events": 5000 + rank, "dropped": rank,
        "steps": {"count": len(steps), "times": times},
        "calls": calls, "gemm": [], "nccl": [], "ranges": [],
        "memory": [{"device": rank, "peak_bytes": (rank + 1) << 30,
                    "points": [[0, 1 << 30], [t // 2, (rank + 1) << 30],
                               [t, 1 << 29]]}],
    }


def write_summaries(d, ranks=range(4)):
    os.makedirs(d, exist_ok=True)
    for r in ranks:
        with open(os.path.join(d, "job-rank%d.summary.json" % r), "w") as f:
            json.dump(summary(r), f, indent=1)
    return d


def pstd(v):
    m = sum(v) / len(v)
    return math.sqrt(sum((x - m) ** 2 for x in v) / len(v))


def test_summaries():
    d = write_summaries(os.path.join(TMP, "sum"))
    rc, md, err = tprof(d)
    eq("summaries: exit 0", rc, 0)
    eq("summaries: nothing on stderr", err, "")
    r0 = md_row(md, "0", os.path.join(d, "job-rank0.summary.json"))
    eq("summaries: overview row of rank 0", r0,
       ["0", os.path.join(d, "job-rank0.summary.json"), "summary",
        fmt_ns(1000 * MS), "5000", "0", "10", "1.000 GiB"])
    r3 = md_row(section(md, "Inputs"), "3")
    eq("summaries: overview row of rank 3 (dropped, peak memory)",
       r3 and r3[4:], ["5003", "3", "10", "4.000 GiB"])

    g = md_row(md, "kernel", "gemm_kernel")
    mean = sum(GEMM) / 4
    eq("summaries: gemm_kernel across ranks (markdown)", g,
       ["kernel", "gemm_kernel", "4/4", fmt_ns(mean), fmt_ns(pstd(GEMM)),
        fmt_ns(100 * MS), fmt_ns(130 * MS),
        fmt_ns(sum(GEMM) / 4000), "3", ratio3(130 * MS / mean),
        "straggler"])
    n = md_row(md, "nccl", "ncclAllReduce")
    eq("summaries: a name on 3 of 4 ranks: statistics over those 3", n,
       ["nccl", "ncclAllReduce", "3/4", fmt_ns(22 * MS), fmt_ns(pstd(NCCL)),
        fmt_ns(20 * MS), fmt_ns(24 * MS), fmt_ns(sum(NCCL) / 300), "2",
        ratio3(24 / 22), ""])
    a = md_row(md, "cpu_op", "aten::add")
    eq("summaries: imbalance 1.6 under 1 ms is no straggler",
       a and a[-2:], [ratio3(200000 / 125000), ""])
    check("summaries: steps are not listed as names",
          "ProfilerStep#0" not in md, md)
    eq("summaries: per-rank detail row",
       md_row(md, "kernel", "gemm_kernel", "3"),
       ["kernel", "gemm_kernel", "3", "1000", fmt_ns(130 * MS),
        fmt_ns(130000)])

    means = [sum(s) / len(s) for s in STEPS]
    median = sorted(means)[1]       # lower median of 4
    fastest = min(means)
    for r, s in enumerate(STEPS):
        eq("summaries: steps row of rank %d" % r, md_row(md, str(r), "10"),
           [str(r), "10", fmt_ns(means[r]),
            fmt_ns(sorted(s)[(len(s) + 1) // 2 - 1]), fmt_ns(max(s)),
            fmt_diff(means[r] - fastest),
            "straggler" if means[r] >= 1.1 * median else ""])
    strag = md.split("## Stragglers", 1)[-1]
    check("summaries: stragglers name rank 3's steps and gemm_kernel",
          "- rank 3: median step %s (its first 2 left out: start-up) is "
          "1.300 times the median rank's %s" % (fmt_ns(130 * MS),
                                                fmt_ns(100 * MS)) in strag and
          "- kernel gemm_kernel: rank 3's total %s is %s times" %
          (fmt_ns(130 * MS), ratio3(130 * MS / mean)) in strag and
          strag.count("\n- ") == 2, strag)

    j = report_json(d)
    if not j:
        return check("summaries: --json", False)
    eq("summaries: --json ranks in order",
       [(x["rank"], x["kind"], x["events"], x["dropped"], x["steps"])
        for x in j["ranks"]],
       [(r, "summary", 5000 + r, r, 10) for r in range(4)])
    names = {(x["cat"], x["name"]): x for x in j["names"]}
    eq("summaries: --json names, by mean total",
       [(x["cat"], x["name"]) for x in j["names"]],
       [("kernel", "gemm_kernel"), ("nccl", "ncclAllReduce"),
        ("cuda_runtime", "cudaLaunchKernel"), ("cpu_op", "aten::add")])
    g = names.get(("kernel", "gemm_kernel"), {})
    eq("summaries: --json gemm_kernel exact",
       {k: g.get(k) for k in ("ranks_present", "calls", "total_ns",
                              "mean_total_ns", "std_total_ns",
                              "min_total_ns", "max_total_ns",
                              "mean_call_ns", "slowest", "imbalance",
                              "straggler")},
       {"ranks_present": 4, "calls": 4000, "total_ns": sum(GEMM),
        "mean_total_ns": milli(mean), "std_total_ns": milli(pstd(GEMM)),
        "min_total_ns": 100 * MS, "max_total_ns": 130 * MS,
        "mean_call_ns": milli(sum(GEMM) / 4000),
        "slowest": {"entry": 3, "rank": 3},
        "imbalance": ratio4(130 * MS / mean), "straggler": True})
    eq("summaries: --json per-rank of gemm_kernel",
       [(x["rank"], x["count"], x["total_ns"], x["mean_ns"])
        for x in g.get("per_rank", [])],
       [(r, 1000, GEMM[r], GEMM[r] / 1000) for r in range(4)])
    nc = names.get(("nccl", "ncclAllReduce"), {})
    eq("summaries: --json ncclAllReduce over the 3 ranks with it",
       (nc.get("ranks_present"), nc.get("mean_total_ns"),
        nc.get("imbalance"), nc.get("straggler")),
       (3, 22 * MS, ratio4(24 / 22), False))
    st = j["steps"]
    eq("summaries: --json steps",
       (st["median_mean_ns"], st["fastest_mean_ns"],
        [(x["rank"], x["count"], x["mean_ns"], x["p50_ns"], x["max_ns"],
          x["vs_fastest_ns"], x["straggler"]) for x in st["ranks"]]),
       (milli(median), milli(fastest),
        [(r, 10, milli(means[r]), sorted(s)[4], max(s),
          milli(means[r] - fastest), means[r] >= 1.1 * median)
         for r, s in enumerate(STEPS)]))
    eq("summaries: --json step verdicts: median after the warm-up steps",
       (st["reference_ns"], [(x["warmup_steps"], x["verdict_ns"])
                             for x in st["ranks"]]),
       (100 * MS, [(2, 100 * MS), (2, 99 * MS), (2, 100 * MS),
                   (2, 130 * MS)]))
    eq("summaries: --json stragglers",
       [(x["kind"], x["rank"], x.get("name"), x["ratio"])
        for x in j["stragglers"]],
       [("steps", 3, None, ratio4(130 / 100)),
        ("name", 3, "gemm_kernel", ratio4(130 * MS / mean))])
    eq("summaries: --json memory peak per rank",
       [x["memory"] for x in j["ranks"]],
       [[{"device": r, "peak_bytes": (r + 1) << 30,
          "capacity_bytes": None}] for r in range(4)])
    return d


def test_inputs(d):
    # explicit files, in any order, give the same report as the directory
    files = sorted(glob.glob(os.path.join(d, "*.json")), reverse=True)
    a, b = report_json(d), report_json(*files)
    eq("inputs: files in any order report as their directory",
       a and a["names"], b and b["names"])
    c = report_json(d, files[0])
    eq("inputs: a file named twice is read once",
       c and len(c["ranks"]), 4)
    # a trace named on the command line is replaced by its summary
    trace = os.path.join(d, "job-rank0.trace.json.gz")
    with gzip.open(trace, "wt") as f:
        f.write("not read")
    j = report_json(trace)
    eq("inputs: a trace with a sibling summary reads the summary",
       j and [(x["file"], x["kind"]) for x in j["ranks"]],
       [(os.path.join(d, "job-rank0.summary.json"), "summary")])
    os.unlink(trace)
    # two inputs of one rank from two processes: a warning, two entries
    # (two files of one process, the flight recorder's dumps, are one
    # entry: test_hang.py)
    dup = os.path.join(TMP, "dup")
    os.makedirs(dup)
    with open(os.path.join(d, "job-rank1.summary.json")) as f:
        other = json.load(f)
    other["pid"] += 1
    with open(os.path.join(dup, "other-rank1.summary.json"), "w") as f:
        json.dump(other, f)
    rc, out, err = tprof("--json", d, dup)
    eq("inputs: same rank twice: exit 0", rc, 0)
    check("inputs: same rank twice: a warning naming both files",
          err.startswith("tprof: warning: ") and
          "job-rank1.summary.json" in err and
          "other-rank1.summary.json" in err and err.count("\n") == 1, err)
    j = json.loads(out) if rc == 0 else {"ranks": []}
    eq("inputs: same rank twice: separate entries",
       [(x["rank"], x["label"]) for x in j["ranks"]],
       [(0, "0"), (1, "1"), (1, "1#2"), (2, "2"), (3, "3")])


# --- 2. Kineto traces --------------------------------------------------------

def test_kineto():
    d = os.path.join(TMP, "kineto")
    os.makedirs(d)
    want = {}
    for rank, slow in ((0, 1.0), (1, 1.5)):
        trace, exp = kineto_fixture.make(rank=rank, slow=slow)
        kineto_fixture.write(os.path.join(
            d, "host_4242.%d.pt.trace.json%s" % (rank, ".gz" * rank)), trace)
        want[rank] = exp
    out = os.path.join(TMP, "kineto-sums")
    os.makedirs(out)
    rc, text, err = tprof("--json", "--summaries", out, d)
    eq("kineto: exit 0", rc, 0)
    j = json.loads(text) if rc == 0 else None
    if not j:
        return check("kineto: --json", False, err)
    eq("kineto: both read as traces",
       [(x["rank"], x["kind"], x["events"]) for x in j["ranks"]],
       [(r, "trace", want[r]["events"]) for r in (0, 1)])
    names = {(x["cat"], x["name"]): x for x in j["names"]}

    def per_rank(cat, name):
        x = names.get((cat, name), {"per_rank": []})
        return [(p["rank"], p["count"], p["total_ns"]) for p in x["per_rank"]]

    for key, cat in (("kernel", "kernel"), ("launch", "cuda_runtime"),
                     ("mm", "cpu_op")):
        eq("kineto: %s per rank" % want[0][key]["name"],
           per_rank(cat, want[0][key]["name"]),
           [(r, want[r][key]["count"], want[r][key]["total_ns"])
            for r in (0, 1)])
    eq("kineto: memcpy per rank",
       per_rank("gpu_memcpy", "Memcpy HtoD (Pageable -> Device)"),
       [(r, want[r]["memcpy"]["count"], want[r]["memcpy"]["total_ns"])
        for r in (0, 1)])
    steps = j["steps"]["ranks"]
    eq("kineto: steps per rank",
       [(x["count"], x["mean_ns"], x["max_ns"]) for x in steps],
       [(len(want[r]["steps"]), want[r]["steps"][0]["dur_ns"],
         want[r]["steps"][0]["dur_ns"]) for r in (0, 1)])
    eq("kineto: the 1.5x slower rank is a step straggler",
       [x["straggler"] for x in steps], [False, True])
    eq("kineto: memory peak per rank",
       [x["memory"] for x in j["ranks"]],
       [[{"device": 0, "peak_bytes": want[r]["memory_peak"],
          # the trace's deviceProperties' totalGlobalMem
          "capacity_bytes": 84929216512}]
        for r in (0, 1)])
    # the summaries computed from the traces give the same report
    sums = sorted(os.listdir(out))
    eq("kineto: --summaries wrote one summary per trace", sums,
       ["host_4242.0.pt.summary.json", "host_4242.1.pt.summary.json"])
    k = report_json(out)
    strip = lambda r: [{k: v for k, v in x.items() if k not in
                        ("file", "kind")} for x in r["ranks"]]
    check("kineto: report over the computed summaries equals the one over "
          "the traces", k and strip(k) == strip(j) and
          {x: k[x] for x in ("names", "steps", "stragglers")} ==
          {x: j[x] for x in ("names", "steps", "stragglers")})
    s = json.load(open(os.path.join(out, sums[1])))
    eq("kineto: computed summary: source, rank, world_size",
       (s["source"], s["rank"], s["world_size"], s["trace"]),
       ("trace", 1, 2, "host_4242.1.pt.trace.json.gz"))
    return d


def test_warmup():
    """Rank 0's first step holds start-up (14.8x the others, as seen on a
    real job): by its mean it would be a straggler; its verdict leaves
    the first step out and takes the median, so it is not. Rank 2, slow
    in every step after the first, is one."""
    d = os.path.join(TMP, "warmup")
    steps = [[1480 * MS] + [100 * MS] * 4, [100 * MS] * 5,
             [100 * MS] + [120 * MS] * 4]
    for r, st in enumerate(steps):
        s = summary(r)
        s["world_size"] = 3
        t, times = 0, []
        for i, x in enumerate(st):
            times.append([i, t, x])
            t += x
        s["steps"] = {"count": len(st), "times": times}
        os.makedirs(d, exist_ok=True)
        with open(os.path.join(d, "job-rank%d.summary.json" % r), "w") as f:
            json.dump(s, f)
    j = report_json(d)
    st = j and j["steps"]
    eq("warm-up: verdicts leave the first step out, then the median",
       st and (st["reference_ns"],
               [(x["rank"], x["mean_ns"], x["warmup_steps"], x["verdict_ns"],
                 x["straggler"]) for x in st["ranks"]]),
       (100 * MS, [(0, 376 * MS, 1, 100 * MS, False),
                   (1, 100 * MS, 1, 100 * MS, False),
                   (2, 116 * MS, 1, 120 * MS, True)]))
    rc, md, err = tprof(d)
    check("warm-up: the markdown says the first step is left out",
          "- rank 2: median step %s (its first 1 left out: start-up) is "
          "1.200 times the median rank's %s" % (fmt_ns(120 * MS),
                                                fmt_ns(100 * MS)) in md and
          "its first step left out as start-up" in md and
          "- rank 0:" not in md, md)


def gpu_trace(path, rank, shift_us=0):
    """A small trace with known GPU answers (us): on stream 7 compute
    kernels [10, 110) and [160, 260), a copy [310, 320) and a set
    [320, 325); on stream 20 an NCCL kernel [60, 210). Span 315, busy 265,
    idle 50, compute 200, communication 150 (100 of it under compute),
    memory 15, non-compute 65. Launch calls (correlation 1-4) end at 7,
    9, 55 and 302: delays 3, 151, 5 and 8 us; the set has no call.
    Ranges: forward [4, 10) holds the two GEMM launches (GPU 200 us),
    inner [7.5, 9.5) inside it the second (100), backward [49, 60) the
    NCCL launch (150), optimizer [299, 303) the copy (10). The GPU idles
    in [260, 310), while the CPU is in ProfilerStep#0 > aten::mm >
    cudaStreamSynchronize. Step 0 [0, 400) has the GPU busy 265 us
    (GPU-bound), step 1 [400, 1000) none (CPU-bound)."""
    def x(cat, name, tid, ts, dur, corr=None, pid=0):
        a = {"stream": tid} if pid == 0 else {}
        if corr:
            a["correlation"] = corr
        return {"ph": "X", "cat": cat, "name": name, "pid": pid, "tid": tid,
                "ts": ts + shift_us, "dur": dur, "args": a}
    ev = [x("kernel", "gemm_a", 7, 10, 100, 1),
          x("kernel", "gemm_b", 7, 160, 100, 2),
          x("kernel", "ncclDevKernel_AllReduce_Sum_f32_RING_LL", 20, 60, 150,
            3),
          x("gpu_memcpy", "Memcpy HtoD (Pageable -> Device)", 7, 310, 10, 4),
          x("gpu_memset", "Memset (Device)", 7, 320, 5),
          x("cuda_runtime", "cudaLaunchKernel", 9, 5, 2, 1, pid=9),
          x("cuda_runtime", "cudaLaunchKernel", 9, 8, 1, 2, pid=9),
          x("cuda_driver", "cuLaunchKernelEx", 9, 50, 5, 3, pid=9),
          x("cuda_runtime", "cudaMemcpyAsync", 9, 300, 2, 4, pid=9),
          x("user_annotation", "forward", 9, 4, 6, pid=9),
          x("user_annotation", "inner", 9, 7.5, 2, pid=9),
          x("user_annotation", "backward", 9, 49, 11, pid=9),
          x("user_annotation", "optimizer", 9, 299, 4, pid=9),
          x("user_annotation", "ProfilerStep#0", 9, 0, 400, pid=9),
          x("user_annotation", "ProfilerStep#1", 9, 400, 600, pid=9),
          x("cuda_runtime", "cudaStreamSynchronize", 9, 262, 46, pid=9),
          x("cpu_op", "aten::mm", 9, 0, 400, pid=9)]
    with open(path, "w") as f:
        json.dump({"schemaVersion": 1, "distributedInfo": {
            "rank": rank, "world_size": 2}, "traceEvents": ev}, f)


def section(md, title):
    return md.split("## " + title + "\n", 1)[-1].split("\n## ", 1)[0]


def test_gpu():
    d = os.path.join(TMP, "gpu")
    os.makedirs(d)
    gpu_trace(os.path.join(d, "a-rank0.trace.json"), 0)
    gpu_trace(os.path.join(d, "a-rank1.trace.json"), 1, shift_us=1000)
    rc, md, err = tprof(d)
    eq("gpu: exit 0", (rc, err), (0, ""))
    g = section(md, "GPU time")
    want = ["3", fmt_ns(350000), "1", fmt_ns(10000), "1", fmt_ns(5000),
            fmt_ns(265000), fmt_ns(315000), "84.13%"]
    eq("gpu: GPU time per rank (markdown)",
       [md_row(g, r) for r in ("0", "1")], [[r] + want for r in ("0", "1")])
    t = section(md, "Temporal breakdown")
    want = [fmt_ns(50000), fmt_ns(200000), fmt_ns(65000), fmt_ns(150000),
            fmt_ns(15000), "15.87%", "63.49%", "20.63%", "66.67%"]
    eq("gpu: temporal breakdown and overlap (markdown)",
       [md_row(t, r) for r in ("0", "1")], [[r] + want for r in ("0", "1")])
    j = report_json(d)
    eq("gpu: --json exact", j and j["gpu"][0],
       {"entry": 0, "rank": 0, "kernels": 3, "kernel_ns": 350000,
        "memcpys": 1, "memcpy_ns": 10000, "memsets": 1, "memset_ns": 5000,
        "span_ns": 315000, "busy_ns": 265000, "idle_ns": 50000,
        "compute_ns": 200000, "non_compute_ns": 65000, "comm_ns": 150000,
        "memory_ns": 15000, "overlap_ns": 100000, "steps_cpu_bound": 1,
        "steps_gpu_bound": 1, "launches": 4,
        "launch_delay_sum_ns": 167000, "launch_delay_min_ns": 3000,
        "launch_delay_p50_ns": 5000, "launch_delay_p90_ns": 151000,
        "launch_delay_max_ns": 151000, "ranges": [
            {"name": "forward", "calls": 1, "cpu_ns": 6000,
             "gpu_ns": 200000},
            {"name": "backward", "calls": 1, "cpu_ns": 11000,
             "gpu_ns": 150000},
            {"name": "inner", "calls": 1, "cpu_ns": 2000, "gpu_ns": 100000},
            {"name": "optimizer", "calls": 1, "cpu_ns": 4000,
             "gpu_ns": 10000}],
        "idle_gaps": [{"start_ns": 260000, "dur_ns": 50000, "cpu": [
            "ProfilerStep#0", "aten::mm", "cudaStreamSynchronize"]}]})
    gp = section(md, "Idle gaps")
    eq("gpu: idle gaps (markdown)", md_row(gp, "1"),
       ["1", "+" + fmt_ns(250000), fmt_ns(50000),
        "ProfilerStep#0 > aten::mm > cudaStreamSynchronize"])
    rg = section(md, "GPU time per range")
    eq("gpu: GPU time per range (markdown)", md_row(rg, "1", "forward"),
       ["1", "forward", "1", fmt_ns(6000), fmt_ns(200000), "33.333"])
    ld = section(md, "Launch delay")
    eq("gpu: launch delay (markdown)", md_row(ld, "1"),
       ["1", "4", fmt_ns(41750), fmt_ns(3000), fmt_ns(5000),
        fmt_ns(151000), fmt_ns(151000), "1", "1"])
    html = os.path.join(TMP, "gpu.html")
    rc, _, err = tprof(d, "--html", html)
    root = ET.parse(html).getroot()
    bars = [(e.get("class"), e.get("data-rank"), e.get("data-ns"))
            for e in root.iter() if local(e.tag) == "rect" and
            e.get("data-ns") and e.get("data-rank")]
    eq("gpu: --html stacked bars of the breakdown", bars,
       [(c, r, n) for r in ("0", "1") for c, n in
        (("idle", "50000"), ("compute", "200000"),
         ("noncompute", "65000"))])
    def bars(cls):
        svg = [e for e in root.iter() if local(e.tag) == "svg" and
               e.get("class") == cls]
        return [(r.get("data-name"), r.get("data-ns"))
                for r in (svg[0].iter() if svg else [])
                if local(r.tag) == "rect" and r.get("class") == "bar"]
    eq("gpu: --html top kernels by GPU time", bars("kernels"),
       [("ncclDevKernel_AllReduce_Sum_f32_RING_LL", "150000"),
        ("gemm_a", "100000"), ("gemm_b", "100000")])
    eq("gpu: --html GPU time per range", bars("ranges"),
       [("forward", "200000"), ("backward", "150000"), ("inner", "100000"),
        ("optimizer", "10000")] * 2)
    # utilisation: busy ns in 100 equal parts of the span, exactly
    sd = os.path.join(TMP, "gpu-sums")
    os.makedirs(sd)
    rc, _, err = tprof("--json", "--summaries", sd,
                       os.path.join(d, "a-rank0.trace.json"))
    with open(os.path.join(sd, "a-rank0.summary.json")) as f:
        util = json.load(f)["gpu"]["utilisation"]
    busy = [(10000, 260000), (310000, 325000)]
    lo = [10000 + 315000 * i // 100 for i in range(101)]
    want = [sum(max(0, min(e, lo[i + 1]) - max(a, lo[i])) for a, e in busy)
            for i in range(100)]
    eq("gpu: utilisation per part of the span (computed summary)",
       util, want)
    # the heat map: its 100 columns are the 100 parts here (the two
    # ranks did not run at once, 1 ms apart: each from its own start),
    # a level per tenth of the part's time busy, 9 from 90 %
    svg = [e for e in root.iter() if local(e.tag) == "svg" and
           e.get("class") == "heat"]
    rows = [g for g in (svg[0].iter() if svg else [])
            if local(g.tag) == "g" and g.get("class") == "heatrow"]
    levels = "".join(str(min(9, int(u / 3150 * 10))) for u in want)
    eq("gpu: --html heat map: one row per rank, each part's busy share",
       [(g.get("data-ranks"), g.get("data-levels")) for g in rows],
       [("0", levels), ("1", levels)])
    check("gpu: --html heat map: its axis says the ranks are each from "
          "their start", svg and any(
              "time since each rank's first GPU activity" in (t.text or "")
              for t in svg[0].iter() if local(t.tag) == "text"))
    # a summary without the member: null in --json, no row
    write_summaries(d, ranks=[3])
    j = report_json(d)
    eq("gpu: a summary without \"gpu\" gives null",
       j and [x.get("gpu", "-") for x in j["gpu"]], ["-", "-", None])


def test_kineto_real():
    """What real torch.profiler traces hold: the profiler's own span (cat
    "Trace", 0 to end + 2 ms), string tids, unmatched ac2g flows, kernels
    overlapping by 1 ns, a base that is not a multiple of 10^14."""
    d = os.path.join(TMP, "kineto-real")
    os.makedirs(d)
    want = {}
    for rank in (0, 1):
        trace, exp = kineto_fixture.make(
            rank=rank, string_tids=True, profiler_span=True,
            unmatched_flows=3, gpu_overlap=True,
            base_ns=kineto_fixture.BASE_NS + 123456789)
        kineto_fixture.write(os.path.join(
            d, "host_4242.%d.pt.trace.json" % rank), trace)
        want[rank] = exp
    j = report_json(d)
    if not check("kineto real: --json", j is not None):
        return
    eq("kineto real: wall time is the program's, not the profiler span's",
       [(x["rank"], x["wall_ns"]) for x in j["ranks"]],
       [(r, want[r]["wall_ns"]) for r in (0, 1)])
    eq("kineto real: the profiler span is not a name",
       [x["name"] for x in j["names"] if x["cat"] == "Trace"], [])
    eq("kineto real: no straggler from it",
       [x for x in j["stragglers"] if "Profiler" in json.dumps(x)], [])
    k = [x for x in j["names"] if x["cat"] == "kernel"]
    eq("kineto real: kernels on string tids counted",
       [(p["rank"], p["count"], p["total_ns"]) for p in k[0]["per_rank"]],
       [(r, want[r]["kernel"]["count"], want[r]["kernel"]["total_ns"])
        for r in (0, 1)])
    p = subprocess.run([CLI, "check", "--foreign"] +
                       sorted(glob.glob(os.path.join(d, "*.json"))),
                       capture_output=True, text=True)
    eq("kineto real: check --foreign passes with warnings",
       (p.returncode, p.stdout.count(": warning: "), p.stdout.count(": ok (")),
       (0, 4, 2))


def test_names_by_content():
    """HTA's data sets name traces rank-N.json.gz; torch's handler
    *.pt.trace.json: a directory's .json[.gz] files are taken when they
    hold a trace, whatever their name; world sizes that differ warn."""
    d = os.path.join(TMP, "by-content")
    os.makedirs(d)
    for rank, name in ((0, "rank-0.json.gz"), (1, "rank-1.json")):
        trace, _ = kineto_fixture.make(rank=rank)
        kineto_fixture.write(os.path.join(d, name), trace)
    with open(os.path.join(d, "notes.json"), "w") as f:
        f.write('{"a": 1, "traceEventsNot": []}')
    with open(os.path.join(d, "config.json.gz"), "wb") as f:
        f.write(gzip.compress(b'[1, 2, 3]'))
    rc, text, err = tprof("--json", d)
    j = json.loads(text) if rc == 0 else None
    eq("by content: rank-N.json[.gz] read as traces, other JSON left out",
       j and [(x["rank"], os.path.basename(x["file"]), x["kind"])
              for x in j["ranks"]],
       [(0, "rank-0.json.gz", "trace"), (1, "rank-1.json", "trace")])
    eq("by content: no warning for one world size", err, "")
    trace, _ = kineto_fixture.make(rank=2, world_size=4)
    kineto_fixture.write(os.path.join(d, "other.json"), trace)
    rc, text, err = tprof("--json", d)
    eq("by content: mixed world sizes warn",
       (rc, err), (0, "tprof: warning: the inputs mix world sizes (2 in "
                   "%s/rank-0.json.gz, 4 in %s/other.json): are they one "
                   "job's?\n" % (d, d)))


# --- 3. a trace tprof wrote --------------------------------------------------

def test_tprof_trace():
    r = run([prog("steps"), "api", "4"])
    eq("tprof trace: program ran", r.rc, 0)
    traces = glob.glob(os.path.join(r.dir, "*.trace.json.gz"))
    if not check("tprof trace: one trace", len(traces) == 1, r.files()):
        return
    only = os.path.join(TMP, "tprof-trace")
    os.makedirs(only)
    shutil.copy(traces[0], only)
    t = report_json(only)
    eq("tprof trace: read as a trace", t and t["ranks"][0]["kind"], "trace")
    eq("tprof trace: cudaFree calls and steps",
       t and ([(x["cat"], x["name"], x["calls"]) for x in t["names"]],
              t["steps"]["ranks"][0]["count"]),
       ([("cuda_runtime", "cudaFree", 4)], 4))
    eq("tprof trace: no .json but the trace at the top of the directory "
       "(HTA's trace_dir= loads every one), the summaries in summaries/",
       (sorted(f for f in os.listdir(r.dir) if ".json" in f),
        sorted(os.listdir(os.path.join(r.dir, "summaries")))),
       ([os.path.basename(traces[0])],
        [os.path.basename(traces[0]).replace(".trace.json.gz", x)
         for x in (".summary.json", ".summary.md")]))
    if glob.glob(os.path.join(r.dir, "summaries", "*.summary.json")):
        s = report_json(r.dir)
        eq("tprof trace: the directory's summary is preferred",
           s and (s["ranks"][0]["kind"], s["ranks"][0]["file"]),
           ("summary", os.path.join(
               r.dir, "summaries", os.path.basename(traces[0]).replace(
                   ".trace.json.gz", ".summary.json"))))
        s3 = report_json("--traces", r.dir)
        s4 = report_json("--traces", traces[0])
        eq("tprof trace: --traces reads the trace despite the summary",
           [x and x["ranks"][0]["kind"] for x in (s3, s4)],
           ["trace", "trace"])
        s2 = report_json(traces[0])
        eq("tprof trace: a trace named is replaced by its summary in "
           "summaries/", s2 and s2["ranks"][0]["file"],
           s and s["ranks"][0]["file"])
        check("tprof trace: trace and exit summary agree on names and steps",
              s and t and s["names"] == t["names"] and
              s["steps"] == t["steps"],
              json.dumps([s and s["names"], t and t["names"]]))
    shutil.rmtree(r.dir, ignore_errors=True)


# --- 4. --html ---------------------------------------------------------------

def local(tag):
    return tag.rsplit("}", 1)[-1]


def test_html(sum_dir, kineto_dir):
    page = os.path.join(TMP, "report.html")
    rc, out, err = tprof("--html", page, sum_dir)
    # the report went to a file: stdout has the findings in a few lines
    # and where the report is, not the whole Markdown
    lines = out.splitlines()
    eq("html: exit 0, the findings on stdout, then the page's path",
       (rc, lines[:1], lines[-1:], "# tprof report" in out),
       (0, ["tprof report: 4 ranks; median step %s" % fmt_ns(100 * MS)],
        ["Report: " + page], False))
    check("html: stdout's first finding: rank 3, 30 % slower",
          len(lines) > 1 and lines[1].startswith(" 1. rank 3: ") and
          "+30.000 ms per step" in lines[1], lines[1:2])
    try:
        root = ET.parse(page).getroot()
    except (OSError, ET.ParseError) as e:
        return check("html: parses as XML", False, str(e))
    check("html: parses as XML", True)
    eq("html: no tmp file left", [f for f in os.listdir(TMP) if ".tmp." in f],
       [])
    text = open(page, encoding="utf-8").read()
    check("html: self-contained (no scripts, links or external URLs)",
          "<script" not in text and "<link" not in text and
          "src=" not in text and "http://" not in
          text.replace("http://www.w3.org/2000/svg", ""), "")
    svgs = [e for e in root.iter() if local(e.tag) == "svg"]

    def series(svg):
        return sorted(p.get("data-rank") for p in svg.iter()
                      if local(p.tag) == "polyline" and
                      p.get("class") == "series")

    hists = {s.get("data-name"): s for s in svgs if s.get("class") == "hist"}
    check("html: one histogram per top name",
          set(hists) == {"gemm_kernel", "ncclAllReduce", "cudaLaunchKernel",
                         "aten::add"}, sorted(hists))
    eq("html: gemm_kernel histogram has one series per rank",
       series(hists.get("gemm_kernel", root)), ["0", "1", "2", "3"])
    eq("html: ncclAllReduce histogram: the ranks that have it",
       series(hists.get("ncclAllReduce", root)), ["0", "1", "2"])
    steps = [s for s in svgs if s.get("class") == "steps"]
    eq("html: a steps chart, one series per rank",
       [series(s) for s in steps], [["0", "1", "2", "3"]])
    mem = [s for s in svgs if s.get("class") == "memory"]
    eq("html: a memory chart, one series per rank and device",
       [sorted((p.get("data-rank"), p.get("data-device"))
               for p in s.iter() if local(p.tag) == "polyline")
        for s in mem], [[(str(r), str(r)) for r in range(4)]])
    check("html: axis labels are SVG text",
          all(any(local(t.tag) == "text" for t in s.iter()) for s in svgs))
    tables = [e for e in root.iter() if local(e.tag) == "table"]
    eq("html: the tables, one row per rank first",
       [t.get("class") for t in tables],
       ["overview", "steps", "names", "detail", "ranks"])
    # a name with characters XML must escape
    kd = os.path.join(TMP, "kineto-esc")
    shutil.copytree(kineto_dir, kd)
    trace, _ = kineto_fixture.make(rank=2)
    for e in trace["traceEvents"]:
        if e.get("cat") == "kernel":
            e["name"] = "void k<float, '&'>(\"x\")\u00e9"
    kineto_fixture.write(os.path.join(kd, "host_4242.2.pt.trace.json"),
                         trace)
    page2 = os.path.join(TMP, "esc.html")
    rc, _, err = tprof("--html", page2, kd)
    try:
        root = ET.parse(page2).getroot()
        names = [s.get("data-name") for s in root.iter()
                 if local(s.tag) == "svg" and s.get("class") == "hist"]
    except (OSError, ET.ParseError) as e:
        names = str(e)
    check("html: names with <, &, quotes are escaped and read back",
          rc == 0 and "void k<float, '&'>(\"x\")\u00e9" in names,
          "%s %s" % (err, names))


# --- 5. bad inputs -----------------------------------------------------------

def bad(name, path, what, args=()):
    page = os.path.join(TMP, "bad.html")
    rc, out, err = tprof("--html", page, *args, path)
    lines = err.splitlines()
    check("errors: %s: one line 'tprof: error: FILE: ...', exit 1, "
          "no stdout" % name,
          rc == 1 and out == "" and len(lines) == 1 and
          lines[0].startswith("tprof: error: %s: " % path) and
          what in lines[0], "rc %d out %r err %r" % (rc, out[:80], err))
    check("errors: %s: no html or tmp file" % name,
          not [f for f in os.listdir(TMP) if f.startswith("bad.html")])


def test_errors(sum_dir):
    d = os.path.join(TMP, "bad")
    os.makedirs(d)
    bad("missing file", os.path.join(d, "nope.summary.json"),
        "No such file")
    bad("missing directory", os.path.join(d, "nodir"), "No such file")
    empty = os.path.join(d, "empty")
    os.makedirs(empty)
    bad("no inputs in a directory", empty, "no summaries or traces")
    p = os.path.join(d, "corrupt-rank0.trace.json.gz")
    data = gzip.compress(b'{"traceEvents": [' + b'{"ph":"i"},' * 20000 +
                         b'{"ph":"i"}]}')
    with open(p, "wb") as f:
        f.write(data[:len(data) // 2] + bytes(64) + data[len(data) // 2:])
    bad("corrupt gzip", p, "gzip")
    p = os.path.join(d, "trunc-rank0.trace.json")
    with open(p, "w") as f:
        f.write('{"traceEvents": [{"ph":"X","name":"a","pid":1,"tid":1,'
                '"ts":1.0,"dur":2.0},\n{"ph":"X","na')
    bad("truncated JSON trace", p, "invalid JSON")
    p = os.path.join(d, "trunc.summary.json")
    with open(p, "w") as f:
        f.write(json.dumps(summary(0))[:300])
    bad("truncated summary", p, "invalid JSON")
    p = os.path.join(d, "other.json")
    with open(p, "w") as f:
        f.write('{"hello": [1, 2, 3]}')
    bad("JSON that is neither", p, "neither a trace")
    p = os.path.join(d, "other2.summary.json")
    with open(p, "w") as f:
        f.write('[1, 2]')
    bad("summary that is not an object", p, "neither a trace")
    # 1 and 2 are read (2 adds the gpu member at exit); 3 is unknown
    p = os.path.join(d, "v3-rank0.summary.json")
    s = summary(0)
    s["schema_version"] = 3
    with open(p, "w") as f:
        json.dump(s, f)
    bad("unknown schema_version", p, "schema_version 3")
    # one bad input among good ones still fails the whole report
    bad("a bad input after good ones", p, "schema_version 3",
        args=(sum_dir,))
    for args in ([], ["--bogus", sum_dir], ["--html"], [sum_dir, "--html"]):
        rc, out, err = tprof(*args)
        eq("errors: usage %r: exit 2, no stdout" % args, (rc, out), (2, ""))


def test_us_to_ns():
    # ts/dur literals Kineto and Python write, rounded beyond the ns
    d = os.path.join(TMP, "lit")
    os.makedirs(d)
    durs = ["1.0005", "0.0004", "2.5e-3", "1e1", "3", "0.9994999",
            "123456789.1234567"]
    ev = ",\n".join('{"ph":"X","cat":"c","name":"n%d","pid":1,"tid":1,'
                    '"ts":%d,"dur":%s}' % (i, i * 1000000000, s)
                    for i, s in enumerate(durs))
    with open(os.path.join(d, "lit-rank0.trace.json"), "w") as f:
        f.write('{"traceEvents": [\n%s\n]}' % ev)
    j = report_json(d)
    got = {x["name"]: x["total_ns"] for x in (j or {"names": []})["names"]}
    eq("trace times: exact decimal us to ns, halves away from zero",
       [got.get("n%d" % i) for i in range(len(durs))],
       [1001, 0, 3, 10000, 3000, 999, 123456789123])


def test_md_escapes():
    """A C++ kernel name: '<' would open an HTML tag in rendered
    markdown, '|' end the cell."""
    d = os.path.join(TMP, "esc")
    os.makedirs(d, exist_ok=True)
    s = summary(0)
    s["calls"].append(row("kernel", "void fill<float>|2", 4, 4 * MS))
    with open(os.path.join(d, "job-rank0.summary.json"), "w") as f:
        json.dump(s, f)
    rc, md, err = tprof(d)
    line = [l for l in md.splitlines() if "fill" in l]
    check("markdown: '<' and '|' escaped in a name",
          rc == 0 and line and "| void fill\\<float>\\|2 |" in line[0], line)


test_sum = test_summaries()
test_inputs(test_sum)
kin = test_kineto()
test_kineto_real()
test_warmup()
test_gpu()
test_names_by_content()
test_tprof_trace()
test_html(test_sum, kin)
test_errors(test_sum)
test_us_to_ns()
test_md_escapes()
shutil.rmtree(TMP, ignore_errors=True)
done()
