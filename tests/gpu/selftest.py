"""Self-test of tests/gpu/tracecheck.py, no GPU needed.

Builds a synthetic trace that follows the contract for known_work.cu's
work (its EXPECT line, from `build/gpu/known_work_shared --expect` when
built), checks that it passes (tracecheck and `tprof check`), then that
each violation fails: a missing flow, a double-counted kernel, a GPU op
before its launch, CUPTI off or dropping. Then the torch comparison, the
command-line checks and the report. Prints PASS/FAIL lines; exit 1 on a FAIL.
"""
import copy
import gzip
import json
import os
import shutil
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import gpucheck as gc  # noqa: E402
import tracecheck as tc  # noqa: E402

EXPECT = {"kernels": [
    {"match": "fill_kernel(", "count": 2, "grid": [64, 1, 1], "block": [256, 1, 1], "graph": False},
    {"match": "axpy_kernel(", "count": 3, "grid": [32, 1, 1], "block": [128, 1, 1], "graph": False},
    {"match": "ops::scale<float>(", "count": 4, "grid": [16, 2, 1], "block": [64, 2, 1], "graph": False},
    {"match": "ex_kernel(", "count": 1, "grid": [8, 1, 1], "block": [32, 1, 1], "graph": False},
    {"match": "graph_add(", "count": 2, "grid": [4, 1, 1], "block": [256, 1, 1], "graph": True},
    {"match": "graph_double(", "count": 2, "grid": [2, 1, 1], "block": [512, 1, 1], "graph": True}],
    "memcpy": {"HtoD": [2, 524288], "DtoH": [1, 262144], "DtoD": [1, 262144]},
    "memset": [3, 786432], "graph_launches": 2, "ops_per_graph": 3}
PID, DEV, BASE = 4242, 0, 1763600000000000000
failures = 0


def check(name, cond, why=""):
    global failures
    failures += not cond
    print(("PASS %s" % name) if cond else ("FAIL %s: %s" % (name, why)))


def expect():
    exe = os.path.join(tc.ROOT, "build", "gpu", "known_work_shared")
    if os.access(exe, os.X_OK):
        out = subprocess.run([exe, "--expect"], capture_output=True, text=True).stdout
        got = tc.line_json(out, "EXPECT ")
        check("known_work --expect matches the self-test's copy", got == EXPECT, got)
        return got or EXPECT
    print("note: build/gpu/known_work_shared not built; using the built-in EXPECT")
    return EXPECT


def synth(ex, cpu_name="cudaLaunchKernel"):
    """A trace of ex's work following the contract: one CPU call per
    launch, its GPU op(s) on streams 7 (plain) and 13 (graph), flows."""
    calls = []   # (cpu name, [op dicts])
    for k in ex["kernels"]:
        if k["graph"]:
            continue
        for _ in range(k["count"]):
            calls.append((cpu_name, [dict(cat="kernel", name="void %sfloat*, int)" % k["match"],
                                          args={"grid": k["grid"], "block": k["block"],
                                                "registers per thread": 16, "shared memory": 0})]))
    for kind, (n, b) in ex["memcpy"].items():
        for _ in range(n):
            calls.append(("cudaMemcpy", [dict(cat="gpu_memcpy", name="Memcpy %s (Pageable -> Device)" % kind,
                                              args={"kind": kind, "bytes": b // n,
                                                    "memory bandwidth (GB/s)": 10.0})]))
    gk = [k for k in ex["kernels"] if k["graph"]]
    n_graph_sets = ex["graph_launches"] * (ex["ops_per_graph"] - len(gk))
    set_bytes = ex["memset"][1] // ex["memset"][0]
    mset = dict(cat="gpu_memset", name="Memset (Device)",
                args={"bytes": set_bytes, "memory bandwidth (GB/s)": 10.0})
    for _ in range(ex["memset"][0] - n_graph_sets):
        calls.append(("cudaMemset", [copy.deepcopy(mset)]))
    for g in range(ex["graph_launches"]):
        ops = []
        for node, k in enumerate(gk):
            ops.append(dict(cat="kernel", name="void %sfloat*, int)" % k["match"],
                            args={"grid": k["grid"], "block": k["block"], "registers per thread": 16,
                                  "shared memory": 0, "graph id": 1, "graph node id": node}))
        ops[1:1] = [copy.deepcopy(mset)]
        calls.append(("cudaGraphLaunch", ops))
    ev = [{"ph": "M", "name": "process_name", "pid": PID, "tid": 0, "args": {"name": "known_work"}}]
    t_cpu, t_gpu = 100.0, 0.0
    for corr, (name, ops) in enumerate(calls, start=1):
        ev.append({"ph": "X", "cat": "cuda_runtime", "name": name, "pid": PID, "tid": PID,
                   "ts": t_cpu, "dur": 5.0, "args": {"ret": 0, "correlation": corr}})
        stream = 13 if name == "cudaGraphLaunch" else 7
        for i, op in enumerate(ops):
            t_gpu = max(t_gpu, t_cpu + 3.0)
            op.update(ph="X", pid=DEV, tid=stream, ts=t_gpu, dur=2.0)
            op["args"].update(device=DEV, stream=stream, correlation=corr)
            ev.append(op)
            if i == 0:  # one start per correlation, with its first op
                ev.append({"ph": "s", "cat": "ac2g", "name": "ac2g", "id": corr,
                           "pid": PID, "tid": PID, "ts": t_cpu})
            ev.append({"ph": "f", "bp": "e", "cat": "ac2g", "name": "ac2g", "id": corr,
                       "pid": DEV, "tid": stream, "ts": t_gpu})
            t_gpu += 2.5
        t_cpu += 10.0
    return {"schemaVersion": 1, "traceName": "native-rank0", "displayTimeUnit": "ms",
            "baseTimeNanoseconds": BASE, "distributedInfo": {"rank": 0, "world_size": 1},
            "traceEvents": ev, "deviceProperties": [{"id": DEV, "name": "NVIDIA H100 80GB HBM3"}],
            "tprof": {"version": "selftest", "pid": PID,
                      "cupti": {"state": "on", "reason": "", "version": 13, "records": 21,
                                "dropped": 0, "zero_timestamps": 0, "refused_buffers": 0}}}


def write(t, path):
    """tprof's layout: one event per line, ts/dur with three decimals."""
    def ev(e):
        e = dict(e)
        nums = {k: e.pop(k) for k in ("ts", "dur") if k in e}
        s = json.dumps(e, separators=(",", ":"))[:-1]
        return s + "".join(',"%s":%.3f' % kv for kv in nums.items()) + "}"
    top = {k: v for k, v in t.items() if k != "traceEvents"}
    body = ",\n".join(map(ev, t["traceEvents"]))
    head = json.dumps(top)[1:-1].replace('"rank":', '"rank": ')
    with gzip.open(path, "wt") as f:
        f.write('{\n"traceEvents": [\n%s\n],\n%s\n}\n' % (body, head))


def problems(t, ex):
    p = tc.Problems()
    tc.contract(t, p)
    tc.native(t, ex, p)
    return p.list()


def has(probs, text):
    return any(text in x for x in probs)


def ops_of(t, cat=None):
    return [e for e in t["traceEvents"] if e.get("ph") == "X" and e.get("pid") == DEV
            and (cat is None or e["cat"] == cat)]


def libs_selftest():
    """tracecheck.libs on a synthetic torch_libs trace, then broken ones."""
    ex = {"gemm_flops": 2 * 512 * 256 * 128, "gemms": 2, "range": "tprof-libs",
          "allreduce_bytes": 64 << 20}

    def x(cat, name, ts, dur, **args):
        return dict(ph="X", cat=cat, name=name, pid=PID, tid=PID, ts=ts, dur=dur, args=args)
    t = {"distributedInfo": {"rank": 0, "world_size": 1, "backend": "nccl",
                             "nccl_world_size": 1},
         "traceEvents": [
             x("user_annotation", "tprof-libs", 10.0, 100.0),
             x("cublas", "cublasSgemm_v2", 11.0, 2.0, flops=ex["gemm_flops"]),
             x("cublas", "cublasSgemm_v2", 14.0, 2.0, flops=ex["gemm_flops"]),
             x("cudnn", "cudnnBackendExecute", 20.0, 5.0),
             x("nccl", "ncclAllReduce", 30.0, 5.0, bytes=ex["allreduce_bytes"])]}
    check("libs: a right trace passes", not tc.libs(t, ex)[0].list(),
          tc.libs(t, ex)[0].list())
    bad = copy.deepcopy(t)
    bad["traceEvents"][2]["args"]["flops"] = 1
    check("libs: a GEMM with wrong FLOPs fails",
          has(tc.libs(bad, ex)[0].list(), "cuBLAS"))
    bad = copy.deepcopy(t)
    bad["traceEvents"][1]["ts"] = 200.0
    check("libs: a GEMM outside the NVTX range fails",
          has(tc.libs(bad, ex)[0].list(), "outside the range"))
    bad = copy.deepcopy(t)
    del bad["traceEvents"][3]
    check("libs: no cuDNN event fails", has(tc.libs(bad, ex)[0].list(), "cuDNN"))
    bad = copy.deepcopy(t)
    bad["traceEvents"][4]["args"]["bytes"] = 4
    check("libs: an all-reduce of other bytes fails",
          has(tc.libs(bad, ex)[0].list(), "NCCL"))
    bad = copy.deepcopy(t)
    bad["distributedInfo"].pop("backend")
    check("libs: distributedInfo without NCCL fails",
          has(tc.libs(bad, ex)[0].list(), "distributedInfo"))


def steps_selftest():
    """tracecheck.steps on a synthetic --torch-steps trace, then broken ones."""
    def x(cat, name, ts, dur, tid=PID, pid=PID, **args):
        return dict(ph="X", cat=cat, name=name, pid=pid, tid=tid, ts=ts, dur=dur, args=args)

    def trace(extra=(), fin=1):
        return {"tprof": {"cupti": {"finalized": fin}}, "traceEvents": [
            x("user_annotation", "ProfilerStep#2", 10.0, 10.0, tid=1000000000),
            x("user_annotation", "ProfilerStep#3", 20.0, 10.0, tid=1000000000),
            x("cuda_runtime", "cudaLaunchKernel", 12.0, 1.0, correlation=7),
            x("kernel", "k", 25.0, 30.0, pid=0, tid=7, correlation=7)] + list(extra)}
    check("steps: a right trace passes", not tc.steps(trace(), [2, 3])[0].list(),
          tc.steps(trace(), [2, 3])[0].list())
    check("steps: other kept steps fail",
          has(tc.steps(trace(), [1, 2])[0].list(), "schedule"))
    bad = trace([x("cuda_runtime", "cudaLaunchKernel", 40.0, 1.0, correlation=9),
                 x("kernel", "k2", 45.0, 1.0, pid=0, tid=7, correlation=9)])
    check("steps: a kernel launched outside the steps fails",
          has(tc.steps(bad, [2, 3])[0].list(), "outside"))
    check("steps: CUPTI left subscribed fails",
          has(tc.steps(trace(fin=0), [2, 3])[0].list(), "finalized"))


def stacks_selftest():
    """tracecheck.stacks on a synthetic torch_stacks trace, then broken ones."""
    py = ["cudaStreamSynchronize+0x1 (libcudart.so.12)",
          "_PyEval_EvalFrameDefault+0x1 (libpython3.12.so.1.0)",
          "py::steps:/x/tests/gpu/torch_loop.py", "py::<module>:/x/tests/gpu/torch_loop.py",
          "Py_BytesMain+0x1 (libpython3.12.so.1.0)"]

    def trace(*stacks):
        return {"tprof": {"backtraces": {"unique_stacks": len(stacks)}}, "traceEvents": [
            dict(ph="X", cat="cuda_runtime", name="cudaStreamSynchronize", pid=PID, tid=PID,
                 ts=float(i), dur=1.0, args={"stack": s} if s else {})
            for i, s in enumerate(stacks)]}
    good = trace(py, py[:1] + py[2:])
    new_py = sys.version_info >= (3, 12)
    check("stacks: a right trace passes", not tc.stacks(good)[0].list(),
          tc.stacks(good)[0].list())
    check("stacks: a call without a stack fails",
          has(tc.stacks(trace(py, None))[0].list(), "without a stack"))
    check("stacks: no Python frame fails under Python 3.12+ only",
          has(tc.stacks(trace(py[:2]))[0].list(), "torch_loop.py") == new_py)
    check("stacks: a stack cut before <module> fails under Python 3.12+ only",
          has(tc.stacks(trace(py[:3]))[0].list(), "<module>") == new_py)


def truth_selftest():
    """The GPU-truth check on the contract trace: 21 GPU ops, all linked,
    none overlapping; then each violation."""
    good = synth(expect())
    n = len(ops_of(good))
    check("truth: a right trace passes",
          not tc.truth(good, n, tc.Problems())[0].list(),
          tc.truth(good, n, tc.Problems())[0].list())
    bad = copy.deepcopy(good)
    bad["traceEvents"] = [e for e in bad["traceEvents"]
                          if not (e.get("ph") == "f" and e["id"] == 1)]
    check("truth: an op without its flow fails",
          has(tc.truth(bad, n, tc.Problems())[0].list(), "no flow"))
    bad = copy.deepcopy(good)
    ops = [e for e in bad["traceEvents"] if e.get("cat") == "kernel"]
    ops[1]["ts"] = ops[0]["ts"] + 1.0
    check("truth: two ops overlapping on a stream fail",
          has(tc.truth(bad, n, tc.Problems())[0].list(), "overlap"))
    bad = copy.deepcopy(good)
    bad["tprof"]["cupti"]["unlinked"] = 3
    check("truth: unlinked records counted by tprof fail",
          has(tc.truth(bad, n, tc.Problems())[0].list(), "unlinked"))
    check("truth: a missing op fails",
          has(tc.truth(good, n + 1, tc.Problems())[0].list(), "GPU ops"))


def gpucheck_trace(ops, overlapped=0, record=-0.4):
    """A trace of kernels ops = [(name, ts_us, dur_us, grid, call name)],
    each launched by its own call 1 us before it, then a cudaEventRecord
    at record us from its start."""
    ev = []
    for i, (name, ts, dur, grid, call) in enumerate(ops, 1):
        ev.append(dict(ph="X", cat="cuda_runtime", name=call, pid=PID, tid=PID,
                       ts=ts - 1.0, dur=0.5, args={"correlation": i}))
        ev.append(dict(ph="X", cat="cuda_runtime", name="cudaEventRecord",
                       pid=PID, tid=PID, ts=ts + record, dur=0.1, args={}))
        ev.append(dict(ph="X", cat="kernel", name=name, pid=DEV, tid=7, ts=ts,
                       dur=dur, args={"correlation": i, "grid": [grid, 1, 1]}))
    return {"traceEvents": ev, "tprof": {"cupti": {"overlapped": overlapped}}}


def gpucheck_selftest():
    """gpucheck.py's judges: the PDL pairs against the GPU's own times,
    kernel durations against cudaEvent elapsed times; then each wrong."""
    def pdl(ops, overlapped=1):
        p = tc.Problems()
        gc.pdl_judge(gpucheck_trace(ops, overlapped), 2, gpu, p, {})
        return p.list()
    # Pair 0 overlapped on the GPU (the secondary began 60 us into the
    # primary's 100 us), pair 1 not; trace times = GPU ns / 1000 + 5.
    gpu = [[1000000, 1100000, 1060000, 1120000],
           [2000000, 2100000, 2100500, 2120500]]
    good = [("pdl_primary", 1005.0, 100.5, 1, "cudaLaunchKernel"),
            ("pdl_secondary", 1064.9, 60.2, 1, "cudaLaunchKernelExC"),
            ("pdl_primary", 2005.0, 100.4, 1, "cudaLaunchKernel"),
            ("pdl_secondary", 2105.4, 20.2, 1, "cudaLaunchKernelExC")]
    check("gpucheck pdl: the trace of what the GPU ran passes",
          not pdl(good), pdl(good))
    moved = copy.deepcopy(good)
    moved[1] = ("pdl_secondary", 1105.6, 60.2, 1, "cudaLaunchKernelExC")
    check("gpucheck pdl: an overlapped pair moved apart fails",
          has(pdl(moved), "apart in the trace"), pdl(moved))
    check("gpucheck pdl: overlap not counted by tprof fails",
          has(pdl(good, 0), "counts fewer"), pdl(good, 0))
    plain = copy.deepcopy(good)
    plain[3] = plain[3][:4] + ("cudaLaunchKernel",)
    check("gpucheck pdl: a secondary not from cudaLaunchKernelEx fails",
          has(pdl(plain), "not linked to a cudaLaunchKernelEx"), pdl(plain))
    short = copy.deepcopy(good)
    short[2] = ("pdl_primary", 2005.0, 90.0, 1, "cudaLaunchKernel")
    check("gpucheck pdl: a span shorter than the GPU measured fails",
          has(pdl(short), "does not hold what the GPU measured"), pdl(short))

    def events(ops, evs, record=-0.4):
        p = tc.Problems()
        gc.event_judge(gpucheck_trace(ops, record=record), evs, p, {})
        return p.list()
    evs = {"idle": {"grid": 2, "ns": 10000, "event_ms": 0.045},
           "kernels": [{"grid": 3, "ns": 20000, "event_ms": 0.0215},
                       {"grid": 4, "ns": 10000000, "event_ms": 10.004}]}
    good = [("timed(unsigned long long)", 100.0, 20.8, 3, "cudaLaunchKernel"),
            ("timed(unsigned long long)", 1200.0, 10001.0, 4, "cudaLaunchKernel"),
            ("timed(unsigned long long)", 50.0, 10.1, 2, "cudaLaunchKernel"),
            ("blocker(unsigned long long)", -100.5, 200.0, 1, "cudaLaunchKernel"),
            ("blocker(unsigned long long)", 999.5, 200.0, 1, "cudaLaunchKernel")]
    check("gpucheck events: durations within the events pass",
          not events(good, evs), events(good, evs))
    for what, i, dur, text in (
            ("a kernel longer than its events", 0, 24.0, "differ"),
            ("events far longer than the kernel", 1, 9950.0, "differ"),
            ("a kernel shorter than it spun", 0, 17.0, "shorter than it ran"),
            ("an idle stream's events inside their kernel", 2, 48.0, "differ")):
        bad = copy.deepcopy(good)
        bad[i] = bad[i][:2] + (dur,) + bad[i][3:]
        check("gpucheck events: %s fails" % what, has(events(bad, evs), text),
              events(bad, evs))
    check("gpucheck events: a missing kernel fails",
          has(events(good[1:], evs), "missing"), events(good[1:], evs))
    late = copy.deepcopy(good)
    late[0] = late[0][:1] + (150.0, 60.0) + late[0][3:]
    check("gpucheck events: a kernel launched late is not compared, "
          "and fails only when none is", has(events(late, evs),
                                             "every 20 us kernel's events"),
          events(late, evs))
    check("gpucheck events: a second event recorded after its kernel ended "
          "is not compared", has(events(good, evs, 15000.0), "none compared"),
          events(good, evs, 15000.0))


def torch_judge_selftest(tmp):
    """gpucheck.py's torch.profiler-alongside judge: the three documented
    outcomes pass, each with its evidence missing fails."""
    win = {"t0_ns": BASE + 1000000, "t1_ns": BASE + 2000000, "steps": 2}
    k = [{"ph": "X", "cat": "kernel", "name": "k", "ts": 1000.0 + i, "dur": 1.0}
         for i in range(10)]
    prof = os.path.join(tmp, "profiler.json")
    wpath = os.path.join(tmp, "window.json")
    with open(prof, "w") as f:
        json.dump({"traceEvents": k}, f)
    with open(wpath, "w") as f:
        json.dump(win, f)

    def judge(cupti, events, err):
        t = {"baseTimeNanoseconds": BASE, "traceEvents": events,
             "tprof": {"cupti": dict({"other_client": "torch.profiler"}, **cupti)}}
        p = tc.Problems()
        gc.torch_judge(t, err, prof, wpath, p, {})
        return p.list()
    early = [dict(e, ts=e["ts"] - 900.0) for e in k]
    took = {"state": "on", "stopped_why": "another CUPTI client took over"}
    warn = "tprof: warning: torch.profiler took CUPTI at 1.2 s: GPU activity ..."
    check("gpucheck torch: handed over, one warning, kernels before: passes",
          not judge(took, early, warn), judge(took, early, warn))
    check("gpucheck torch: handed over without the warning fails",
          has(judge(took, early, ""), "not one warning"))
    first = {"state": "off", "reason": "torch.profiler was using CUPTI before "
             "tprof started it (at 0.0 s), and is never displaced"}
    warn1 = "tprof: warning: torch.profiler was using CUPTI before tprof started it"
    check("gpucheck torch: left to a client there first: passes",
          not judge(first, [], warn1), judge(first, [], warn1))
    check("gpucheck torch: left to it, yet GPU activity, fails",
          has(judge(first, early, warn1), "GPU activity"))
    shared = {"state": "on", "subscribers": "several"}
    check("gpucheck torch: sharing with the same kernels passes",
          not judge(shared, k, ""), judge(shared, k, ""))
    check("gpucheck torch: sharing with half the kernels fails",
          has(judge(shared, k[:5], ""), "kernel counts differ"))
    check("gpucheck torch: tprof not seeing torch.profiler fails",
          has(judge(dict(shared, other_client=None), k, ""), "did not see"))
    check("gpucheck torch: neither outcome fails",
          has(judge({"state": "on", "subscribers": "one"}, k, ""), "neither"))


def main():
    ex = expect()
    good = synth(ex)
    probs = problems(good, ex)
    check("contract trace passes", not probs, probs)
    tmp = tempfile.mkdtemp(prefix="tprof-gpu-selftest-")
    path = os.path.join(tmp, "native-rank0.trace.json.gz")
    write(good, path)
    check("written trace reads back the same", tc.load(path) == good)
    if os.access(tc.CLI, os.X_OK):
        p = tc.Problems()
        tc.tprof_check(path, p)
        check("tprof check accepts the synthetic trace", not p.list(), p.list())
    check("static-cudart style CPU names pass",
          not problems(synth(ex, "cudaLaunchKernel_v7000"), ex))

    t = copy.deepcopy(good)   # missing flow end
    t["traceEvents"].remove(next(e for e in t["traceEvents"] if e["ph"] == "f"))
    probs = problems(t, ex)
    check("missing flow end fails", has(probs, "GPU op without its flow end"), probs)
    t = copy.deepcopy(good)   # missing flow start
    t["traceEvents"].remove(next(e for e in t["traceEvents"] if e["ph"] == "s"))
    check("missing flow start fails",
          has(problems(t, ex), "without exactly one start and one end per GPU op"))
    t = copy.deepcopy(good)   # flow start on no CPU event
    next(e for e in t["traceEvents"] if e["ph"] == "s")["ts"] += 1.0
    check("flow start off its CPU event fails",
          has(problems(t, ex), "flow start not on a CPU event"))

    t = copy.deepcopy(good)   # double-counted kernel: same op, flow and all, twice
    k = ops_of(t, "kernel")[0]
    f = next(e for e in t["traceEvents"] if e["ph"] == "f" and e["id"] == k["args"]["correlation"])
    s = next(e for e in t["traceEvents"] if e["ph"] == "s" and e["id"] == k["args"]["correlation"])
    t["traceEvents"] += [copy.deepcopy(k), copy.deepcopy(f)]
    probs = problems(t, ex)
    check("double-counted kernel fails", has(probs, "kernel count") and
          has(probs, "wrong number of GPU ops"), probs)
    t = copy.deepcopy(good)   # a graph kernel missing, with one flow of its id
    k = ops_of(t, "kernel")[-1]
    t["traceEvents"].remove(next(e for e in t["traceEvents"] if e["ph"] == "f" and
                                 e["id"] == k["args"]["correlation"] and
                                 e["ts"] == k["ts"]))
    t["traceEvents"].remove(k)
    probs = problems(t, ex)
    check("missing graph kernel fails", has(probs, "kernel count") and
          not has(probs, "flow"), probs)

    t = copy.deepcopy(good)   # GPU op before its launch
    op = ops_of(t, "gpu_memcpy")[0]
    f = next(e for e in t["traceEvents"] if e["ph"] == "f" and e["id"] == op["args"]["correlation"])
    op["ts"] = f["ts"] = op["ts"] - 4.0
    probs = problems(t, ex)
    check("GPU op before its CPU call fails", has(probs, "GPU op starting before its CPU call"), probs)
    op["ts"] = f["ts"] = op["ts"] + 1.0    # now exactly at its CPU call's start
    p, fig = tc.contract(t, tc.Problems())
    check("GPU op clamped onto its CPU call is counted, not failed",
          not has(p.list(), "before its CPU call") and
          fig.get("clamped_to_launch") == 1, (p.list(), fig))

    for mut, text in [(lambda t: t["tprof"]["cupti"].update(state="off", reason="no libcupti"),
                       "state is 'off'"),
                      (lambda t: t["tprof"]["cupti"].update(dropped=3), "dropped is 3"),
                      (lambda t: t["tprof"].pop("cupti"), "no tprof.cupti"),
                      (lambda t: ops_of(t, "kernel")[0].update(name="_Z11fill_kernelPfi"),
                       "unexpected kernel"),
                      (lambda t: ops_of(t, "kernel")[-1]["args"].pop("graph id"), "graph"),
                      (lambda t: ops_of(t, "kernel")[0]["args"].update(grid=[1, 1, 1]), "grid/block"),
                      (lambda t: ops_of(t, "gpu_memcpy")[0].update(pid=1), "pid/tid"),
                      (lambda t: ops_of(t, "gpu_memset")[0]["args"].update(bytes=1), "memset [count, bytes]"),
                      (lambda t: t["traceEvents"].append(dict(ops_of(t, "kernel")[0], ph="X")),
                       "kernel count")]:
        t = copy.deepcopy(good)
        mut(t)
        probs = problems(t, ex)
        check("violation detected: %s" % text, has(probs, text), probs)

    libs_selftest()
    steps_selftest()
    stacks_selftest()
    truth_selftest()
    gpucheck_selftest()
    torch_judge_selftest(tmp)
    # torch comparison
    ks = [{"ph": "X", "cat": "kernel", "name": "k%d" % (i % 5), "ts": 1000.0 + i, "dur": 1.0}
          for i in range(100)]
    check("compare: same kernels pass", not tc.compare(ks, ks)[0].list())
    check("compare: 1% fewer, 5% shorter pass",
          not tc.compare(ks[:99], [dict(e, dur=1.05) for e in ks])[0].list())
    check("compare: 3% fewer fails", has(tc.compare(ks[:97], ks)[0].list(), "counts differ"))
    check("compare: 11% longer fails",
          has(tc.compare([dict(e, dur=1.11) for e in ks], ks)[0].list(), "time differs"))
    tt = {"baseTimeNanoseconds": BASE, "traceEvents": ks}
    check("kernels in a window", len(tc.kernels(tt, (BASE + 1010000, BASE + 1020000))) == 10)

    # command line: the native check, skipped runs, overhead, the report
    def run_tc(*a):
        return subprocess.run([sys.executable, tc.__file__] + list(a),
                              capture_output=True, text=True).returncode

    def status(d):
        return tc.load(os.path.join(d, "result.json"))["status"]

    res = os.path.join(tmp, "res")
    d = os.path.join(res, "native")
    os.makedirs(os.path.join(d, "trace"))
    write(good, os.path.join(d, "trace", "native-rank0.trace.json.gz"))
    with open(os.path.join(d, "run.out"), "w") as f:
        f.write("EXPECT %s\nknown_work: ok\n" % json.dumps(ex))
    with open(os.path.join(d, "run.rc"), "w") as f:
        f.write("0\n")
    run_tc("native", d, "native")
    check("cli: native passes", status(d) == "pass", tc.load(os.path.join(d, "result.json")))
    d = os.path.join(res, "native_static")
    os.makedirs(d)
    with open(os.path.join(d, "run.err"), "w") as f:
        f.write("known_work: no usable CUDA device: cudaErrorNoDevice\n")
    with open(os.path.join(d, "run.rc"), "w") as f:
        f.write("77\n")
    run_tc("native", d, "native_static")
    check("cli: exit 77 is skipped", status(d) == "skipped")
    d = os.path.join(res, "overhead_native")
    os.makedirs(d)
    for label, secs in (("base", 0.2), ("tprof", 0.25)):
        with open(os.path.join(d, label + ".out"), "w") as f:
            f.write('RESULT {"launches": 100000, "seconds": %s, "per_launch_us": 2.0}\n' % secs)
        with open(os.path.join(d, label + ".rc"), "w") as f:
            f.write("0\n")
    run_tc("overhead", d, "base", "tprof")
    r = tc.load(os.path.join(d, "result.json"))
    check("cli: overhead figures", r["status"] == "pass" and r["figures"]["tprof"]["ratio_vs_base"] == 1.25, r)
    d = os.path.join(res, "torch_vs_profiler")
    os.makedirs(os.path.join(d, "trace"))
    write(good, os.path.join(d, "trace", "torch-rank0.trace.json.gz"))
    with open(os.path.join(d, "window.json"), "w") as f:
        json.dump({"t0_ns": BASE, "t1_ns": BASE + 10**9, "steps": 20}, f)
    with open(os.path.join(d, "profiler.json"), "w") as f:
        json.dump({"traceEvents": ops_of(good, "kernel")}, f)
    for label in ("tprof", "profiler"):
        with open(os.path.join(d, label + ".rc"), "w") as f:
            f.write("0\n")
    run_tc("torch", d)
    r = tc.load(os.path.join(d, "result.json"))
    check("cli: torch comparison passes", r["status"] == "pass" and
          r["figures"]["count_ratio"] == 1.0, r)
    with open(os.path.join(d, "profiler.json"), "w") as f:
        json.dump({"traceEvents": ops_of(good, "kernel")[:-1]}, f)
    run_tc("torch", d)
    check("cli: torch comparison off by 1 of 14 fails", status(d) == "fail")
    os.remove(os.path.join(d, "result.json"))
    rc = run_tc("report", res)
    check("report: missing checks fail, exit 1", rc == 1, rc)
    for name in ("torch_vs_profiler", "overhead_torch"):
        os.makedirs(os.path.join(res, name), exist_ok=True)
        run_tc("skip", os.path.join(res, name), "no torch")
    check("report: passes and skips, exit 0", run_tc("report", res) == 0)
    r = tc.load(os.path.join(res, "results.json"))
    check("report: results.json counts", (r["passed"], r["skipped"], r["failed"]) == (2, 3, 0), r)
    for name in ("native", "overhead_native"):
        run_tc("skip", os.path.join(res, name), "no GPU")
    check("report: all skipped, exit 3", run_tc("report", res) == 3)

    if failures:
        print("selftest failed (files in %s)" % tmp)
        return 1
    shutil.rmtree(tmp)
    print("selftest passed")
    return 0


if __name__ == "__main__":
    sys.exit(main())
