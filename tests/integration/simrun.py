"""Running programs on the simulated CUDA 13 machine (tests/sim/) under
tprof, with the simulation's log of what really happened."""
import os
import sys
import tempfile

from tplib import BUILD, ROOT, load, run

sys.path.insert(0, os.path.join(ROOT, "tests", "sim"))
from simlog import SimLog  # noqa: E402

SIM = os.path.join(BUILD, "tests", "sim")
LIBDIR = os.path.join(SIM, "lib")


def sim_prog(name):
    return os.path.join(SIM, "bin", name)


def sim_run(argv, env=None, **kw):
    log = tempfile.mktemp(prefix="sim-", suffix=".log")
    e = {"LD_LIBRARY_PATH": LIBDIR, "SIM_LOG": log, "TPROF_TRACE": "all"}
    e.update(env or {})
    r = run(argv, env=e, **kw)
    r.log = SimLog(log) if os.path.exists(log) else None
    if os.path.exists(log):
        os.unlink(log)
    traces = [f for f in r.all_files() if f.endswith(".trace.json.gz")]
    r.trace = load(os.path.join(r.dir, traces[0])) if len(traces) == 1 \
        else None
    r.path = os.path.join(r.dir, traces[0]) if traces else None
    return r
