#!/usr/bin/env python3
"""Writes the summaries of a synchronous data-parallel job of N ranks
(docs/reference/summary-format.md), for `tprof report` at scale and for
the findings' tests.

usage: gen_summaries.py [--ranks N] [--steps S] [--slow-gpu R]
                        [--loader R] [--seed X] DIR

Every rank runs the same kernels each step, then an all-reduce. The job
is synchronous: every step lasts as long as the slowest rank's own work,
and a faster rank spends the difference inside the all-reduce kernel,
waiting. --slow-gpu R: rank R's GEMMs take 1.5x as long (a slower GPU);
--loader R: rank R's GPU idles 30 ms a step while its host is in the
data loader (a CPU-bound rank). Each is -1 for none; by default they
are N/3 and 2N/3 (none below 3 ranks). A summary is about 9 KB.
"""
import argparse
import json
import os
import random

MS = 1000000
US = 1000
BASE = 1763600000000000000
CAPACITY = 80 << 30


def hist_bucket(v):
    """summary/hist.h's bucket of a value."""
    if v < 32:
        return v
    e = v.bit_length() - 1
    return (e - 3) * 16 + ((v >> (e - 4)) & 15)


def row(cat, name, count, total, spread=0.1, rnd=None):
    """A calls row of count calls around total / count each."""
    mean = total // count if count else 0
    lo, hi = int(mean * (1 - spread)), int(mean * (1 + spread)) + 1
    hist = {}
    # eight sampled durations stand for the row's shape
    for i in range(8):
        d = lo + (hi - lo) * i // 7
        b = hist_bucket(max(d, 1))
        hist[b] = hist.get(b, 0) + max(count // 8, 1)
    return {"cat": cat, "name": name, "count": count, "total_ns": total,
            "mean_ns": round(total / count, 3) if count else 0,
            "std_ns": round(mean * spread / 2, 3), "min_ns": lo,
            "max_ns": hi, "p50_ns": mean, "p90_ns": hi, "p99_ns": hi,
            "share": 0.01, "dropped": 0,
            "hist": sorted([b, n] for b, n in hist.items())}


# Per step: (name, calls, ns per call) of the compute kernels.
KERNELS = [
    ("ampere_sgemm_128x64_nn", 24, 1500 * US),
    ("ampere_sgemm_64x64_tn", 24, 900 * US),
    ("flash_fwd_kernel", 12, 800 * US),
    ("flash_bwd_kernel", 12, 1400 * US),
    ("vectorized_layer_norm_kernel", 48, 40 * US),
    ("elementwise_kernel_add", 96, 12 * US),
    ("softmax_warp_forward", 12, 60 * US),
    ("adam_apply_kernel", 4, 300 * US),
]
GEMMS = ("ampere_sgemm_128x64_nn", "ampere_sgemm_64x64_tn")
ALLREDUCE = "ncclDevKernel_AllReduce_Sum_f32_RING_LL"
COMM_NS = 6 * MS          # the all-reduce's own transfer time per step
LOADER_NS = 30 * MS       # the CPU-bound rank's extra host time per step
HOST_NS = 2 * MS          # every rank's host time between steps


def own_work(rank, a):
    """Per step: {kernel: ns per call} and the GPU-idle host time."""
    k = {}
    for name, _, ns in KERNELS:
        k[name] = int(ns * (1.5 if rank == a.slow_gpu and name in GEMMS
                            else 1.0))
    idle = HOST_NS + (LOADER_NS if rank == a.loader else 0)
    return k, idle


def step_compute(k):
    return sum(n * k[name] for name, n, _ in KERNELS)


def summary(rank, a, job_step):
    rnd = random.Random(a.seed * 100003 + rank)
    k, idle = own_work(rank, a)
    compute = step_compute(k)
    wait = job_step - (compute + COMM_NS + idle)
    comm = COMM_NS + wait          # the all-reduce kernel, waiting included
    steps, t = [], 10 * MS
    for i in range(a.steps):
        d = job_step + rnd.randrange(0, 200 * US)
        steps.append([i, t, d])
        t += d
    n = a.steps
    calls = [row("kernel", name, cnt * n, cnt * n * k[name])
             for name, cnt, _ in KERNELS]
    calls.append(row("kernel", ALLREDUCE, n, comm * n))
    launches = sum(c for _, c, _ in KERNELS) * n + n
    calls += [
        row("cuda_runtime", "cudaLaunchKernel", launches, launches * 4 * US),
        row("cuda_runtime", "cudaMemcpyAsync", 2 * n, 2 * n * 30 * US),
        row("gpu_memcpy", "Memcpy HtoD (Pinned -> Device)", 2 * n,
            2 * n * 400 * US),
        row("nccl", "ncclAllReduce", n, n * 20 * US),
        row("cpu_op", "aten::mm", 48 * n, 48 * n * 15 * US),
        row("cpu_op", "aten::add", 96 * n, 96 * n * 8 * US),
        row("user_annotation", "forward", n, n * (compute // 3)),
        row("user_annotation", "backward", n, n * (compute // 2)),
        row("user_annotation", "optimizer.step", n, n * 2 * MS),
        row("user_annotation", "DataLoader.__next__", n, n * (idle - MS)),
    ]
    calls.sort(key=lambda r: -r["total_ns"])
    busy = (compute + comm + 800 * US) * n
    span = t - 10 * MS - idle
    gpu = {
        "version": 2, "kernels": (sum(c for _, c, _ in KERNELS) + 1) * n,
        "memcpys": 2 * n, "memsets": 0, "launches": launches + 2 * n,
        "steps_cpu_bound": n if rank == a.loader else 0,
        "steps_gpu_bound": 0 if rank == a.loader else n,
        "kernel_ns": (compute + comm) * n, "memcpy_ns": 800 * US * n,
        "memset_ns": 0, "start_ns": 10 * MS + idle, "end_ns": t,
        "span_ns": span, "busy_ns": min(busy, span),
        "idle_ns": max(span - busy, 0), "compute_ns": compute * n,
        "comm_ns": comm * n, "memory_ns": 800 * US * n,
        "non_compute_ns": max(span - compute * n - max(span - busy, 0), 0),
        "overlap_ns": COMM_NS // 3 * n,
        "launch_delay_sum_ns": launches * 30 * US,
        "launch_delay_min_ns": 3 * US, "launch_delay_p50_ns": 25 * US,
        "launch_delay_p90_ns": 80 * US, "launch_delay_max_ns": 2 * MS,
        "utilisation": [span // 100 * (100 - idle * 100 // job_step) // 100
                        for _ in range(100)],
        "ranges": [
            {"name": "backward", "calls": n, "cpu_ns": n * compute // 2,
             "gpu_ns": n * compute // 2},
            {"name": "forward", "calls": n, "cpu_ns": n * compute // 3,
             "gpu_ns": n * compute // 3},
            {"name": "optimizer.step", "calls": n, "cpu_ns": 2 * MS * n,
             "gpu_ns": 1200 * US * n},
            {"name": "DataLoader.__next__", "calls": n,
             "cpu_ns": n * (idle - MS), "gpu_ns": 0}],
        "idle_gaps": [{"start_ns": steps[i][1] + 100 * US,
                       "dur_ns": idle - 10 * US * i,
                       "cpu": ["ProfilerStep#%d" % i, "DataLoader.__next__"]}
                      for i in range(min(5, n))],
        "window": 65536,
        "approx": {"late": 0, "late_slices": 0, "late_slice_ns": 0,
                   "calls_evicted": 0, "cpu_dropped": 0,
                   "ranges_dropped": 0, "steps_dropped": 0,
                   "range_tags_dropped": 0, "launch_delays_binned": False,
                   "utilisation_binned": False},
    }
    pts, cap = [], CAPACITY
    for i in range(64):
        pts.append([10 * MS + (t - 10 * MS) * i // 64,
                    (30 << 30) + ((i % 8) << 29) + rank * 4096])
    return {
        "schema": "tprof.summary", "schema_version": 2,
        "tprof_version": "0.1.0", "source": "tprof", "name": "job",
        "trace": "job-rank%d.trace.json.gz" % rank,
        "host": "node%d" % (rank // 8), "pid": 1000 + rank, "rank": rank,
        "world_size": a.ranks, "base_time_ns": BASE,
        "start_ns": 10 * MS, "end_ns": t, "wall_ns": t - 10 * MS,
        "events": 40000 + rank, "dropped": 0,
        "steps": {"count": n, "times": steps},
        "calls": calls, "gemm": [], "nccl": [], "ranges": [],
        "memory": [{"device": rank % 8, "peak_bytes": max(p[1] for p in pts),
                    "capacity_bytes": cap, "points": pts}],
        "stacks": None, "gpu": gpu,
    }


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--ranks", type=int, default=4096)
    ap.add_argument("--steps", type=int, default=20)
    ap.add_argument("--slow-gpu", type=int, default=None)
    ap.add_argument("--loader", type=int, default=None)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("dir")
    a = ap.parse_args()
    if a.slow_gpu is None:
        a.slow_gpu = a.ranks // 3 if a.ranks >= 3 else -1
    if a.loader is None:
        a.loader = 2 * a.ranks // 3 if a.ranks >= 3 else -1
    os.makedirs(a.dir, exist_ok=True)
    own = []
    for r in range(a.ranks):
        k, idle = own_work(r, a)
        own.append(step_compute(k) + COMM_NS + idle)
    job_step = max(own)
    for r in range(a.ranks):
        with open(os.path.join(a.dir, "job-rank%d.summary.json" % r),
                  "w") as f:
            json.dump(summary(r, a, job_step), f, separators=(",", ":"))


if __name__ == "__main__":
    main()
