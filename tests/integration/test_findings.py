"""tprof report's findings (cli/report/findings/), rule by rule, from
summaries alone: for each rule a job where it must fire, with its exact
cost, ranks and names, and one where it must not. The summaries are
written here (docs/reference/summary-format.md), each rank's figures
known; the thresholds are docs/guide/reading-the-report.md's.
"""
import json
import os
import shutil
import subprocess
import sys
import tempfile

from tplib import CLI, ROOT, check, done, eq

sys.path.insert(0, os.path.join(ROOT, "bench"))
import gen_summaries  # noqa: E402

TMP = tempfile.mkdtemp(prefix="tprof-findings-")
MS = 1000000
US = 1000
STEPS = 10


def hist_bucket(v):
    if v < 32:
        return v
    e = v.bit_length() - 1
    return (e - 3) * 16 + ((v >> (e - 4)) & 15)


def row(cat, name, count, total, dropped=0):
    mean = total // count if count else 0
    return {"cat": cat, "name": name, "count": count, "total_ns": total,
            "mean_ns": total / count if count else 0, "std_ns": 0,
            "min_ns": mean, "max_ns": mean, "p50_ns": mean, "p90_ns": mean,
            "p99_ns": mean, "share": 0.1, "dropped": dropped,
            "hist": [[hist_bucket(max(mean, 1)), count]] if count else []}


def rank(r, n=4, step=100 * MS, kernels=None, idle=2 * MS, comm=0,
         overlap=0, gaps=None, rows=(), memory=None, dropped=0,
         approx=None):
    """One rank's summary, per step: kernels {name: (calls, ns)}, GPU
    idle ns, communication ns and the part of it overlapped; gaps
    [(ns, [cpu names])] over the run; rows added as they are."""
    kernels = kernels if kernels is not None else \
        {"gemm": (10, 5 * MS), "add": (20, 100 * US)}
    times, t = [], 0
    for i in range(STEPS):
        times.append([i, t, step])
        t += step
    calls = [row("kernel", k, c * STEPS, c * ns * STEPS)
             for k, (c, ns) in kernels.items()]
    if comm:
        calls.append(row("kernel", "ncclDevKernel_AllReduce_Sum_f32_RING",
                         STEPS, comm * STEPS))
    calls += list(rows)
    compute = sum(c * ns for c, ns in kernels.values())
    busy = compute + comm - overlap
    gpu = {"version": 2, "kernels": sum(c for c, _ in kernels.values()) *
           STEPS, "memcpys": 0, "memsets": 0, "launches": 0,
           "steps_cpu_bound": 0, "steps_gpu_bound": STEPS,
           "kernel_ns": (compute + comm) * STEPS, "memcpy_ns": 0,
           "memset_ns": 0, "start_ns": 0, "end_ns": (busy + idle) * STEPS,
           "span_ns": (busy + idle) * STEPS, "busy_ns": busy * STEPS,
           "idle_ns": idle * STEPS, "compute_ns": compute * STEPS,
           "comm_ns": comm * STEPS, "memory_ns": 0,
           "non_compute_ns": (comm - overlap) * STEPS,
           "overlap_ns": overlap * STEPS,
           "launch_delay_sum_ns": None, "launch_delay_min_ns": None,
           "launch_delay_p50_ns": None, "launch_delay_p90_ns": None,
           "launch_delay_max_ns": None, "utilisation": [0] * 100,
           "ranges": [],
           "idle_gaps": [{"start_ns": i * step, "dur_ns": d, "cpu": c}
                         for i, (d, c) in enumerate(gaps or [])],
           "approx": approx or {"late": 0, "late_slices": 0,
                                "late_slice_ns": 0, "calls_evicted": 0,
                                "cpu_dropped": 0}}
    return {"schema": "tprof.summary", "schema_version": 2,
            "source": "tprof", "name": "job", "rank": r, "world_size": n,
            "pid": 100 + r, "host": "h", "trace": None,
            "base_time_ns": 0, "start_ns": 0, "end_ns": t, "wall_ns": t,
            "events": 10000, "dropped": dropped,
            "steps": {"count": STEPS, "times": times}, "calls": calls,
            "memory": memory or [], "gpu": gpu}


def job(name, ranks):
    d = os.path.join(TMP, name)
    os.makedirs(d)
    for s in ranks:
        with open(os.path.join(d, "job-rank%d.summary.json" % s["rank"]),
                  "w") as f:
            json.dump(s, f)
    return d


def report(d, *args):
    p = subprocess.run([CLI, "report", "--json"] + list(args) + [d],
                       capture_output=True, text=True, timeout=60)
    if p.returncode:
        print("tprof report failed: " + p.stderr)
        return {"findings": [], "ranks": []}
    return json.loads(p.stdout)


def kinds(j):
    return [f["kind"] for f in j["findings"]]


def of(j, kind):
    return [f for f in j["findings"] if f["kind"] == kind]


def ratio4(v):
    return round(v + 1e-12, 4)


# --- slow ranks ---------------------------------------------------------

def test_slow_gpu():
    # rank 2's GEMMs take 1.5x as long at the same calls: +25 ms a step
    k = {"gemm": (10, 5 * MS), "add": (20, 100 * US)}
    slow = {"gemm": (10, 7500 * US), "add": (20, 100 * US)}
    d = job("slow-gpu", [rank(r, step=125 * MS if r == 2 else 100 * MS,
                              kernels=slow if r == 2 else k)
                         for r in range(4)])
    j = report(d)
    f = of(j, "slow_gpu")
    eq("slow_gpu: one finding, first, about rank 2",
       [(x["id"], x["who"]["ranks"]) for x in f], [(1, [2])])
    if f:
        eq("slow_gpu: its cost per step and share of its step",
           (f[0]["cost_ns"], f[0]["per"], f[0]["of_ns"], f[0]["share"]),
           (25 * MS, "step", 125 * MS, 0.2))
        eq("slow_gpu: names the slower kernel, not the one as fast",
           (f[0]["names_are"], f[0]["names"]), ("kernels", ["gemm"]))
        check("slow_gpu: evidence gives the per-call times and ratio",
              "gemm 7.500 ms per call against 5.000 ms (1.500 times, 10.0 "
              "calls per step: +25.000 ms)" in f[0]["evidence"],
              f[0]["evidence"])
        check("slow_gpu: headline names the rank, the cause, the cost",
              f[0]["headline"] == "rank 2: its kernels run slower than "
              "the other ranks' (gemm 1.500 times): +25.000 ms per step "
              "(20.00% of its step)", f[0]["headline"])
        # all its steps equal: the first after the 2 start-up ones
        eq("slow_gpu: where: its slowest step after start-up",
           f[0]["step"], 2)
    eq("slow_gpu: the rank's row lists the finding",
       [x["findings"] for x in j["ranks"]], [[], [], [1], []])
    # more work, not slower kernels: 15 GEMM calls a step instead of 10
    more = {"gemm": (15, 5 * MS), "add": (20, 100 * US)}
    d = job("more-work", [rank(r, step=125 * MS if r == 2 else 100 * MS,
                               kernels=more if r == 2 else k)
                          for r in range(4)])
    j = report(d)
    eq("slow_gpu: not for more calls of the same kernels (other work)",
       kinds(j), ["slow_other"])
    # a rank 5 % slower is no slow rank
    d = job("five-pct", [rank(r, step=105 * MS if r == 2 else 100 * MS,
                              kernels={"gemm": (10, 5250 * US)} if r == 2
                              else {"gemm": (10, 5 * MS)})
                         for r in range(4)])
    eq("slow ranks: not under 1.10 times the median rank",
       kinds(report(d)), [])


def test_host_bound():
    loader = [(31 * MS, ["ProfilerStep#%d" % i, "DataLoader.__next__"])
              for i in range(5)]
    d = job("host", [rank(r, step=130 * MS if r == 1 else 100 * MS,
                          idle=32 * MS if r == 1 else 2 * MS,
                          gaps=loader if r == 1 else None)
                     for r in range(4)])
    j = report(d)
    f = of(j, "host_bound")
    eq("host_bound: one finding about rank 1",
       [x["who"]["ranks"] for x in f], [[1]])
    if f:
        eq("host_bound: cost: its extra GPU idle per step",
           (f[0]["cost_ns"], f[0]["share"]), (30 * MS, ratio4(30 / 130)))
        eq("host_bound: names the CPU range around its idle gaps",
           (f[0]["names_are"], f[0]["names"], f[0]["title"]),
           ("cpu", ["DataLoader.__next__"],
            "its GPU waits for the host (in DataLoader.__next__)"))
        check("host_bound: evidence: its idle against the median rank's "
              "and the gaps", "Its GPU idles 32.000 ms per step (24.62% "
              "of it) against 2.000 ms on the median rank (+30.000 ms). "
              "Its 5 longest idle gaps, 155.000 ms in all, were inside "
              "DataLoader.__next__ (5, 155.000 ms)." in f[0]["evidence"],
              f[0]["evidence"])
        check("host_bound: a data loader gets data loader advice",
              "num_workers" in f[0]["try"], f[0]["try"])
    eq("host_bound: no other finding", kinds(j), ["host_bound"])
    # slower by as much, with the GPU as idle as the others: not host-bound
    d = job("not-host", [rank(r, step=130 * MS if r == 1 else 100 * MS)
                         for r in range(4)])
    eq("host_bound: not when its GPU idles as the others' do",
       kinds(report(d)), ["slow_other"])


def test_slow_other():
    d = job("other", [rank(r, step=130 * MS if r == 3 else 100 * MS)
                      for r in range(4)])
    f = of(report(d), "slow_other")
    eq("slow_other: a slower rank with neither cause, its whole excess",
       [(x["who"]["ranks"], x["cost_ns"]) for x in f], [([3], 30 * MS)])


def test_collective_wait():
    # a synchronous job (bench/gen_summaries.py): rank 2's GEMMs 1.5x,
    # rank 5 data-loader-bound; the others wait inside the all-reduce
    d = os.path.join(TMP, "coupled")
    subprocess.run([sys.executable, os.path.join(ROOT, "bench",
                                                 "gen_summaries.py"),
                    "--ranks", "8", "--slow-gpu", "2", "--loader", "5", d],
                   check=True)
    j = report(d)
    eq("collective wait: the slow ranks first, then the waiting",
       [(x["kind"], x["who"]["ranks"]) for x in j["findings"]],
       [("slow_gpu", [2]), ("host_bound", [5]),
        ("collective_wait", [0, 1, 3, 4, 6, 7])])
    w = of(j, "collective_wait")
    if w:
        eq("collective wait: waiting for ranks 2 and 5, 30 ms a step",
           (w[0]["waiting_for"]["ranks"], w[0]["cost_ns"],
            w[0]["names"]), ([2, 5], gen_summaries.LOADER_NS,
                             [gen_summaries.ALLREDUCE]))
        eq("collective wait: headline",
           w[0]["headline"].split(":")[:2],
           ["ranks 0, 1, 3, 4, 6 and 7",
            " they wait in collectives for ranks 2 and 5"])
    s = of(j, "slow_gpu")
    if s:
        # its own step: its step less its waiting (1.2 ms of it)
        check("collective wait: the slow rank found though every step is "
              "as long", "Less the time spent waiting in collectives" in
              s[0]["evidence"], s[0]["evidence"])
    # balanced: no slow rank, nobody waits
    d = os.path.join(TMP, "balanced")
    subprocess.run([sys.executable, os.path.join(ROOT, "bench",
                                                 "gen_summaries.py"),
                    "--ranks", "8", "--slow-gpu", "-1", "--loader", "-1",
                    d], check=True)
    eq("collective wait: none in a balanced job", kinds(report(d)), [])


# --- job-wide rules -----------------------------------------------------

def test_exposed_comm():
    d = job("comm", [rank(r, comm=20 * MS, overlap=0) for r in range(4)])
    f = of(report(d), "exposed_communication")
    eq("exposed comm: 20 ms a step not overlapped, on all 4 ranks",
       [(x["who"]["ranks"], x["cost_ns"], x["share"], x["names"])
        for x in f],
       [([0, 1, 2, 3], 20 * MS, 0.2,
         ["ncclDevKernel_AllReduce_Sum_f32_RING"])])
    d = job("comm-hidden", [rank(r, comm=20 * MS, overlap=17 * MS)
                            for r in range(4)])
    eq("exposed comm: not when computation hides it (3 ms, 3 %)",
       kinds(report(d)), [])


SYNC = row("cuda_runtime", "cudaDeviceSynchronize", STEPS, 10 * MS * STEPS)


def test_sync():
    d = job("sync", [rank(r, idle=5 * MS, rows=[SYNC]) for r in range(4)])
    f = of(report(d), "sync_in_steps")
    eq("sync: once a step, 10 ms waited, GPU idle 5 ms: costs 5 ms",
       [(x["who"]["ranks"], x["cost_ns"], x["names"]) for x in f],
       [([0, 1, 2, 3], 5 * MS, ["cudaDeviceSynchronize"])])
    d = job("sync-once", [rank(r, idle=5 * MS, rows=[
        row("cuda_runtime", "cudaDeviceSynchronize", 1, 50 * MS)])
        for r in range(4)])
    eq("sync: not for a sync made once in the run", kinds(report(d)), [])
    d = job("sync-busy", [rank(r, idle=10 * US, rows=[SYNC])
                          for r in range(4)])
    eq("sync: not when the GPU never idles for it", kinds(report(d)), [])


def test_pageable():
    pg = row("gpu_memcpy", "Memcpy HtoD (Pageable -> Device)", 2 * STEPS,
             3 * MS * STEPS)
    d = job("pageable", [rank(r, rows=[pg]) for r in range(4)])
    f = of(report(d), "pageable_copies")
    eq("pageable: 2 copies a step, 3 ms of GPU time a step",
       [(x["who"]["ranks"], x["cost_ns"], x["names"]) for x in f],
       [([0, 1, 2, 3], 3 * MS, ["Memcpy HtoD (Pageable -> Device)"])])
    pin = dict(pg, name="Memcpy HtoD (Pinned -> Device)")
    d = job("pinned", [rank(r, rows=[pin]) for r in range(4)])
    eq("pageable: not for pinned copies", kinds(report(d)), [])


def test_launch():
    short = {"tiny_%d" % i: (100, 5 * US) for i in range(5)}
    gaps = [(1 * MS, ["ProfilerStep#%d" % i]) for i in range(5)]
    d = job("launch", [rank(r, kernels=short, idle=40 * MS, gaps=gaps)
                       for r in range(4)])
    f = of(report(d), "launch_bound")
    # idle between kernels: 40 ms a step less the 5 ms of the 5 gaps
    # over the 10 steps
    eq("launch: 500 kernels of 5 us a step, the GPU idle between them",
       [(x["who"]["ranks"], x["cost_ns"], len(x["names"])) for x in f],
       [([0, 1, 2, 3], 40 * MS - 500 * US, 3)])
    if f:
        check("launch: suggests CUDA graphs and torch.compile",
              "CUDA graph" in f[0]["try"] and "torch.compile" in
              f[0]["try"], f[0]["try"])
    long_k = {"k_%d" % i: (100, 200 * US) for i in range(5)}
    d = job("long", [rank(r, kernels=long_k, idle=40 * MS, gaps=gaps)
                     for r in range(4)])
    eq("launch: not when the kernels are long", kinds(report(d)), [])
    d = job("busy", [rank(r, kernels=short, idle=1 * MS) for r in range(4)])
    eq("launch: not when the GPU keeps up", kinds(report(d)), [])


def test_memory():
    def mem(peak, cap):
        return [{"device": 0, "peak_bytes": peak, "capacity_bytes": cap,
                 "points": [[0, peak]]}]
    d = job("mem", [rank(r, memory=mem(((76 + r) << 30) if r == 3 else
                                       (40 << 30), 80 << 30))
                    for r in range(4)])
    f = of(report(d), "memory_near_capacity")
    eq("memory: rank 3 at 98.75 % of 80 GiB, no time cost",
       [(x["who"]["ranks"], x["cost_ns"], x["title"]) for x in f],
       [([3], None, "device memory near its capacity (98.75% of "
                    "80.000 GiB)")])
    d = job("mem-unknown", [rank(r, memory=mem(79 << 30, None))
                            for r in range(4)])
    eq("memory: not without the device's capacity", kinds(report(d)), [])
    d = job("mem-half", [rank(r, memory=mem(40 << 30, 80 << 30))
                         for r in range(4)])
    eq("memory: not at half", kinds(report(d)), [])


def test_incomplete():
    d = job("lost", [rank(r, step=130 * MS if r == 1 else 100 * MS,
                          dropped=250 if r == 1 else 0) for r in range(4)])
    j = report(d)
    eq("incomplete: a finding (no cost) after the others",
       [(x["kind"], x["who"]["ranks"], x["cost_ns"])
        for x in j["findings"]],
       [("slow_other", [1], 30 * MS), ("incomplete_trace", [1], None)])
    f = j["findings"]
    if len(f) == 2:
        eq("incomplete: the caveat on the finding it affects",
           f[0]["caveat"], "The trace of rank 1 is incomplete (250 of "
           "10250 events lost (2.44%)): its figures here may be low.")
        check("incomplete: its evidence counts what was lost",
              "Rank 1: 250 of 10250 events lost (2.44%)." in
              f[1]["evidence"], f[1]["evidence"])
    d = job("late", [rank(r, approx={"late_slices": 3, "late_slice_ns":
                                     12 * US, "calls_evicted": 0})
                     if r == 2 else rank(r) for r in range(4)])
    eq("incomplete: GPU slices swept late count too",
       [(x["kind"], x["who"]["ranks"]) for x in report(d)["findings"]],
       [("incomplete_trace", [2])])
    d = job("whole", [rank(r) for r in range(4)])
    eq("incomplete: none when nothing was lost", kinds(report(d)), [])


def test_no_steps():
    """Ranks without steps: per run, the wall time the step."""
    ranks = []
    for r in range(3):
        s = rank(r, step=130 * MS if r == 0 else 100 * MS,
                 idle=32 * MS if r == 0 else 2 * MS)
        s["steps"] = None
        ranks.append(s)
    j = report(job("no-steps", ranks))
    eq("no steps: a slow rank per run, from the wall time",
       [(x["kind"], x["per"], x["cost_ns"]) for x in j["findings"]],
       [("host_bound", "run", 300 * MS)])


def test_one_rank():
    j = report(job("one", [rank(0, n=1, rows=[SYNC], idle=5 * MS)]))
    eq("one rank: no comparison, the job-wide rules still apply",
       [(x["kind"], x["headline"]) for x in j["findings"]],
       [("sync_in_steps", "rank 0: the host waits in synchronizing calls "
         "inside each step (cudaDeviceSynchronize): +5.000 ms per step "
         "(5.00% of its step)")])


def test_markdown_first_lines():
    k = {"gemm": (10, 5 * MS)}
    ranks = [rank(r, step=125 * MS if r == 2 else 130 * MS if r == 1 else
                  100 * MS,
                  kernels={"gemm": (10, 7500 * US)} if r == 2 else k,
                  idle=32 * MS if r == 1 else 2 * MS,
                  gaps=[(31 * MS, ["DataLoader.__next__"])] * 5 if r == 1
                  else None) for r in range(4)]
    d = job("md", ranks)
    p = subprocess.run([CLI, "report", d], capture_output=True, text=True)
    lines = p.stdout.splitlines()
    eq("markdown: the findings come first", lines[:6],
       ["# tprof report", "", "4 ranks (4 from summaries, 0 from traces); "
        "median step 100.000 ms.", "", "## Findings", ""])
    check("markdown: finding 1 names rank 1, host-bound, 30 ms",
          len(lines) > 6 and lines[6].startswith("1. **rank 1: its GPU "
                                                 "waits for the host") and
          "+30.000 ms per step" in lines[6], lines[6:7])
    check("markdown: names escaped in a list item (__next__ is no "
          "emphasis)", len(lines) > 6 and
          "(in DataLoader.\\_\\_next\\_\\_)" in lines[6], lines[6:7])
    heads = [l for l in lines if l.startswith("2. **")]
    check("markdown: finding 2 names rank 2, slower kernels, 25 ms",
          heads and heads[0].startswith("2. **rank 2: its kernels run "
                                        "slower") and
          "+25.000 ms per step" in heads[0], heads)
    sections = [l for l in lines if l.startswith("## ")]
    eq("markdown: findings, then ranks, then the details",
       sections[:3], ["## Findings", "## Ranks", "## Steps"])
    rk = lines[lines.index("## Ranks"):]
    row1 = [l for l in rk if l.startswith("| 1 |")]
    eq("markdown: rank 1's row: step, idle, its finding",
       row1 and [c.strip() for c in row1[0].strip("|").split("|")],
       ["1", "130.000 ms", "+30.000 ms", "50.000 ms (38.46%)",
        "32.000 ms (24.62%)", "50.000 ms", "0 ns", "0 ns",
        "#1 host-bound"])


def test_top():
    calls = [row("cpu_op", "op%02d" % i, 1, (100 - i) * MS)
             for i in range(40)]
    d = job("top", [rank(r, rows=calls) for r in range(2)])
    j = report(d)
    eq("--json lists every name, not the top 30",
       len([n for n in j["names"] if n["cat"] == "cpu_op"]), 40)
    p = subprocess.run([CLI, "report", "--top", "5", d], capture_output=True,
                       text=True)
    top = p.stdout.split("## Top 5 names across ranks", 1)[-1].split(
        "\n## ", 1)[0]
    eq("--top 5: the names table lists 5",
       len([l for l in top.splitlines() if l.startswith("| ") and
            "---" not in l and "category" not in l]), 5)
    for bad in ("0", "x", "-3"):
        p = subprocess.run([CLI, "report", "--top", bad, d],
                           capture_output=True, text=True)
        eq("--top %s: a usage error" % bad, (p.returncode, p.stdout),
           (2, ""))


def test_many_ranks():
    d = os.path.join(TMP, "many")
    subprocess.run([sys.executable, os.path.join(ROOT, "bench",
                                                 "gen_summaries.py"),
                    "--ranks", "64", d], check=True)
    j = report(d)
    eq("64 ranks: the slow GPU and the loader found, the others waiting",
       [(x["kind"], x["who"]["ranks"] if len(x["who"]["ranks"]) < 3
         else len(x["who"]["ranks"])) for x in j["findings"]],
       [("slow_gpu", [21]), ("host_bound", [42]),
        ("collective_wait", 62)])
    eq("64 ranks: --json has every rank's figures",
       [x["per"] for x in j["ranks"]], ["step"] * 64)
    p = subprocess.run([CLI, "report", d], capture_output=True, text=True)
    rk = p.stdout.split("## Ranks\n", 1)[-1].split("\n## ", 1)[0]
    rows = [l.split("|")[1].strip() for l in rk.splitlines()
            if l.startswith("| ") and "rank" not in l]
    eq("64 ranks: the table lists the 10 slowest, then the 5 fastest",
       (len(rows), rows[:2]), (15, ["42", "21"]))
    check("64 ranks: and says so",
          "Listed: the 10 slowest and the 5 fastest of the 64 ranks" in rk,
          rk[:300])
    check("64 ranks: a distribution table over every rank",
          "## Distribution over the ranks" in p.stdout and
          "| median |" in p.stdout)


test_slow_gpu()
test_host_bound()
test_slow_other()
test_collective_wait()
test_exposed_comm()
test_sync()
test_pageable()
test_launch()
test_memory()
test_incomplete()
test_no_steps()
test_one_rank()
test_markdown_first_lines()
test_top()
test_many_ranks()
shutil.rmtree(TMP, ignore_errors=True)
done()
