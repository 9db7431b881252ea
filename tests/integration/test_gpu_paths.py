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
  to it without loading libcupti at all.
"""
import os

import simrun
from simrun import exact, unlinked_ops, warnings
from tplib import check, cleanup, done, eq, xevents


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


cudart_newer()
for m in (13, 12):
    late_library(m)
    other_tool(m)
done()
