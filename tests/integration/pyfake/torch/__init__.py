"""A stand-in for torch used by test_pyhelper.py: just what tprof.py and
the --torch-steps shim touch. Like real torch, importing torch imports
torch.optim (and so torch.optim.optimizer)."""
import os
import sys

from . import cuda  # noqa: F401
from . import optim  # noqa: F401

if os.environ.get("PYFAKE_TORCH_LOG"):
    sys.stderr.write("pyfake torch imported\n")
