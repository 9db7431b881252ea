"""Opt-in (`make test-hta`, needs `pip install holistictraceanalysis
psutil`): HTA, a real consumer of Kineto-style traces, loads two ranks'
tprof traces, finds their ranks and reads their events.

HTA is given the trace files, and also the directory alone: with
trace_dir alone it reads every .json and .gz file there, which works
because the summaries are in summaries/ (README, "Using the traces with
HTA")."""
import glob
import os
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "integration"))
from tplib import *  # noqa: E402

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
done()
