"""Library calls and annotations on a real GPU, for the GPU validation
suite: fp32 GEMMs of a known shape (cuBLAS), a convolution (cuDNN), an
NVTX range around them (torch.cuda.nvtx), and a one-rank NCCL all-reduce
of 64 MiB. Prints one EXPECT line with what the trace must show."""
import json
import os

import torch
import torch.distributed as dist

M, N, K, GEMMS = 512, 256, 128, 5
ALLREDUCE = 16 * 1024 * 1024   # float32 elements: 64 MiB

os.environ.setdefault("MASTER_ADDR", "127.0.0.1")
os.environ.setdefault("MASTER_PORT", "29533")
dev = torch.device("cuda", 0)
kw = {}
if "device_id" in dist.init_process_group.__code__.co_varnames:
    kw["device_id"] = dev   # an eager communicator: made here, not lazily
dist.init_process_group("nccl", rank=0, world_size=1, **kw)
a = torch.randn(M, K, device=dev)
b = torch.randn(K, N, device=dev)
conv = torch.nn.Conv2d(3, 16, 3, padding=1).to(dev)
x = torch.randn(8, 3, 32, 32, device=dev)
t = torch.ones(ALLREDUCE, device=dev)
torch.cuda.synchronize()
with torch.cuda.nvtx.range("tprof-libs"):
    for _ in range(GEMMS):
        c = a @ b
    y = conv(x)
    dist.all_reduce(t)
torch.cuda.synchronize()
dist.destroy_process_group()
print("EXPECT " + json.dumps({"gemm_flops": 2 * M * N * K, "gemms": GEMMS,
                              "range": "tprof-libs",
                              "allreduce_bytes": ALLREDUCE * 4}))
