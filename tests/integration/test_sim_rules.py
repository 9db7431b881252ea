"""The simulated CUPTI's rules (tests/sim/README.md, "Rules enforced"),
each broken on purpose by a client of its own (tests/sim/progs/rules.cu,
no tprof): the simulation ends the process with a line naming the rule,
or, for a call after cuptiFinalize with no graph launched, starts CUPTI
again and logs it. tprof's own runs on the simulation check that it
breaks none of them (test_gpu_truth.py, test_gpu_share.py)."""
from simrun import sim_prog, sim_run
from tplib import check, cleanup, done, eq

ABORTS = {
    "flush-in-resource": "cuptiActivityFlushAll called from a resource "
                         "callback",
    "flush-in-buffer": "cuptiActivityFlushAll called from a buffer "
                       "completion callback",
    "finalize-in-buffer": "cuptiFinalize called from a buffer completion "
                          "callback",
    "after-finalize-graph": "cuptiGetTimestamp after cuptiFinalize "
                            "re-initialises CUPTI with CUDA graphs launched",
}

for case, line in sorted(ABORTS.items()):
    r = sim_run([sim_prog("rules"), case], preload=False)
    check("%s: the simulation aborts, naming the rule" % case,
          r.rc != 0 and line in r.stderr and r.log and r.log.of("abort"),
          (r.rc, r.stderr[-600:]))
    cleanup(r)

r = sim_run([sim_prog("rules"), "after-finalize"], preload=False)
eq("after-finalize: no graph, the program survives", r.rc, 0)
if r.log:
    eq("after-finalize: the call after cuptiFinalize re-initialised CUPTI",
       [(e["by"], e["graphs"]) for e in r.log.of("cupti")
        if e.get("call") == "reinit"], [("cuptiGetTimestamp", 0)])
cleanup(r)

# Breaking none: the same client, flushing from main.
r = sim_run([sim_prog("rules"), "none"], preload=False)
check("none: the program survives, nothing aborted",
      r.rc == 0 and r.log and not r.log.of("abort"), r.stderr[-600:])
cleanup(r)

done()
