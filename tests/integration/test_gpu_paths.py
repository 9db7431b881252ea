"""Launch paths a real machine takes that the plain runs of
test_gpu_truth.py do not, on the simulated machine (tests/sim/):

- a libcudart newer than the CUPTI loaded (a pip cudart 12.8 beside a
  toolkit CUPTI 12.6, SIM_CUDART_NEWER): __cudaLaunchKernel has no
  callback id in that CUPTI, so only the driver call inside it reaches
  tprof, and its kernels carry that call's correlation id.
"""
import simrun
from simrun import exact, unlinked_ops
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


cudart_newer()
done()
