#!/usr/bin/env python3
"""The "gpu" member of the summary the library writes at exit, on the
simulated CUDA 13 machine: it equals what `tprof report --traces`
computes from the trace written beside it (every figure: the library's
reorder window never had to let an event through late here), and a
report over the summaries alone shows the GPU tables."""
import glob
import json
import os
import subprocess
import tempfile

from simrun import sim_prog, sim_run
from tplib import CLI, check, cleanup, done, eq, tprof_check

STEPS = 6


def tprof(*args):
    p = subprocess.run([CLI, "report"] + list(args), capture_output=True,
                       text=True, timeout=120)
    return p.returncode, p.stdout, p.stderr


def section(md, title):
    return md.split("## " + title + "\n", 1)[-1].split("\n## ", 1)[0]


r = sim_run([sim_prog("gpu_mix"), str(STEPS)])
eq("gpu_mix: exit 0, its own output only", (r.rc, r.stdout),
   (0, "done %d\n" % STEPS))
sums = glob.glob(os.path.join(r.dir, "summaries", "*.summary.json"))
if check("gpu_mix: a trace and a summary", r.path and len(sums) == 1,
         r.all_files()):
    tprof_check(r.path, "gpu_mix: tprof check")
    with open(sums[0]) as f:
        s = json.load(f)
    g = s.get("gpu") or {}
    eq("exit summary: schema_version 2, gpu version 2",
       (s["schema_version"], g.get("version")), (2, 2))
    eq("exit summary: kernels, copies, sets, launches as the program made",
       [g.get(k) for k in ("kernels", "memcpys", "memsets", "launches")],
       [8 * STEPS, STEPS, STEPS, 10 * STEPS])
    eq("exit summary: every step CPU-bound (the GPU idles in io)",
       (g.get("steps_cpu_bound"), g.get("steps_gpu_bound")), (STEPS, 0))
    eq("exit summary: ranges by GPU time, each called once a step",
       [(x["name"], x["calls"]) for x in g.get("ranges", [])],
       [("forward", STEPS), ("backward", STEPS), ("io", STEPS)])
    eq("exit summary: io launched nothing", g.get("ranges", [{}])[-1].get(
        "gpu_ns"), 0)
    # each step's io sleeps >= 2 ms with the GPU synchronized before it:
    # the 5 longest gaps are at least that long (on a loaded machine a
    # preempted launch can make another gap as long, so not all are io)
    gaps = g.get("idle_gaps", [])
    eq("exit summary: 5 idle gaps, longest first, each >= 2 ms",
       (len(gaps), [x["dur_ns"] >= 2000000 for x in gaps],
        sorted(gaps, key=lambda x: -x["dur_ns"]) == gaps),
       (5, [True] * 5, True))
    check("exit summary: gaps name the CPU spans around them, the io "
          "range among them", any(x["cpu"][-1:] == ["io"] for x in gaps),
          gaps)
    eq("exit summary: nothing approximate",
       g.get("approx"), {"late": 0, "late_slices": 0, "late_slice_ns": 0,
                         "calls_evicted": 0, "cpu_dropped": 0,
                         "ranges_dropped": 0, "steps_dropped": 0,
                         "range_tags_dropped": 0,
                         "launch_delays_binned": False,
                         "utilisation_binned": False})
    check("exit summary: communication overlaps computation",
          0 < g.get("overlap_ns", 0) <= g.get("comm_ns", 0), g)
    # the same figures from the trace, exactly
    sd = tempfile.mkdtemp(prefix="tprof-gpusum-")
    rc, _, err = tprof("--traces", "--summaries", sd, r.path)
    eq("report --traces: exit 0", (rc, err), (0, ""))
    got = os.path.join(sd, os.path.basename(sums[0]))
    t = {}
    if os.path.exists(got):
        with open(got) as f:
            t = json.load(f).get("gpu") or {}
    eq("report --traces: window 0 (every event held: exact)",
       t.get("window"), 0)
    diff = sorted(k for k in set(g) | set(t)
                  if k != "window" and g.get(k) != t.get(k))
    eq("exit summary's gpu member == the one computed from its trace",
       diff, [])
    # a report over the summaries alone has the GPU tables, and they are
    # those of a report over the traces
    rc, md, err = tprof(r.dir)
    rc2, md2, _ = tprof("--traces", r.dir)
    eq("report over the summary: exit 0, read from the summary",
       (rc, err, "1 from summaries" in md), (0, "", True))
    for title in ("GPU time", "Temporal breakdown", "Launch delay",
                  "GPU time per range", "Idle gaps"):
        sec = section(md, title)
        check("report over the summary: %s has a row for rank 0" % title,
              "\n| 0 |" in sec, sec)
        eq("report over the summary: %s as from the trace" % title,
           sec, section(md2, title))
    subprocess.run(["rm", "-rf", sd])
cleanup(r)
done()
