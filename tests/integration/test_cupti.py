"""GPU activity through CUPTI, without a GPU.

cupti_feed runs under the preload with a stand-in libcupti.so.13
(tests/cupti/fake_cupti.c) that hands tprof real CUPTI 13 record structs
through tprof's own buffer and API callbacks: kernels (plain, graph,
static-cudart and driver-API launches), copies, peer copies, memsets,
syncs, memory and overhead records, late buffers, drops, refusals. The
degrade paths run against the real libcupti of the toolkit, which has no
device here, and against the stand-in told to fail.
"""
import glob
import os
import re
import shutil
import tempfile

from tplib import (BIN, BUILD, check, cleanup, done, eq, is_gpu_off_warning,
                   load, prog, run, tprof_check, xevents, nesting_ok)

FEED = prog("cupti_feed")
FAKE = os.path.join(BUILD, "tests", "fakecupti", "libcupti.so.13")
CUDA_HOME = os.environ.get("CUDA_HOME") or "/usr/local/cuda"


def trace_of(r):
    paths = glob.glob(os.path.join(r.dir, "*.trace.json.gz"))
    return (load(paths[0]), paths[0]) if len(paths) == 1 else (None, None)


# The stand-in, like CUPTI, turns its GPU nanoseconds into the unit of
# tprof's timestamp callback (the hooks' ticks) by a rate it measures, and
# tprof maps ticks back with its own: times made "t + 10 us" come back
# within this fraction. The simulation (test_gpu_truth.py) checks times
# exactly against its ground truth.
RATE = 2e-4


def near(name, got, want):
    check(name, abs(got - want) <= abs(want) * RATE + 0.001,
          "got %r, want %r" % (got, want))


def values(stdout):
    return {k: int(v) for k, v in (l.split() for l in stdout.splitlines())}


def by_corr(events):
    out = {}
    for e in events:
        out.setdefault(e["args"].get("correlation"), []).append(e)
    return out


r = run([FEED, "full"])
eq("feed: exit code", r.rc, 0)
v = values(r.stdout)
t, path = trace_of(r)
check("feed: one trace", t is not None, r.files())
tprof_check(path, "feed: tprof check passes")
check("feed: strict nesting per track", nesting_ok(t))
cu = t["tprof"]["cupti"]
eq("feed: CUPTI on", (cu["state"], cu["version"], cu["timestamps"]),
   ("on", 130100, "tprof"))
eq("feed: the libcupti already loaded is reused", cu["library"], FAKE)
eq("feed: timestamp callback registered once", v["ts_registrations"], 1)
check("feed: no warning", not [l for l in r.stderr.splitlines()
                               if "warning" in l], r.stderr)

pid = t["tprof"]["pid"]
cpu = [e for e in xevents(t) if e["pid"] == pid and
       e["cat"] in ("cuda_runtime", "cuda_driver")]
cpu_corr = by_corr(cpu)
gpu = [e for e in xevents(t) if e["cat"] in ("kernel", "gpu_memcpy",
                                            "gpu_memset", "cuda_sync")]
gpu_corr = by_corr(gpu)

# Each call once: hooked calls by their hook (with its args), calls no hook
# sees by the CUPTI callback, driver calls inside runtime calls not at all.
for key, name, cat in (("hooked_launch", "cudaLaunchKernel", "cuda_runtime"),
                       ("static_launch", "cudaLaunchKernel", "cuda_runtime"),
                       ("driver_launch", "cuLaunchKernel", "cuda_driver"),
                       ("nested_memcpy", "cudaMemcpy", "cuda_runtime"),
                       ("graph_launch", "cudaGraphLaunch", "cuda_runtime"),
                       ("memcpy_async", "cudaMemcpyAsync", "cuda_runtime")):
    evs = cpu_corr.get(v[key], [])
    eq("feed: %s recorded once as %s/%s" % (key, cat, name),
       [(e["cat"], e["name"]) for e in evs], [(cat, name)])
eq("feed: the driver call inside cudaMemcpy is not recorded",
   cpu_corr.get(v["nested_driver"]), None)
eq("feed: no cuMemcpyHtoD event", [e for e in cpu if "cuMemcpy" in e["name"]],
   [])
hooked = cpu_corr[v["hooked_launch"]][0]
eq("feed: the hooked launch keeps its hook's args",
   (hooked["args"]["grid"], hooked["args"]["block"], hooked["args"]["stream"]),
   ([1, 1, 1], [32, 1, 1], "0x7"))
eq("feed: CPU calls, all told", len(cpu), 10)

# Kernels: names, tracks, args.
k = {e["name"]: e for e in gpu if e["cat"] == "kernel"}
eq("feed: kernel names demangled", sorted(k),
   sorted(["saxpy(int, float, float*, float*)", "tiny()",
           "triton_poi_fused_add_0", "void ops::step<1>(float*)",
           "void ops::step<2>(float*)", "first()", "second()", "orphaned()",
           "timed()", "late()"]))
s = k["saxpy(int, float, float*, float*)"]
eq("feed: kernel on device/stream track", (s["pid"], s["tid"]), (0, 7))
eq("feed: kernel args", {a: s["args"][a] for a in (
    "device", "stream", "correlation", "grid", "block",
    "registers per thread", "shared memory", "blocks per SM", "warps per SM",
    "est. achieved occupancy %")},
   {"device": 0, "stream": 7, "correlation": v["hooked_launch"],
    "grid": [264, 1, 1], "block": [256, 1, 1], "registers per thread": 32,
    "shared memory": 4096, "blocks per SM": 2.0, "warps per SM": 16.0,
    "est. achieved occupancy %": 25})
near("feed: kernel duration from the record", s["dur"], 10.0)
check("feed: a plain kernel has no graph args", "graph id" not in s["args"])

g = [e for e in gpu_corr[v["graph_launch"]]]
eq("feed: graph launch: 2 kernels and a memset",
   sorted((e["cat"], e["args"]["graph id"], e["args"]["graph node id"])
          for e in g),
   [("gpu_memset", 5, 13), ("kernel", 5, 11), ("kernel", 5, 12)])

# Flows: one "s" on the CPU call, one "f" per GPU op.
flows = [e for e in t["traceEvents"] if e["ph"] in "sf"]
starts = {}
for f in flows:
    if f["ph"] == "s":
        starts.setdefault(f["id"], []).append(f)
ends = {}
for f in flows:
    if f["ph"] == "f":
        ends.setdefault(f["id"], []).append(f)
check("feed: every flow is ac2g", all(f["cat"] == "ac2g" and
                                      f["name"] == "ac2g" for f in flows))
check("feed: one start per correlation",
      all(len(x) == 1 for x in starts.values()), starts)
linked = [e for e in gpu if e["args"]["correlation"] in cpu_corr]
eq("feed: every GPU op with a known launch has its arrow",
   sorted((e["args"]["correlation"], e["ts"]) for e in linked),
   sorted((f["id"], f["ts"]) for f in flows if f["ph"] == "f"))
for c, (st,) in starts.items():
    call = cpu_corr[c][0]
    if not (st["pid"], st["tid"], st["ts"]) == (call["pid"], call["tid"],
                                                 call["ts"]):
        check("feed: flow %d starts on its call" % c, False, (st, call))
        break
else:
    check("feed: each flow starts on its CPU call", True)
check("feed: each f binds to the enclosing GPU op",
      all(f.get("bp") == "e" and (f["pid"], f["tid"]) in
          {(e["pid"], e["tid"]) for e in gpu_corr[f["id"]]}
          for f in flows if f["ph"] == "f"))
eq("feed: graph launch: one start, three ends",
   (len(starts[v["graph_launch"]]), len(ends[v["graph_launch"]])), (1, 3))
orphan = k["orphaned()"]
check("feed: an op whose launch was never seen has no arrow",
      orphan["args"]["correlation"] not in ends)

# Timeline: never before the launch, never overlapping on a track, and
# no duration altered.
tiny = k["tiny()"]
eq("feed: a kernel converted to before its launch starts at the launch",
   tiny["ts"], cpu_corr[v["static_launch"]][0]["ts"])
near("feed: ... moved whole: its duration is the record's", tiny["dur"], 80.0)
a, b = k["first()"], k["second()"]
near("feed: overlapping kernels keep their times (start 50 us apart)",
     b["ts"] - a["ts"], 50.0)
near("feed: ... and durations", b["dur"], 100.0)
eq("feed: the second goes to lane 2 of stream 20",
   (a["tid"], b["tid"]), (20, 20 | 1 << 24))
for e in gpu:
    call = cpu_corr.get(e["args"]["correlation"])
    if call and e["cat"] != "cuda_sync" and e["ts"] < call[0]["ts"]:
        check("feed: no GPU op before its launch", False, e)
        break
else:
    check("feed: no GPU op before its launch", True)
mem = [e for e in t["traceEvents"] if e["ph"] == "C"]
eq("feed: device memory counter", [(e["pid"], e["name"], e["args"])
                                   for e in mem],
   [(0, "GPU memory", {"allocated": n}) for n in (4096, 12288, 8192)])
near("feed: GPU and CPU-side CUPTI times share one conversion (5 ms)",
     k["timed()"]["ts"] - mem[0]["ts"], 5000.0)
late = k["late()"]
check("feed: a record in a later buffer still gets its arrow",
      v["late"] in ends and late["args"]["correlation"] == v["late"])
# orphaned() starts 10 us after a CUPTI timestamp read just before the
# call of overlap_b: the two clocks agree to within that call's cost.
gap = cpu_corr[v["overlap_b"]][0]["ts"] - (orphan["ts"] - 10.0)
check("feed: GPU and CPU timestamps share one timeline (0 <= gap < 1 ms)",
      0 <= gap < 1000, gap)

# Copies, memsets, syncs, overhead.
copies = {e["args"]["kind"]: e for e in gpu if e["cat"] == "gpu_memcpy"}
h = copies["HtoD"]
eq("feed: memcpy name and args", (h["name"], h["tid"], h["args"]["bytes"]),
   ("Memcpy HtoD (Pageable -> Device)", 12, 1 << 20))
check("feed: memcpy bandwidth is bytes over duration",
      abs(h["args"]["memory bandwidth (GB/s)"] -
          (1 << 20) / (h["dur"] * 1000)) < 0.002,
      (h["args"], h["dur"]))
p = copies["PtoP"]
eq("feed: peer copy", (p["name"], p["args"]["src device"],
                       p["args"]["dst device"]),
   ("Memcpy PtoP (Device -> Device)", 0, 1))
ms = [e for e in gpu if e["cat"] == "gpu_memset"][0]
eq("feed: memset", (ms["name"], ms["args"]["bytes"]), ("Memset (Device)", 4096))
syncs = sorted((e["name"], e["pid"], e["tid"]) for e in gpu
               if e["cat"] == "cuda_sync")
eq("feed: syncs on their own tracks (device from the context record)",
   syncs, [("Context Sync", 0, 0x7fffffff), ("Stream Sync", 0, 0x40000007)])
ov = [e for e in xevents(t) if e["cat"] == "overhead"]
eq("feed: CUPTI overhead on its own track",
   [(e["name"], e["pid"], e["tid"]) for e in ov],
   [("CUPTI buffer flush", pid, 0x7ffffff0)])

# Names and devices.
meta = {(e["name"], e["pid"], e["tid"]): e["args"]
        for e in t["traceEvents"] if e["ph"] == "M"}
eq("feed: GPU process name", meta.get(("process_name", 0, 0)),
   {"name": "GPU 0 (Fake H100)"})
eq("feed: stream track names",
   [meta.get(("thread_name", 0, s), {}).get("name") for s in (7, 9, 0x40000007,
                                                               0x7fffffff)],
   ["stream 7", "stream 9", "stream 7 sync", "device sync"])
eq("feed: a second lane is named after its stream",
   meta.get(("thread_name", 0, 20 | 1 << 24)), {"name": "stream 20 (2)"})
eq("feed: overhead track name", meta.get(("thread_name", pid, 0x7ffffff0)),
   {"name": "CUPTI overhead"})
dp = t["deviceProperties"]
eq("feed: deviceProperties", [(d["id"], d["name"], d["numSms"],
                               d["computeMajor"], d["warpSize"]) for d in dp],
   [(0, "Fake H100", 132, 9, 32)])

# Accounting: nothing lost silently.
eq("feed: counts in the trace", {x: cu[x] for x in (
    "kernels", "memcpys", "memsets", "syncs", "memory", "overhead",
    "dropped", "zero_timestamps", "shifted", "overlapped", "unlinked",
    "refused_buffers")},
   {"kernels": 10, "memcpys": 2, "memsets": 1, "syncs": 2, "memory": 3,
    "overhead": 1, "dropped": 5, "zero_timestamps": 1, "shifted": 1,
    "overlapped": 1,
    "unlinked": 1, "refused_buffers": 0})
line = [l for l in r.stderr.splitlines() if "wrote" in l]
check("feed: exit line counts GPU records and losses",
      len(line) == 1 and re.search(
          r"GPU: 22 records, 6 lost \(5 dropped by CUPTI, 0 buffers refused, "
          r"1 without timestamps, 0 outside the trace's clock, 0 buffers "
          r"cut short, 0 never returned\)", line[0]), line)
check("feed: exit line says the op placed before its launch was moved, "
      "and by how much",
      len(line) == 1 and re.search(
          r"; 1 GPU ops started before their launch call \(moved to it, by "
          r"up to [0-9.]+ us", line[0]) and cu["shifted_max_ns"] > 0,
      (line, cu.get("shifted_max_ns")))
cleanup(r)

# A capped buffer total: CUPTI is refused a buffer, and it is counted.
r = run([FEED, "refuse"], env={"TPROF_CUPTI_BUFFER_MB": "2"})
t, path = trace_of(r)
cu = t["tprof"]["cupti"] if t else {}
eq("refuse: buffers capped at TPROF_CUPTI_BUFFER_MB",
   (cu.get("buffer_mb"), cu.get("buffers")), (2, 2))
eq("refuse: the third buffer is refused and counted",
   (cu.get("refused_buffers"), cu.get("dropped"), cu.get("kernels")),
   (1, 1, 2))
check("refuse: exit line names the refusal",
      "1 buffers refused" in r.stderr, r.stderr)
cleanup(r)

# A record whose time is far outside the trace (an hour on): counted as
# outside the trace's clock and said in the exit line, not placed.
r = run([FEED, "far"])
t, path = trace_of(r)
ks = sorted(e["name"] for e in xevents(t) if e["cat"] == "kernel" and
            "saxpy" not in e["name"]) if t else []
eq("far: only the kernel in the trace's time is placed", ks, ["near_kernel"])
eq("far: the other is counted", t["tprof"]["cupti"]["unclocked"] if t else None,
   1)
check("far: the exit line says so",
      "1 outside the trace's clock" in r.stderr, r.stderr)
tprof_check(path, "far: tprof check passes")
cleanup(r)

# Below API 27 a refused buffer crashes CUPTI 12: the third is lent all
# the same, and what CUPTI put in it is counted as dropped.
r = run([FEED, "refuse"], env={"TPROF_CUPTI_BUFFER_MB": "2",
                               "FAKE_CUPTI_VERSION": "26"})
t, path = trace_of(r)
cu = t["tprof"]["cupti"] if t else {}
eq("refuse, CUPTI 12 (API 26): never refused; its records counted dropped",
   (cu.get("buffers"), cu.get("refused_buffers"), cu.get("discarded"),
    cu.get("kernels")), (2, 0, 1, 2))
check("refuse, CUPTI 12: the drop is in the exit line",
      "0 buffers refused" in r.stderr and "(1 dropped by CUPTI" in r.stderr,
      r.stderr)
cleanup(r)


def one_warning(label, r, needle):
    warn = [l for l in r.stderr.splitlines() if l.startswith("tprof: warning")]
    check(label + ": exactly one warning naming the cause",
          len(warn) == 1 and needle in warn[0] and is_gpu_off_warning(warn[0]),
          warn)


def cpu_still_traced(label, r, name="cudaLaunchKernel"):
    t, path = trace_of(r)
    check(label + ": CPU calls still traced",
          t is not None and xevents(t, name), r.files())
    if t:
        eq(label + ": trace says CUPTI is off", t["tprof"]["cupti"]["state"],
           "off")
    return t


# Degrade paths.
r = run([FEED, "calls"], env={"FAKE_CUPTI_VERSION": "120800"})
one_warning("wrong version", r, "is CUPTI API version 120800")
cpu_still_traced("wrong version", r)
cleanup(r)

r = run([FEED, "calls"], env={"FAKE_CUPTI_VERSION": "23"})
one_warning("CUDA 12.5 (API 23)", r, "is CUPTI API version 23")
cleanup(r)

r = run([FEED, "calls"], env={"FAKE_CUPTI_VERSION": "130000"})
one_warning("13.0 GA", r, "CUPTI 13.0 GA (API version 130000) can crash in "
            "cuptiActivityFlushAll")
check("13.0 GA: the warning names the fix", "upgrade to CUDA 13.0 Update 1"
      in r.stderr, r.stderr)
cpu_still_traced("13.0 GA", r)
cleanup(r)

# CUPTI 12.6-12.9 and 13.0.x: tprof's timestamp callback is registered on
# every version (the zero-timestamp bug once assumed there has no NVIDIA
# note: docs/design/cupti-rules.md).
for ver in ("24", "28", "130001"):
    r = run([FEED, "full"], env={"FAKE_CUPTI_VERSION": ver})
    v = values(r.stdout)
    t, path = trace_of(r)
    cu = t["tprof"]["cupti"] if t else {}
    eq("CUPTI %s: on, tprof's timestamp callback" % ver,
       (cu.get("state"), cu.get("timestamps"), v.get("ts_registrations")),
       ("on", "tprof", 1))
    ks = {e["name"]: e for e in xevents(t) if e["cat"] == "kernel"} if t \
        else {}
    calls = by_corr([e for e in xevents(t) if e.get("cat") in
                     ("cuda_runtime", "cuda_driver")]) if t else {}
    sx = ks.get("saxpy(int, float, float*, float*)")
    launch = calls.get(v.get("hooked_launch"), [None])[0]
    check("CUPTI %s: kernel on tprof's clock lands just after its launch"
          % ver, sx and launch and 0 <= sx["ts"] - launch["ts"] < 1000 and
          abs(sx["dur"] - 10.0) < 0.01, (sx, launch))
    tprof_check(path, "CUPTI %s: tprof check passes" % ver)
    cleanup(r)

r = run([FEED, "calls"], env={"FAKE_CUPTI_SUBSCRIBE": "39"})
one_warning("other subscriber", r, "already in use by another tool")
t = cpu_still_traced("other subscriber", r)
cleanup(r)

r = run([prog("calls"), "4", "50", "all", "0"],
        env={"TPROF_CUPTI_LIB": "/nonexistent/libcupti.so.13"})
one_warning("missing library", r, "TPROF_CUPTI_LIB='/nonexistent/libcupti.so"
            ".13' cannot be loaded")
cpu_still_traced("missing library", r, "cudaMalloc")
cleanup(r)

# The toolkit's real libcupti on a machine without a GPU: 4 threads call
# CUDA at once; one warning.
r = run([prog("calls"), "4", "50", "all", "0"])
one_warning("no device (real libcupti)", r, "no NVIDIA driver")
t = cpu_still_traced("no device (real libcupti)", r, "cudaMalloc")
if t:
    check("no device: the reason is in the trace",
          "libcuda.so.1 cannot be loaded" in t["tprof"]["cupti"]["reason"],
          t["tprof"]["cupti"]["reason"])
cleanup(r)

# No driver that answers: CUPTI is not called at all (CUPTI 13.2, in the
# CUDA 13 PyTorch wheels, dies of an endless recursion in cuptiGetVersion
# then; the stand-in aborts in it under FAKE_CUPTI_CRASH).
CALLS = [prog("calls"), "2", "20", "all", "0"]
crash = {"TPROF_CUPTI_LIB": FAKE, "FAKE_CUPTI_CRASH": "1"}
r = run(CALLS, env=crash)
eq("no driver: the program is unharmed (CUPTI not called)", r.rc, 0)
one_warning("no driver", r, "no NVIDIA driver (libcuda.so.1 cannot be "
            "loaded)")
cpu_still_traced("no driver", r, "cudaMalloc")
cleanup(r)

stub = os.path.join(CUDA_HOME, "lib64", "stubs", "libcuda.so")
if os.path.exists(stub):
    d = tempfile.mkdtemp(prefix="tprof-stub-")
    os.symlink(stub, os.path.join(d, "libcuda.so.1"))
    r = run(CALLS, env=dict(crash, LD_LIBRARY_PATH=d))
    eq("toolkit's stub as libcuda.so.1: the program is unharmed", r.rc, 0)
    one_warning("toolkit's stub as libcuda.so.1", r, "is the CUDA toolkit's "
                "stub; take its stubs directory out of LD_LIBRARY_PATH")
    cleanup(r)
    shutil.rmtree(d, ignore_errors=True)
else:
    print("note: no %s: the stub-driver case is not run" % stub)

r = run(CALLS, env=dict(crash, LD_LIBRARY_PATH=os.path.dirname(FAKE),
                        FAKE_CUDA_DRIVER_ERROR="999"))
eq("driver that fails: the program is unharmed", r.rc, 0)
one_warning("driver that fails", r, "the NVIDIA driver does not answer "
            "(cuDriverGetVersion: error 999): check it with nvidia-smi")
cleanup(r)

r = run(CALLS, env={"TPROF_CUPTI_LIB": FAKE,
                    "LD_LIBRARY_PATH": os.path.dirname(FAKE)})
t, path = trace_of(r)
eq("a driver that answers: CUPTI is called and on",
   t["tprof"]["cupti"]["state"] if t else None, "on")
cleanup(r)

r = run([prog("calls"), "1", "10", "all", "0"], env={"TPROF_TRACE": "cuda"})
check("TPROF_TRACE without gpu: CUPTI is not touched, no warning",
      "warning" not in r.stderr and
      all("cupti" not in l for l in open("/proc/self/maps")), r.stderr)
cleanup(r)

# A static-cudart program is seen at load (its .nv_fatbin): CUPTI is tried
# before its first kernel even though no hook ever fires.
r = run([prog("kernels_static"), "1"])
one_warning("static cudart", r, "no NVIDIA driver")
eq("static cudart: program unaffected", (r.rc, r.stdout.strip()),
   (0, "kernels done: cudaErrorInsufficientDriver"))
cleanup(r)

bad = run([FEED, "calls"], env={"TPROF_CUPTI_BUFFER_MB": "1"})
check("bad TPROF_CUPTI_BUFFER_MB: one error line",
      len(bad.stderr.splitlines()) == 1 and
      "TPROF_CUPTI_BUFFER_MB='1' is not valid" in bad.stderr, bad.stderr)
cleanup(bad)
done()
