"""Launch-bound loop for the overhead check: OPS tiny in-place adds on a
small CUDA tensor, timed with time.perf_counter after a warm-up and a
synchronize, best of REPEAT. --torch-profiler runs it inside
torch.profiler (activities CPU and CUDA). Prints one JSON line."""
import argparse
import contextlib
import json
import time

import torch

p = argparse.ArgumentParser()
p.add_argument("--ops", type=int, default=20000)
p.add_argument("--repeat", type=int, default=3)
p.add_argument("--torch-profiler", action="store_true")
a = p.parse_args()

x = torch.zeros(64, device="cuda")
ctx = contextlib.nullcontext()
if a.torch_profiler:
    from torch.profiler import ProfilerActivity, profile
    ctx = profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA])
times = []
with ctx:
    for _ in range(2000):
        x.add_(1.0)
    torch.cuda.synchronize()
    for _ in range(a.repeat):
        t = time.perf_counter()
        for _ in range(a.ops):
            x.add_(1.0)
        torch.cuda.synchronize()
        times.append(time.perf_counter() - t)
want = 2000 + a.ops * a.repeat
assert x[0].item() == want, (x[0].item(), want)
print(json.dumps({"ops": a.ops, "repeat": a.repeat, "times_s": times,
                  "best_s": min(times), "per_op_us": min(times) * 1e6 / a.ops,
                  "torch_profiler": a.torch_profiler}))
