"""Sharing the GPU with the program's own profiler, on the simulated CUDA
13 machine (tests/sim/).

libkclient.so plays torch.profiler's Kineto: a library of the program,
linked to libcupti, that registers process-wide buffer callbacks with
buffers of its own (canaries around each), enables kernels, flushes and
disables, and never calls cuptiSubscribe (unless told to). Before this
was handled, tprof's buffers reached the client's completion callback,
which freed them: the program died (free(): invalid pointer).
"""
import re

import simrun
from simrun import kernels, report, warnings
from tplib import SANITIZE, cleanup, done, prog, skip, xevents

# Every case runs in both modes of the simulation (CUDA 13; CUDA 12 with
# libcupti.so.12 at API 28); each PASS line names its mode.
M = simrun.Modal()
check, eq, tprof_check = M.check, M.eq, M.tprof_check
sim_prog, sim_run = M.sim_prog, M.sim_run



def first_client():
    r = sim_run([sim_prog("kineto_like"), "first"],
                env={"KINETO_LIKE_FIRST": "1"})
    rep = report(r)
    eq("first client: it got every kernel launched while it was on",
       (rep.get("got _Z6beforePf"), rep.get("got _Z6duringPf"),
        rep.get("canaries_ok")), (100, 100, 1))
    w = warnings(r)
    check("first client: one warning; tprof stays CPU-side",
          len(w) == 1 and "was using CUPTI before tprof started it" in w[0] and
          w[0].endswith("GPU activity is not recorded, CPU-side tracing goes on"),
          w)
    if r.trace:
        eq("first client: no GPU activity in tprof's trace, 300 launches",
           (len([e for e in xevents(r.trace) if e.get("cat") == "kernel"]),
            len([e for e in xevents(r.trace) if e["name"] == "cudaLaunchKernel"])),
           (0, 300))
    cleanup(r)


def cases():
    # The client starts mid-run: tprof hands over at its first call.
    r = sim_run([sim_prog("kineto_like"), "mid"])
    rep = report(r)
    eq("mid-run client: the program ends well", r.rc, 0)
    eq("mid-run client: it got every kernel launched while it was on, and "
       "only those", (rep.get("got _Z6beforePf"), rep.get("got _Z6duringPf"),
                      rep.get("got _Z5afterPf")), (0, 100, 0))
    eq("mid-run client: its buffers' canaries held, no buffer not its own",
       (rep.get("canaries_ok"), rep.get("foreign_buffers")), (1, 0))
    w = warnings(r)
    check("mid-run client: one warning, naming it and the time",
          len(w) == 1 and re.search(r"libkclient\.so\) took CUPTI at [0-9.]+ s: "
                                    r"GPU activity after that is not in this "
                                    r"trace; CPU-side tracing goes on", w[0]), w)
    if r.trace:
        cu = r.trace["tprof"]["cupti"]
        eq("mid-run client: in the trace", (cu["other_client"],
                                            cu["stopped_why"]),
           ("another CUPTI client (libkclient.so)",
            "another CUPTI client took over"))
        eq("mid-run client: tprof kept the kernels before the hand-over",
           (len(kernels(r.trace, "before(float*)")),
            len(kernels(r.trace, "during(float*)"))), (100, 0))
        eq("mid-run client: CPU-side tracing went on (300 launches)",
           len([e for e in xevents(r.trace) if e["name"] == "cudaLaunchKernel"]),
           300)
        tprof_check(r.path, "mid-run client: tprof check passes")
    cleanup(r)

    # The client was there first (its library's constructor runs before
    # tprof's): never displaced.
    if M.mode == 12 and "thread" in SANITIZE:
        # Preloaded libraries' constructors run after the program's own
        # libraries': libkclient.so's calls tprof's (instrumented) CUPTI
        # interposer before TSan's runtime has started (nothing it
        # intercepts ran yet in this mode; a TSan-built program starts it
        # from .preinit_array): SIGSEGV in __tsan_func_entry, every run.
        skip("CUDA 12, first client: every check", "TSan's runtime is not "
             "started when the client's constructor calls into tprof")
    else:
        first_client()

    # A client that also subscribes (CUPTI before 13.3 allows one
    # subscriber): tprof has let its own go.
    r = sim_run([sim_prog("kineto_like"), "sub"])
    rep = report(r)
    eq("subscribing client: its cuptiSubscribe succeeds; every kernel",
       (rep.get("subscribe"), rep.get("got _Z6duringPf"), rep.get("canaries_ok")),
       (0, 100, 1))
    cleanup(r)

    # A client that reaches libcupti through a handle of its own (dlopen,
    # dlsym: XLA's profiler), which no interposed symbol sees. There
    # first (buffer callbacks registered in its constructor): tprof's
    # probe (cuptiActivityFlushAll succeeds only once someone registered
    # buffer callbacks) leaves CUPTI to it.
    own = {"KINETO_LIKE_DLSYM": "1"}
    if not (M.mode == 12 and "thread" in SANITIZE):
        r = sim_run([sim_prog("kineto_like"), "first"],
                    env=dict(own, KINETO_LIKE_FIRST="1"))
        rep = report(r)
        eq("own-handle client first: it got every kernel while it was on",
           (rep.get("got _Z6beforePf"), rep.get("got _Z6duringPf"),
            rep.get("canaries_ok"), rep.get("foreign_buffers")),
           (100, 100, 1, 0))
        w = warnings(r)
        check("own-handle client first: one warning; tprof stays CPU-side",
              len(w) == 1 and "through its own libcupti handle" in w[0] and
              "registered CUPTI's activity buffer callbacks before tprof"
              in w[0], w)
        if r.trace:
            eq("own-handle client first: named in the trace",
               r.trace["tprof"]["cupti"]["other_client"],
               "another CUPTI client (through its own libcupti handle)")
        cleanup(r)
    # Mid-run, it replaces tprof's buffer callbacks unseen: tprof's
    # buffers lent then never come back to it, which its forced flush at
    # the end finds out: one warning, the client named in the trace.
    r = sim_run([sim_prog("kineto_like"), "mid"], env=own)
    eq("own-handle client mid-run: the program ends well", r.rc, 0)
    w = warnings(r)
    check("own-handle client mid-run: one warning saying tprof's buffers "
          "were taken", len(w) == 1 and "replaced tprof's activity buffer "
          "callbacks" in w[0], w)
    if r.trace:
        cu = r.trace["tprof"]["cupti"]
        eq("own-handle client mid-run: in the trace",
           (cu["other_client"], cu["buffers_never_returned"] > 0),
           ("another CUPTI client (through its own libcupti handle)", True))
        eq("own-handle client mid-run: CPU-side tracing went on (300 "
           "launches)", len([e for e in xevents(r.trace)
                             if e["name"] == "cudaLaunchKernel"]), 300)
        tprof_check(r.path, "own-handle client mid-run: tprof check passes")
    cleanup(r)

    # nsys (or any tool) named by CUDA_INJECTION64_PATH keeps CUPTI.
    tool = prog("fake_nsys.so")
    r = sim_run([sim_prog("two_threads"), "20"],
                env={"CUDA_INJECTION64_PATH": tool})
    w = warnings(r)
    check("injected tool: one warning, CUPTI left to it",
          len(w) == 1 and "CUDA_INJECTION64_PATH names %s" % tool in w[0], w)
    if r.trace:
        eq("injected tool: CPU-side calls traced, no GPU activity",
           (len([e for e in xevents(r.trace) if e["name"] == "cudaLaunchKernel"])
            > 0, r.trace["tprof"]["cupti"]["state"]), (True, "off"))
    cleanup(r)


for M.mode in (13, 12):
    cases()
done()
