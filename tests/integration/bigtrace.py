"""A large torch.profiler-schema (Kineto) trace, written fast, for the
memory tests of `tprof check` and `tprof report` (test_membudget.py).

Its size grows with the launches per step, not with the steps or the
names: a fixed number of steps, each a "ProfilerStep#N" user_annotation
holding a "fwd" range and LAUNCHES launch calls (cuda_runtime
cudaLaunchKernel, 0.5 us each, 1 us apart) with their kernels (four
names: two compute, one NCCL, one memset-like; 2 us each, 3 us apart
on stream 7) and ac2g flows, so memory that does not grow with the
events stays the same whatever the size. Events are written out of
time order as real traces are (Kineto groups them by kind, tprof writes
a span when it ends): each step's kernels first, latest first, then its
CPU events. One event per line, compact.
"""
import json

STEPS = 8
KERNELS = ["ampere_sgemm_128x64_nn", "vectorized_elementwise_kernel",
           "ncclDevKernel_AllReduce_Sum_f32_RING_LL", "Memset (Device)"]
PID = 4242
GPU_TID = 7


def _x(cat, name, pid, tid, ts, dur, args):
    return ('{"ph": "X", "cat": "%s", "name": "%s", "pid": %d, "tid": %d, '
            '"ts": %.3f, "dur": %.3f, "args": %s}' %
            (cat, name, pid, tid, ts, dur, args))


def _step(s, launches, corr):
    """One step's lines and the next correlation id."""
    step_us = launches * 1.0 + 20.0
    t0 = 10.0 + s * (launches * 3.0 + 50.0)
    g0 = t0 + 5.0
    gpu, cpu = [], []
    cpu.append(_x("user_annotation", "ProfilerStep#%d" % s, PID, PID, t0,
                  step_us, '{"External id": %d}' % (s + 1)))
    cpu.append(_x("user_annotation", "fwd", PID, PID, t0 + 1.0,
                  launches / 2 + 1.0, '{"External id": 0}'))
    for i in range(launches):
        ts = t0 + 1.5 + i * 1.0
        g = g0 + i * 3.0
        c = corr + i
        cpu.append(_x("cuda_runtime", "cudaLaunchKernel", PID, PID, ts, 0.5,
                      '{"cbid": 211, "correlation": %d}' % c))
        cpu.append('{"ph": "s", "id": %d, "pid": %d, "tid": %d, '
                   '"ts": %.3f, "cat": "ac2g", "name": "ac2g"}' %
                   (c, PID, PID, ts))
        gpu.append(_x("kernel", KERNELS[i % 4], 0, GPU_TID, g, 2.0,
                      '{"device": 0, "stream": 7, "correlation": %d}' % c))
        gpu.append('{"ph": "f", "id": %d, "pid": 0, "tid": %d, "ts": %.3f, '
                   '"cat": "ac2g", "name": "ac2g", "bp": "e"}' %
                   (c, GPU_TID, g))
    gpu.reverse()
    return gpu + cpu, corr + launches


def launches_for(mb):
    """Launches per step for about mb megabytes of JSON."""
    lines, _ = _step(0, 1000, 1)
    per = sum(len(x) + 2 for x in lines) / 1000.0
    return max(1, int(mb * 1e6 / STEPS / per))


def write(path, mb):
    """Writes the trace (plain JSON) to path; returns its size in bytes."""
    launches = launches_for(mb)
    head = ('{"schemaVersion": 1, "displayTimeUnit": "ms",\n'
            '"distributedInfo": {"backend": "nccl", "rank": 0, '
            '"world_size": 1},\n"traceEvents": [\n')
    meta = [json.dumps({"name": "process_name", "ph": "M", "pid": PID,
                        "tid": 0, "args": {"name": "python"}}),
            json.dumps({"name": "thread_name", "ph": "M", "pid": 0,
                        "tid": GPU_TID, "args": {"name": "stream 7"}})]
    n = 0
    corr = 1
    with open(path, "w") as f:
        f.write(head)
        n += len(head)
        first = True
        for s in range(STEPS):
            lines, corr = _step(s, launches, corr)
            text = ",\n".join(lines)
            if not first:
                text = ",\n" + text
            first = False
            f.write(text)
            n += len(text)
        tail = ",\n" + ",\n".join(meta) + "\n]}\n"
        f.write(tail)
        n += len(tail)
    return n
