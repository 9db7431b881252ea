"""Every hooked CUDA runtime entry point is recorded exactly once per call,
on the calling thread, with its args, even though each call fails here
(no GPU: the real libcudart returns cudaErrorInsufficientDriver)."""
import collections
import os
import re

from tplib import *

APIS = """cudaLaunchKernel cudaLaunchKernel_ptsz cudaLaunchKernelExC
cudaLaunchKernelExC_ptsz cudaLaunchCooperativeKernel
cudaLaunchCooperativeKernel_ptsz cudaGraphLaunch cudaGraphLaunch_ptsz
cudaMemcpy cudaMemcpy_ptds cudaMemcpyAsync cudaMemcpyAsync_ptsz cudaMemcpy2D
cudaMemcpy2D_ptds cudaMemcpy2DAsync cudaMemcpy2DAsync_ptsz cudaMemcpyPeer
cudaMemcpyPeerAsync cudaMemset cudaMemset_ptds cudaMemsetAsync
cudaMemsetAsync_ptsz cudaMalloc cudaFree cudaMallocAsync cudaMallocAsync_ptsz
cudaFreeAsync cudaFreeAsync_ptsz cudaMallocHost cudaHostAlloc cudaFreeHost
cudaMallocManaged cudaStreamSynchronize cudaStreamSynchronize_ptsz
cudaDeviceSynchronize cudaEventSynchronize cudaStreamWaitEvent
cudaStreamWaitEvent_ptsz cudaEventRecord cudaEventRecord_ptsz
cudaProfilerStart cudaProfilerStop""".split()
# calls.c makes two launches each through __cudaLaunchKernel and
# cudaLaunchKernel (and their _ptsz variants) per iteration.
PER_ITER = collections.Counter(APIS)
PER_ITER["cudaLaunchKernel"] = 2
PER_ITER["cudaLaunchKernel_ptsz"] = 2

THREADS, ITERS = 4, 25
plain = run([prog("calls"), str(THREADS), str(ITERS)], preload=False)
r = run([prog("calls"), str(THREADS), str(ITERS)])
eq("hooks: exit code unchanged", r.rc, plain.rc)
eq("hooks: stdout unchanged", r.stdout, plain.stdout)
eq("hooks: one file", r.files(), ["tprof-rank0.trace.json.gz"])
path = os.path.join(r.dir, "tprof-rank0.trace.json.gz")
t = load(path)
tprof_check(path, "hooks: tprof check passes")
check("hooks: X events strictly nest per thread", nesting_ok(t))

counts = collections.defaultdict(collections.Counter)
for e in xevents(t):
    counts[e["tid"]][e["name"]] += 1
eq("hooks: one track per calling thread", len(counts), THREADS)
for tid, c in sorted(counts.items()):
    want = collections.Counter({k: v * ITERS for k, v in PER_ITER.items()})
    missing = sorted(set(want) - set(c))
    check("hooks: thread %d recorded every API" % len(missing and [0]),
          not missing, "missing %s" % missing)
    wrong = {k: (c[k], want[k]) for k in want if c[k] != want[k]}
    check("hooks: exact count of each API on thread %d" % tid, not wrong,
          "got/want %s" % wrong)
    extra = sorted(set(c) - set(want))
    check("hooks: nothing else on thread %d" % tid, not extra, str(extra))

ev = xevents(t)
check("hooks: category cuda_runtime", all(e["cat"] == "cuda_runtime" for e in ev))
check("hooks: failing calls carry ret 35 and its name",
      all(e["args"]["ret"] == 35 and
          e["args"]["error"] == "cudaErrorInsufficientDriver" for e in ev),
      str(ev[0]["args"]))
first = {}
for e in ev:
    first.setdefault(e["name"], e["args"])

a = first["cudaLaunchKernel"]
launch = [e["args"] for e in xevents(t, "cudaLaunchKernel")
          if e["args"]["shared memory"] == 512][0]
eq("hooks: launch grid", launch["grid"], [4, 2, 1])
eq("hooks: launch block", launch["block"], [128, 1, 1])
eq("hooks: launch stream", launch["stream"], "0x10")
eq("hooks: kernel name from the ELF symbol table", launch["kernel"],
   "fake_kernel_stub")
eq("hooks: cudaLaunchKernelExC reads its config",
   (first["cudaLaunchKernelExC"]["grid"],
    first["cudaLaunchKernelExC"]["shared memory"]), ([4, 2, 1], 256))
eq("hooks: memcpy bytes and kind",
   (first["cudaMemcpy"]["bytes"], first["cudaMemcpy"]["kind"]), (16, "HtoD"))
eq("hooks: memcpy async stream", first["cudaMemcpyAsync"]["stream"], "0x10")
eq("hooks: 2D copy bytes = width x height",
   (first["cudaMemcpy2D"]["bytes"], first["cudaMemcpy2D"]["height"]), (8, 2))
eq("hooks: peer copy devices",
   (first["cudaMemcpyPeer"]["dst device"], first["cudaMemcpyPeer"]["src device"]),
   (1, 0))
eq("hooks: memset value and bytes",
   (first["cudaMemset"]["value"], first["cudaMemset"]["bytes"]), (7, 16))
eq("hooks: allocation size", first["cudaMalloc"]["bytes"], 1 << 20)
eq("hooks: failed allocation has no pointer", first["cudaMalloc"]["ptr"], "0x0")
eq("hooks: host alloc flags", first["cudaHostAlloc"]["flags"], 1)
eq("hooks: managed alloc size", first["cudaMallocManaged"]["bytes"], 65536)

text = raw(path)
nums = re.findall(r'"(ts|dur)":(-?[0-9.eE+]+)', text)
check("hooks: every ts/dur has exactly three decimals",
      nums and all(re.fullmatch(r"\d+\.\d{3}", v) for _, v in nums),
      str([v for _, v in nums if not re.fullmatch(r"\d+\.\d{3}", v)][:3]))
lines = text.split("\n")
check("hooks: one event per line",
      sum(1 for l in lines if l.startswith('{"ph":')) == len(t["traceEvents"]))
for key in ("schemaVersion", "traceName", "displayTimeUnit",
            "baseTimeNanoseconds", "distributedInfo", "traceEvents",
            "deviceProperties", "tprof"):
    check("hooks: top-level key %s" % key, key in t)
check("hooks: rank written as \"rank\": 0", '"rank": 0' in text)
tp = t["tprof"]
eq("hooks: events_written counts every event", tp["events_written"], len(ev))
eq("hooks: nothing dropped", tp["events_dropped"], 0)
eq("hooks: command recorded", tp["command"][1:], [str(THREADS), str(ITERS)])
eq("hooks: compressed by ISA-L when the build has it and the machine "
   "has libisal.so.2, else by zlib", tp["compressor"],
   "isa-l" if isal_usable() else "zlib")
eq("hooks: per-thread counts in the tprof object",
   sorted(th["events"] for th in tp["threads"]),
   sorted(sum(c.values()) for c in counts.values()))
meta = [e for e in t["traceEvents"] if e["ph"] == "M"]
names = {e["tid"]: e["args"]["name"] for e in meta if e["name"] == "thread_name"}
check("hooks: every recording thread is named",
      set(counts) <= set(names), "%s vs %s" % (set(counts), set(names)))
check("hooks: process named after the program",
      any(e["name"] == "process_name" and e["args"]["name"].startswith("calls")
          for e in meta))
base = t["baseTimeNanoseconds"]
start = tp["start_unix_ns"]
first_ts = min(e["ts"] for e in ev)
check("hooks: ts is relative to baseTimeNanoseconds",
      0 <= base + first_ts * 1000 - start < 5e9,
      "base %d ts %f start %d" % (base, first_ts, start))
exit_lines = r.other_lines()
eq("hooks: one stderr line at exit", len(exit_lines), 1)
check("hooks: exit line names file, events, drops, size",
      re.search(r"wrote .*tprof-rank0\.trace\.json\.gz \(%d events, 0 dropped, "
                r"[0-9.]+ KiB(; [^)]*)?\)" % len(ev), exit_lines[0]),
      exit_lines[0])
cleanup(plain, r)

# nvcc-compiled <<<>>> launches, default and per-thread default stream.
for variant, suffix in (("kernels", ""), ("kernels_ptds", "_ptsz")):
    r = run([prog(variant), "3"])
    path = os.path.join(r.dir, "tprof-rank0.trace.json.gz")
    t = load(path)
    tprof_check(path, "nvcc %s: tprof check passes" % variant)
    launches = xevents(t, "cudaLaunchKernel" + suffix)
    eq("nvcc %s: <<<>>> launches recorded" % variant, len(launches), 6)
    kn = collections.Counter(e["args"]["kernel"] for e in launches)
    eq("nvcc %s: demangled kernel names" % variant, dict(kn),
       {"add(float*, int)": 3, "void ops::scale<float>(float*, float, int)": 3})
    sc = [e for e in launches if "scale" in e["args"]["kernel"]][0]["args"]
    eq("nvcc %s: <<<dim3(4,2), 64, 1024>>>" % variant,
       (sc["grid"], sc["block"], sc["shared memory"]), ([4, 2, 1], [64, 1, 1], 1024))
    eq("nvcc %s: cudaLaunchKernelEx -> cudaLaunchKernelExC" % variant,
       [e["args"]["kernel"] for e in xevents(t, "cudaLaunchKernelExC" + suffix)],
       ["add(float*, int)"])
    memcpy = "cudaMemcpy_ptds" if suffix else "cudaMemcpy"
    eq("nvcc %s: copies recorded" % variant,
       (len(xevents(t, memcpy)), len(xevents(t, "cudaMemcpyAsync" + suffix))),
       (1, 1))
    cleanup(r)

# Statically linked cudart (nvcc's default) bypasses the hooks: no file.
r = run([prog("kernels_static"), "1"])
eq("nvcc static cudart: nothing to record, no file", r.files(), [])
eq("nvcc static cudart: program unaffected", r.rc, 0)
cleanup(r)
done()
