"""Opt-in (`make test-torch`, needs `pip install torch`): PyTorch from PyPI
on this machine, which has no GPU. Its CUDA 13 wheels' libraries still load
(libcudart, libcupti next to it), so `import torch` reaches tprof's hooks
through __cudaRegisterFunction and starts CUPTI's loader on a machine with
no driver: the program must run exactly as without tprof."""
import os
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "integration"))
from tplib import *  # noqa: E402

try:
    import torch  # noqa: F401
except ImportError as e:
    print("SKIP torch: %s (pip install torch)" % e)
    sys.exit(0)

SCRIPT = r'''
import torch
m = torch.nn.Linear(64, 64)
opt = torch.optim.SGD(m.parameters(), lr=0.1)
for i in range(5):
    x = torch.randn(32, 64, generator=torch.Generator().manual_seed(i))
    loss = m(x).pow(2).mean()
    opt.zero_grad(); loss.backward(); opt.step()
print("cuda available:", torch.cuda.is_available())
try:
    torch.zeros(4, device="cuda")
except Exception as e:
    print("cuda error:", type(e).__name__)
'''

out = tempfile.mkdtemp(prefix="tprof-torch-")
path = os.path.join(out, "train.py")
with open(path, "w") as f:
    f.write(SCRIPT)
plain = subprocess.run([sys.executable, path], capture_output=True, text=True,
                       timeout=300)
eq("torch: runs without tprof", plain.returncode, 0)
for flags in ([], ["--torch-steps"], ["--backtrace", "0", "--python-stacks"]):
    label = "torch %s" % (" ".join(flags) or "(no flags)")
    p = subprocess.run([RUN, "-o", os.path.join(out, "t")] + flags +
                       ["--", sys.executable, path], capture_output=True,
                       text=True, timeout=300)
    eq(label + ": same exit code", p.returncode, plain.returncode)
    eq(label + ": same stdout", p.stdout, plain.stdout)
    tp = [l for l in p.stderr.splitlines() if l.startswith("tprof:")]
    gpu = [l for l in tp if "warning" in l]
    check(label + ": at most one warning, naming the missing driver",
          len(gpu) <= 1 and all("no NVIDIA driver" in l for l in gpu), tp)
shutil.rmtree(out, ignore_errors=True)
done()
