"""A small, fixed PyTorch training loop for the GPU validation suite.

Run under tprof (scripts/tprof-run ... python3 torch_loop.py --window W)
or with torch.profiler (--torch-profiler OUT.json) over the same steps.
Warm-up steps run first, outside the measured window; --window writes the
window's Unix time bounds (ns) so the checker can pick the same steps out
of a tprof trace, which covers the whole process.
"""
import argparse
import json
import time

import torch
import torch.nn as nn
import torch.nn.functional as F

p = argparse.ArgumentParser()
p.add_argument("--steps", type=int, default=20)
p.add_argument("--warmup", type=int, default=3)
p.add_argument("--torch-profiler", metavar="OUT.json")
p.add_argument("--window", metavar="OUT.json")
a = p.parse_args()

torch.manual_seed(0)
torch.backends.cudnn.benchmark = False
dev = torch.device("cuda")
model = nn.Sequential(
    nn.Conv2d(3, 16, 3, padding=1), nn.ReLU(),
    nn.Conv2d(16, 32, 3, stride=2, padding=1), nn.ReLU(),
    nn.AdaptiveAvgPool2d(1), nn.Flatten(),
    nn.Linear(32, 256), nn.ReLU(), nn.Linear(256, 10)).to(dev)
opt = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
x = torch.randn(64, 3, 32, 32, device=dev)
y = torch.randint(0, 10, (64,), device=dev)


def step():
    opt.zero_grad(set_to_none=True)
    loss = F.cross_entropy(model(x), y)
    loss.backward()
    opt.step()
    return loss


def steps():
    for _ in range(a.steps):
        loss = step()
    torch.cuda.synchronize()
    return loss


for _ in range(a.warmup):
    step()
torch.cuda.synchronize()
time.sleep(0.05)    # gaps around the window: no kernel near its edges
t0 = time.time_ns()
if a.torch_profiler:
    from torch.profiler import ProfilerActivity, profile
    with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA]) as prof:
        loss = steps()
    prof.export_chrome_trace(a.torch_profiler)
else:
    loss = steps()
t1 = time.time_ns()
time.sleep(0.05)
if a.window:
    with open(a.window, "w") as f:
        json.dump({"t0_ns": t0, "t1_ns": t1, "steps": a.steps}, f)
print(json.dumps({"torch": torch.__version__, "device": torch.cuda.get_device_name(),
                  "steps": a.steps, "loss": round(loss.item(), 6)}))
