"""make gpu-check's properties on the simulated CUDA 13 machine
(tests/gpu/gpucheck.py --sim, as `make gpu-check SIM=1` runs it): the
checker a real GPU runs, on tests/sim/. Figures only under FAIL and SKIP
lines; all of them in build/gpu-check-sim/gpu-check.json."""
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(
    os.path.abspath(__file__))), "gpu"))
import gpucheck  # noqa: E402

sys.exit(gpucheck.main(["--sim", "--brief"]))
