"""Launch paths a real machine takes that the plain runs of
test_gpu_truth.py do not, on the simulated machine (tests/sim/):

- a libcudart newer than the CUPTI loaded (a pip cudart 12.8 beside a
  toolkit CUPTI 12.6, SIM_CUDART_NEWER): __cudaLaunchKernel has no
  callback id in that CUPTI, so only the driver call inside it reaches
  tprof, and its kernels carry that call's correlation id;
- GPU code in a library the program dlopens (`import torch` loading
  libtorch_cuda): its module registration runs in the library's
  constructor, under the dynamic loader's lock, where CUPTI's start-up
  can deadlock (the simulation's CUPTI starts a thread that dlopens
  while holding CUPTI's lock, and aborts after 2 s of waiting);
- another tool named in CUDA_INJECTION64_PATH (nsys): tprof leaves CUPTI
  to it without loading libcupti at all;
- programmatic dependent launch (cudaLaunchKernelEx with
  cudaLaunchAttributeProgrammaticStreamSerialization): a kernel starts
  before the one before it on its stream ends, so ops of one stream
  overlap; each goes on a lane of the stream's track, none dropped or
  mis-nested, in JSON and Perfetto, and the summary's GPU busy time is
  their union.
"""
import json
import os
import shutil
import subprocess
import tempfile

import simrun
from simrun import exact, unlinked_ops, warnings
from tplib import CLI, check, cleanup, done, eq, tprof_check, xevents


def cudart_newer():
    label = "cudart newer than CUPTI"
    r = simrun.sim_run([simrun.sim_prog("two_threads", 12), "100"], mode=12,
                       env={"SIM_CUDART_NEWER": "1"})
    exact(label, r, 400)
    if not (r.trace and r.log):
        cleanup(r)
        return
    eq("%s: CUPTI saw the launches as cuLaunchKernel alone (the mode is "
       "what it says)" % label,
       sorted({(a["name"], a["depth"]) for a in r.log.api
               if "Launch" in a["name"]}), [("cuLaunchKernel", 1)])
    eq("%s: the launches are recorded once, as the hook names them" % label,
       sorted({e["name"] for e in xevents(r.trace)
               if "Launch" in e["name"]}), ["cudaLaunchKernel"])
    bad = unlinked_ops(r)
    eq("%s: every GPU op linked to its launch, none counted unlinked" %
       label, (bad[:5], len(bad), r.trace["tprof"]["cupti"]["unlinked"]),
       ([], 0, 0))
    cleanup(r)


def late_library(mode):
    """CUPTI starts after the library's constructors, before its first
    kernel."""
    label = "CUDA %d, GPU library dlopen-ed" % mode
    r = simrun.sim_run([simrun.sim_prog("late_main", mode),
                        simrun.sim_prog("libgpu_late.so", mode), "10"],
                       mode=mode)
    check("%s: no abort in the simulation (CUPTI not started under the "
          "loader's lock)" % label, r.log and not r.log.of("abort"),
          (r.rc, r.stderr[-600:]))
    exact(label, r, 10)
    if r.trace and r.log:
        eq("%s: every kernel linked to its launch" % label,
           unlinked_ops(r), [])
    cleanup(r)


def other_tool(mode):
    label = "CUDA %d, another tool injected" % mode
    tool = os.path.join(simrun.SIM, "bin", "libtool_inject.so")
    r = simrun.sim_run([simrun.sim_prog("two_threads", mode), "20"],
                       mode=mode, env={"CUDA_INJECTION64_PATH": tool})
    w = warnings(r)
    check("%s: one warning naming it" % label,
          len(w) == 1 and "CUDA_INJECTION64_PATH names %s" % tool in w[0],
          w)
    eq("%s: the program ends well" % label, r.rc, 0)
    if r.log:
        eq("%s: libcupti was never loaded" % label,
           r.log.of("loaded"), [])
    if r.trace:
        cats = {e.get("cat") for e in xevents(r.trace)}
        check("%s: CPU-side calls traced, no GPU op" % label,
              "cuda_runtime" in cats and "kernel" not in cats, cats)
    cleanup(r)


def union_ns(spans):
    total, end = 0, None
    for a, b in sorted(spans):
        if end is None or a > end:
            total += b - a
            end = b
        elif b > end:
            total += b - end
            end = b
    return total


def report_of(path):
    """tprof report --json of the trace file alone (no summary beside
    it): the GPU figures as read back from the trace's slices."""
    d = tempfile.mkdtemp(prefix="tprof-pdl-")
    try:
        shutil.copy(path, d)
        p = subprocess.run([CLI, "report", "--json",
                            os.path.join(d, os.path.basename(path))],
                           capture_output=True, text=True)
        return json.loads(p.stdout) if p.returncode == 0 else None
    finally:
        shutil.rmtree(d, ignore_errors=True)


def lanes_ok(t):
    """GPU ops on no track overlap (a stream's overlapping ops are on
    lanes of its own)."""
    tracks, bad = {}, 0
    for e in xevents(t):
        if e.get("cat") in simrun.KIND:
            tracks.setdefault((e["pid"], e["tid"]), []).append(
                (round(e["ts"] * 1000), round((e["ts"] + e["dur"]) * 1000)))
    for evs in tracks.values():
        evs.sort()
        bad += sum(1 for a, b in zip(evs, evs[1:]) if b[0] < a[1])
    return bad


def pdl(mode, fmt):
    rounds = 20
    label = "CUDA %d, programmatic dependent launch, %s" % (mode, fmt)
    env = {"TPROF_FORMAT": "perfetto"} if fmt == "Perfetto" else {}
    r = simrun.sim_run([simrun.sim_prog("pdl", mode), str(rounds)],
                       mode=mode, env=env)
    pf = [f for f in r.all_files() if f.endswith(".pftrace.gz")]
    if fmt == "Perfetto" and len(pf) == 1:
        r.path = os.path.join(r.dir, pf[0])
    if not check("%s: runs, a trace, a log" % label,
                 r.rc == 0 and r.path and r.log, (r.rc, r.stderr[-600:])):
        cleanup(r)
        return
    ops = [o for o in r.log.gpu_ops() if o["kind"] == "kernel"]
    overlapping = sum(1 for i, a in enumerate(ops) for b in ops[i + 1:]
                      if a["stream"] == b["stream"] and
                      a["start_raw"] < b["end_raw"] and
                      b["start_raw"] < a["end_raw"])
    eq("%s: the simulation overlapped kernels on one stream (3 pairs a "
       "round)" % label, (len(ops), overlapping), (4 * rounds, 3 * rounds))
    if fmt == "JSON":
        exact(label, r, 4 * rounds)
        eq("%s: every kernel linked to its launch" % label,
           unlinked_ops(r), [])
        eq("%s: no two GPU ops overlap on one track" % label,
           lanes_ok(r.trace), 0)
        cu = r.trace["tprof"]["cupti"]
        eq("%s: the two early kernels of each round on lanes 2 and 3, none "
           "unplaced or moved" % label,
           (cu["overlapped"], cu["unplaced"], cu["shifted"]),
           (2 * rounds, 0, 0))
        names = {e["args"]["name"] for e in r.trace["traceEvents"]
                 if e.get("ph") == "M" and e["name"] == "thread_name" and
                 e["pid"] == 0}
        check("%s: the lanes named after their stream" % label,
              {"stream 13", "stream 13 (2)", "stream 13 (3)"} <= names,
              names)
    else:
        tprof_check(r.path, "%s: tprof check passes" % label)
    rep = report_of(r.path)
    gpu = rep and rep["gpu"][0]
    want_ns = sum(o["end_raw"] - o["start_raw"] for o in ops)
    busy = union_ns((o["start_raw"], o["end_raw"]) for o in ops)
    check("%s: read back from the trace, every kernel with its time, the "
          "GPU busy for their union" % label,
          gpu and gpu["kernels"] == 4 * rounds and
          abs(gpu["kernel_ns"] - want_ns) <= 2 * len(ops) and
          abs(gpu["busy_ns"] - busy) <= 2 * len(ops),
          (gpu and (gpu["kernels"], gpu["kernel_ns"], gpu["busy_ns"]),
           (4 * rounds, want_ns, busy)))
    cleanup(r)


cudart_newer()
for m in (13, 12):
    late_library(m)
    other_tool(m)
    for f in ("JSON", "Perfetto"):
        pdl(m, f)
done()
