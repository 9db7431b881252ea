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
# Programs in plain C: the same binary in both modes.
PLAIN_C = ("driver_only", "late_main")


def sim_prog(name, mode=13):
    """A program of the simulation: mode 12 the CUDA 12 build (bin12,
    linked to libcudart.so.12, <<<>>> through cudaLaunchKernel)."""
    sub = "bin12" if mode == 12 and name not in PLAIN_C else "bin"
    return os.path.join(SIM, sub, name)


def sim_run(argv, env=None, mode=13, **kw):
    """Runs argv on the simulated machine: mode 13 (libcudart.so.13,
    libcupti.so.13) or 12 (libcudart.so.12, libcupti.so.12, CUPTI 12.9)."""
    log = tempfile.mktemp(prefix="sim-", suffix=".log")
    e = {"LD_LIBRARY_PATH": os.path.join(SIM, "lib12") if mode == 12
         else LIBDIR, "SIM_LOG": log, "TPROF_TRACE": "all"}
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
