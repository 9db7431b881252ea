"""A torch.profiler (Kineto) trace with known contents, for the CLI tests.

Written to Kineto's documented schema (libkineto ChromeTraceLogger, the
layout `torch.profiler.export_chrome_trace` produces): top-level
"schemaVersion", "deviceProperties", "distributedInfo" before
"traceEvents"; events pretty-printed over several lines with two-space
indentation; "cpu_op", "user_annotation" (ProfilerStep#N), "cuda_runtime",
"kernel", "gpu_memcpy" X events; "ac2g" flow events; "[memory]" instant
events; process/thread metadata; the "Record Window End" instant whose pid
and tid are empty strings; "traceName" and "baseTimeNanoseconds" last.
Timestamps are microseconds relative to baseTimeNanoseconds, as Kineto
writes them since PyTorch 2.2.

`make(rank, ...)` returns the trace as a dict plus the answers a reader must
find in it (`expected`), so tests assert exact numbers.

Options for what real traces also hold: `string_tids` (older Kineto: the
CPU thread's tid as a string, GPU tids "stream 7"), `profiler_span` (the
"PyTorch Profiler (0)" span of cat "Trace" on pid "Spawned", which runs
from the profiler's start to its end, and its "Iteration Start" instant),
`unmatched_flows` (ac2g flow starts whose kernel is not in the trace),
`gpu_overlap` (each kernel after the first of a step starts 1 ns before
the previous one ends, as CUPTI's timestamps sometimes have them) and
`base_ns` (real bases are not multiples of 10^14), and `nccl` (per step,
an NCCL kernel on stream 20 overlapping the step's GEMMs, launched by a
cudaLaunchKernel inside the step: communication for HTA's temporal
breakdown and comm/comp overlap).
"""
import gzip
import json

BASE_NS = 1763600000000000000
NCCL_CORR = 100000000


def _x(cat, name, pid, tid, ts, dur, args=None):
    e = {"ph": "X", "cat": cat, "name": name, "pid": pid, "tid": tid,
         "ts": ts, "dur": dur}
    if args is not None:
        e["args"] = args
    return e


def make(rank=0, world_size=2, pid=4242, steps=3, step_us=1000.0,
         kernel_us=(10.0, 20.0, 30.0), slow=1.0, string_tids=False,
         profiler_span=False, unmatched_flows=0, gpu_overlap=False,
         base_ns=BASE_NS, nccl=False):
    """One rank's trace. Each step s (0-based) runs ProfilerStep#s for
    step_us * slow us, containing aten::mm (5 us CPU) that launches one
    kernel "ampere_sgemm_128x64_nn" per entry of kernel_us (GPU time
    kernel_us[i] * slow), a cudaMemcpyAsync with a 4 us memcpy, and a
    memory allocation of 1 MiB * (s + 1) on device 0."""
    ev = []
    cpu_tid = str(pid) if string_tids else pid
    gpu_tid = "stream 7" if string_tids else 7
    corr = 100
    ext = 1
    memcpy_us = 4.0
    for s in range(steps):
        t0 = 10.0 + s * step_us * slow
        ev.append(_x("user_annotation", "ProfilerStep#%d" % s, pid, cpu_tid,
                     t0, step_us * slow,
                     {"External id": ext, "Record function id": 0,
                      "Ev Idx": ext - 1}))
        ext += 1
        ev.append(_x("cpu_op", "aten::mm", pid, cpu_tid, t0 + 1.0, 5.0,
                     {"External id": ext, "Record function id": 0,
                      "Ev Idx": ext - 1,
                      "Input Dims": [[128, 64], [64, 32]],
                      "Input type": ["float", "float"]}))
        mm_ext = ext
        ext += 1
        g = t0 + 100.0
        for i, k in enumerate(kernel_us):
            ts = t0 + 1.5 + i
            ev.append(_x("cuda_runtime", "cudaLaunchKernel", pid, cpu_tid, ts,
                         0.5, {"External id": mm_ext, "cbid": 211,
                               "correlation": corr}))
            ev.append(_x("kernel", "ampere_sgemm_128x64_nn", 0, gpu_tid, g,
                         k * slow,
                         {"External id": mm_ext, "queued": 0, "device": 0,
                          "context": 1, "stream": 7, "correlation": corr,
                          "registers per thread": 128,
                          "shared memory": 16384, "blocks per SM": 0.5,
                          "warps per SM": 4.0, "grid": [4, 2, 1],
                          "block": [256, 1, 1],
                          "est. achieved occupancy %": 6}))
            ev.append({"ph": "s", "id": corr, "pid": pid, "tid": cpu_tid,
                       "ts": ts, "cat": "ac2g", "name": "ac2g"})
            ev.append({"ph": "f", "id": corr, "pid": 0, "tid": gpu_tid, "ts": g,
                       "cat": "ac2g", "name": "ac2g", "bp": "e"})
            g += k * slow + (-0.001 if gpu_overlap else 1.0)
            corr += 1
        ev.append(_x("cuda_runtime", "cudaMemcpyAsync", pid, cpu_tid,
                     t0 + 10.0, 2.0, {"External id": ext, "cbid": 41,
                                       "correlation": corr}))
        ev.append(_x("gpu_memcpy", "Memcpy HtoD (Pageable -> Device)", 0, gpu_tid,
                     g, memcpy_us, {"External id": ext, "device": 0,
                                    "context": 1, "stream": 7,
                                    "correlation": corr, "bytes": 4096,
                                    "memory bandwidth (GB/s)": 1.024}))
        corr += 1
        ext += 1
        if nccl:
            # its own correlation range: never one of the GEMMs'
            ev.append(_x("cuda_runtime", "cudaLaunchKernel", pid, cpu_tid,
                         t0 + 20.0, 1.0,
                         {"correlation": NCCL_CORR + s, "cbid": 211}))
            ev.append(_x("kernel", "ncclDevKernel_AllReduce_Sum_f32_RING_LL",
                         0, 20, t0 + 105.0, 40.0,
                         {"correlation": NCCL_CORR + s, "stream": 20,
                          "device": 0, "External id": 0}))
        ev.append({"ph": "i", "s": "t", "name": "[memory]", "pid": pid,
                   "tid": cpu_tid, "ts": t0 + 2.0,
                   "args": {"Device Type": 1, "Device Id": 0,
                            "Addr": 139842000000 + s,
                            "Bytes": 1048576,
                            "Total Allocated": 1048576 * (s + 1),
                            "Total Reserved": 2097152 * (s + 1)}})
    meta = [
        {"name": "process_name", "ph": "M", "ts": 10.0, "pid": pid,
         "tid": 0, "args": {"name": "python"}},
        {"name": "process_labels", "ph": "M", "ts": 10.0, "pid": pid,
         "tid": 0, "args": {"labels": "CPU"}},
        {"name": "process_sort_index", "ph": "M", "ts": 10.0, "pid": pid,
         "tid": 0, "args": {"sort_index": pid}},
        {"name": "thread_name", "ph": "M", "ts": 10.0, "pid": pid,
         "tid": cpu_tid, "args": {"name": "thread %d (python)" % pid}},
        {"name": "process_name", "ph": "M", "ts": 10.0, "pid": 0, "tid": 0,
         "args": {"name": "python"}},
        {"name": "process_labels", "ph": "M", "ts": 10.0, "pid": 0,
         "tid": 0, "args": {"labels": "GPU 0"}},
        {"name": "process_sort_index", "ph": "M", "ts": 10.0, "pid": 0,
         "tid": 0, "args": {"sort_index": 16777216}},
        {"name": "thread_name", "ph": "M", "ts": 10.0, "pid": 0, "tid": gpu_tid,
         "args": {"name": "stream 7 "}},
    ]
    end = 10.0 + steps * step_us * slow
    ev += meta
    ev.append({"name": "Record Window End", "ph": "i", "s": "g", "pid": "",
               "tid": "", "ts": end + 5.0})
    if profiler_span:
        # Kineto's own bookkeeping: the profiler was on from 0 to end + 2 ms
        ev.append({"ph": "X", "cat": "Trace", "ts": 0.0,
                   "dur": end + 2000.0, "pid": "Spawned",
                   "tid": "PyTorch Profiler", "name": "PyTorch Profiler (0)",
                   "args": {"Op count": 0}})
        ev.append({"name": "Iteration Start: PyTorch Profiler", "ph": "i",
                   "s": "g", "pid": "Traces", "tid": "Trace PyTorch Profiler",
                   "ts": 0.0})
    for u in range(unmatched_flows):
        ev.append({"ph": "s", "id": 900000 + u, "pid": pid, "tid": cpu_tid,
                   "ts": end - 1.0, "cat": "ac2g", "name": "ac2g"})
    trace = {
        "schemaVersion": 1,
        "deviceProperties": [{
            "id": 0, "name": "NVIDIA H100 80GB HBM3",
            "totalGlobalMem": 84929216512, "computeMajor": 9,
            "computeMinor": 0, "maxThreadsPerBlock": 1024,
            "maxThreadsPerMultiprocessor": 2048, "regsPerBlock": 65536,
            "warpSize": 32, "sharedMemPerBlock": 49152,
            "numSms": 132, "regsPerMultiprocessor": 65536,
            "sharedMemPerBlockOptin": 232448,
            "sharedMemPerMultiprocessor": 233472}],
        "distributedInfo": {"backend": "nccl", "rank": rank,
                            "world_size": world_size, "pg_count": 1,
                            "pg_config": [], "nccl_version": "2.21.5"},
        "record_shapes": 1,
        "with_stack": 0,
        "traceEvents": ev,
        "traceName": "/tmp/traces/host_%d.%d.pt.trace.json" % (pid, rank),
        "displayTimeUnit": "ms",
        "baseTimeNanoseconds": base_ns,
    }
    n_k = len(kernel_us)
    expected = {
        "rank": rank,
        "steps": [{"step": s, "dur_ns": round(step_us * slow * 1000)}
                  for s in range(steps)],
        "kernel": {"name": "ampere_sgemm_128x64_nn",
                   "count": steps * n_k,
                   "total_ns": round(steps * sum(kernel_us) * slow * 1000),
                   "min_ns": round(min(kernel_us) * slow * 1000),
                   "max_ns": round(max(kernel_us) * slow * 1000)},
        "launch": {"name": "cudaLaunchKernel",
                   "count": steps * (n_k + (1 if nccl else 0)),
                   "total_ns": steps * (n_k * 500 + (1000 if nccl else 0))},
        "memcpy": {"count": steps, "total_ns": steps * 4000},
        "mm": {"name": "aten::mm", "count": steps, "total_ns": steps * 5000},
        "memory_peak": 1048576 * steps,
        # first user event (step 0 at 10 us) to the last step's end
        "wall_ns": round(steps * step_us * slow * 1000),
        "x_events": len([e for e in ev if e["ph"] == "X"]),
        # events other than metadata, as summaries count them
        "events": len([e for e in ev if e["ph"] != "M"]),
    }
    return trace, expected


def write(path, trace):
    """Writes like Kineto: indented, one key per line; gzipped when the
    path ends in .gz."""
    text = json.dumps(trace, indent=2)
    if path.endswith(".gz"):
        with gzip.open(path, "wt") as f:
            f.write(text)
    else:
        with open(path, "w") as f:
            f.write(text)
    return path
