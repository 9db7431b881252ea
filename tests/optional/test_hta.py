"""Opt-in (`make test-hta`, needs `pip install holistictraceanalysis
psutil`): HTA, a real consumer of Kineto-style traces, loads two ranks'
tprof traces, finds their ranks and reads their events.

HTA is given the trace files, and also the directory alone: with
trace_dir alone it reads every .json and .gz file there, which works
because the summaries are in summaries/ (docs/guide/perfetto-and-hta.md,
"HTA")."""
import glob
import os
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "integration"))
from tplib import *  # noqa: E402

# HTA rounds ns-resolution timestamps down to us unless told not to.
os.environ["HTA_DISABLE_NS_ROUNDING"] = "1"
try:
    from hta.trace_analysis import TraceAnalysis
except ImportError as e:
    print("SKIP hta: %s (pip install holistictraceanalysis psutil)" % e)
    sys.exit(0)

out = tempfile.mkdtemp(prefix="tprof-hta-")
for rank in (0, 1):
    r = run([prog("kernels"), "3"], env={"TPROF_OUTPUT_DIR": out, "RANK": str(rank),
                                         "WORLD_SIZE": "2"})
    eq("hta: rank %d traced" % rank, r.rc, 0)


def analysis(d):
    return TraceAnalysis(trace_files=sorted(glob.glob(
        os.path.join(d, "*.trace.json.gz"))), trace_dir=d)


a = analysis(out)
eq("hta: both ranks found by HTA's rank regex", sorted(a.t.traces.keys()), [0, 1])
df = a.t.get_trace(0)
names = {a.t.symbol_table.sym_table[i] for i in df["name"].unique()}
check("hta: runtime calls read", {"cudaLaunchKernel", "cudaMemcpy", "cudaMalloc"} <= names,
      str(names))
eq("hta: every launch read", int((df["name"] == a.t.symbol_table.sym_index["cudaLaunchKernel"]).sum()), 6)
d = TraceAnalysis(trace_dir=out)
eq("hta: trace_dir= alone loads the tprof output directory",
   sorted(d.t.traces.keys()), [0, 1])
shutil.rmtree(out, ignore_errors=True)

# NVTX ranges, async ranges and marks, and NCCL calls whose args carry a
# communicator "rank": HTA must still find each file's rank, and read the
# annotations.
out = tempfile.mkdtemp(prefix="tprof-hta-")
fake = os.path.join(BUILD, "tests", "fakenccl")
for rank in (0, 1):
    env = {"TPROF_OUTPUT_DIR": out, "RANK": str(rank), "WORLD_SIZE": "2",
           "TPROF_NAME": "nvtx"}
    r = run([prog("nvtx_calls")], env=env)
    eq("hta: nvtx rank %d traced" % rank, r.rc, 0)
    env.update({"TPROF_NAME": "nccl", "LD_LIBRARY_PATH": fake})
    r = run([prog("nccl_calls"), "fake"], env=env)
    eq("hta: nccl rank %d traced" % rank, r.rc, 0)
for name in ("nvtx", "nccl"):
    d = os.path.join(out, name)
    os.mkdir(d)
    for f in os.listdir(out):
        if f.startswith(name + "-"):
            os.rename(os.path.join(out, f), os.path.join(d, f))
    a = analysis(d)
    eq("hta: %s: both ranks found" % name, sorted(a.t.traces.keys()), [0, 1])
    df = a.t.get_trace(1)
    names = {a.t.symbol_table.sym_table[i] for i in df["name"].unique()}
    # HTA keeps complete (X) events only: marks and async ranges are not
    # in its model.
    want = {"outer", "registered", "worker range"} if name == "nvtx" else \
        {"ncclAllReduce", "ncclGroupEnd", "ncclCommInitRank"}
    check("hta: %s: events read" % name, want <= names, str(names))
shutil.rmtree(out, ignore_errors=True)

# --- tprof report's GPU analyses against HTA's, on torch.profiler traces ---
import json  # noqa: E402
import subprocess  # noqa: E402

import kineto_fixture  # noqa: E402


kd = tempfile.mkdtemp(prefix="tprof-hta-kineto-")
for rank, slow in ((0, 1.0), (1, 1.5)):
    # nccl: per step an NCCL kernel on stream 20 overlapping the GEMMs
    tr, _ = kineto_fixture.make(rank=rank, slow=slow, steps=4, nccl=True)
    kineto_fixture.write(os.path.join(kd, "rank-%d.json.gz" % rank), tr)
p = subprocess.run([CLI, "report", "--json", kd], capture_output=True,
                   text=True)
eq("hta compare: tprof report exit 0", p.returncode, 0)
mine = {g["rank"]: g for g in json.loads(p.stdout)["gpu"]} if \
    p.returncode == 0 else {}
a = TraceAnalysis(trace_dir=kd, include_last_profiler_step=True)
tb = a.get_temporal_breakdown(visualize=False)
for _, row in tb.iterrows():
    r = int(row["rank"])
    g = mine.get(r, {})
    eq("hta compare: rank %d temporal breakdown (ns)" % r,
       (g.get("idle_ns"), g.get("compute_ns"), g.get("non_compute_ns"),
        g.get("span_ns")),
       tuple(round(row[c] * 1000) for c in (
           "idle_time(us)", "compute_time(us)", "non_compute_time(us)",
           "kernel_time(us)")))
ov = a.get_comm_comp_overlap(visualize=False)
for _, row in ov.iterrows():
    r = int(row["rank"])
    g = mine.get(r, {})
    check("hta compare: rank %d comm/comp overlap" % r,
          g and abs(g["overlap_ns"] / g["comm_ns"] -
                    row["comp_comm_overlap_pctg"] / 100) < 0.00005,
          (g.get("overlap_ns"), g.get("comm_ns"), row.to_dict()))
_, kern = a.get_gpu_kernel_breakdown(visualize=False)
for r in (0, 1):
    g = mine.get(r, {})
    k = kern[kern["rank"] == r]
    hk = k[k["kernel_type"] != "MEMORY"]["sum (us)"].sum()
    hm = k[k["kernel_type"] == "MEMORY"]["sum (us)"].sum()
    eq("hta compare: rank %d kernel and memory sums (ns)" % r,
       (g.get("kernel_ns"), g.get("memcpy_ns", 0) + g.get("memset_ns", 0)),
       (round(hk * 1000), round(hm * 1000)))
ls = a.get_cuda_kernel_launch_stats(ranks=[0, 1], visualize=False)
for r, df in sorted(ls.items()):
    g = mine.get(r, {})
    d = sorted(round(x * 1000) for x in df["launch_delay"])
    eq("hta compare: rank %d launch delays: count, sum, min, max" % r,
       (g.get("launches"), g.get("launch_delay_sum_ns"),
        g.get("launch_delay_min_ns"), g.get("launch_delay_max_ns")),
       (len(d), sum(d), d[0] if d else None, d[-1] if d else None))
shutil.rmtree(kd, ignore_errors=True)
done()
