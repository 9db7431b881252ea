"""Per-process summaries written at exit: summary.json against
the trace it summarizes (exact counts, totals, min/max, the documented
percentile rule), summary.md, the TPROF_SUMMARY table on stderr, GEMMs
with the GPU time of their kernels (stand-in CUPTI and cuBLAS), ranges
with memory and steps (tprof's C API from Python), and calls the ring
dropped still counted."""
import json
import math
import os
import re
import shutil
import sys
import tempfile

from tplib import (BUILD, check, cleanup, done, eq, load, prog, run,
                   xevents)

TRACE = "tprof-rank0.trace.json.gz"
SJSON = "summaries/tprof-rank0.summary.json"
SMD = "summaries/tprof-rank0.summary.md"


def bucket(v):
    if v < 32:
        return v
    e = v.bit_length() - 1
    return (e - 3) * 16 + ((v >> (e - 4)) & 15)


def lower(b):
    if b < 32:
        return b
    e = b // 16 + 3
    return (16 + b % 16) << (e - 4)


def width(b):
    return 1 if b < 32 else 1 << (b // 16 - 1)


def percentile(durs, pct):
    """docs/reference/summary-format.md's rule, from the durations themselves."""
    durs = sorted(durs)
    rank = max(1, -(-pct * len(durs) // 100))
    b = bucket(durs[rank - 1])
    v = lower(b) + width(b) // 2
    return min(max(v, durs[0]), durs[-1])


def ns(us):
    return round(us * 1000)


def summary_of(r):
    with open(os.path.join(r.dir, SJSON)) as f:
        return json.load(f)


def spans(trace):
    """(cat, name) -> durations in ns, as the summary's rows count them."""
    out = {}
    for e in xevents(trace):
        if e["name"].startswith("ProfilerStep#"):
            continue
        out.setdefault((e["cat"], e["name"]), []).append(ns(e["dur"]))
    begun = {}
    for e in trace["traceEvents"]:
        if e["ph"] == "b":
            begun[(e["cat"], e["id"])] = e
        elif e["ph"] == "e" and (e["cat"], e["id"]) in begun:
            b = begun.pop((e["cat"], e["id"]))
            out.setdefault((b["cat"], b["name"]), []).append(
                ns(e["ts"]) - ns(b["ts"]))
    return out


def wall(trace):
    xs = xevents(trace)
    return (max(ns(e["ts"]) + ns(e["dur"]) for e in xs) -
            min(ns(e["ts"]) for e in xs))


def check_rows(tag, s, trace):
    want = spans(trace)
    rows = {(r["cat"], r["name"]): r for r in s["calls"]}
    eq(tag + ": one row per (cat, name)", sorted(rows), sorted(want))
    w = wall(trace)
    eq(tag + ": wall time", s["wall_ns"], w)
    bad = []
    for key, durs in want.items():
        r = rows.get(key)
        if not r:
            continue
        mean = sum(durs) / len(durs)
        std = math.sqrt(sum((d - mean) ** 2 for d in durs) / len(durs))
        got = (r["count"], r["total_ns"], r["min_ns"], r["max_ns"],
               r["p50_ns"], r["p90_ns"], r["p99_ns"],
               sum(c for _, c in r["hist"]))
        exp = (len(durs), sum(durs), min(durs), max(durs),
               percentile(durs, 50), percentile(durs, 90),
               percentile(durs, 99), len(durs))
        if got != exp or abs(r["mean_ns"] - mean) > 0.001 or \
                abs(r["std_ns"] - std) > 0.002 or \
                abs(r["share"] - sum(durs) / w) > 1e-6:
            bad.append((key, got, exp))
    eq(tag + ": rows match the trace exactly", bad, [])
    totals = [r["total_ns"] for r in s["calls"]]
    eq(tag + ": rows sorted by total", totals, sorted(totals, reverse=True))


# --- CUDA runtime calls: the summary against its own trace ------------
r = run([prog("calls"), "2", "3", "all", "0"], env={"TPROF_SUMMARY": "all"})
eq("calls: trace, summary.json and summary.md", r.all_files(),
   [SJSON, SMD, TRACE])
t = load(os.path.join(r.dir, TRACE))
s = summary_of(r)
eq("calls: schema", (s["schema"], s["schema_version"], s["source"]),
   ("tprof.summary", 2, "tprof"))
eq("calls: identity", (s["rank"], s["trace"], s["pid"], s["host"]),
   (0, TRACE, t["tprof"]["pid"], t["tprof"]["host"]))
eq("calls: base time", s["base_time_ns"], t["baseTimeNanoseconds"])
check_rows("calls", s, t)
eq("calls: nothing dropped", s["dropped"], 0)
eq("calls: events as in the trace", s["events"],
   len([e for e in t["traceEvents"] if e["ph"] != "M"]))
with open(os.path.join(r.dir, SMD)) as f:
    md = f.read()
launch = [x for x in s["calls"] if x["name"] == "cudaLaunchKernel"][0]
check("calls: markdown row", ("| cuda_runtime | cudaLaunchKernel | %d |" %
                              launch["count"]) in md, md[:400])
check("calls: markdown sections", "## CPU-side calls" in md and
      md.startswith("# tprof summary: tprof, rank 0"), md[:200])
lines = r.stderr.splitlines()
wrote = [i for i, l in enumerate(lines) if l.startswith("tprof: wrote ")]
table = [l for l in lines if l.startswith("tprof: summary of rank 0: ")]
check("calls: table on stderr after the wrote line",
      wrote and table and lines.index(table[0]) > wrote[0], r.stderr)
check("calls: table lists the top CPU-side call",
      any(l.split()[1:2] == [launch["name"]] or
          l.strip().startswith("tprof:     " + s["calls"][0]["name"])
          for l in lines), r.stderr)
check("calls: every stderr line is tprof's",
      all(l.startswith("tprof: ") for l in lines), r.stderr)
eq("calls: stdout is the program's", r.stdout, "calls done: 2 threads x 3\n")
cleanup(r)

# --- TPROF_SUMMARY: who prints the table; the files always ------------
def table_printed(env):
    e = dict(env)
    r = run([prog("calls"), "1", "1", "launch", "0"], env=e)
    got = (any(l.startswith("tprof: summary of rank") for l in
               r.stderr.splitlines()), SJSON.replace("0", e.get("RANK", "0"))
           in r.all_files())
    cleanup(r)
    return got


# base_env sets none for the other tests: None unsets it.
eq("TPROF_SUMMARY unset: rank 0 prints",
   table_printed({"TPROF_SUMMARY": None}), (True, True))
eq("TPROF_SUMMARY unset: rank 1 does not",
   table_printed({"TPROF_SUMMARY": None, "RANK": "1"}), (False, True))
eq("TPROF_SUMMARY=rank0 on rank 1",
   table_printed({"TPROF_SUMMARY": "rank0", "RANK": "1"}), (False, True))
eq("TPROF_SUMMARY=all on rank 1",
   table_printed({"TPROF_SUMMARY": "all", "RANK": "1"}), (True, True))
eq("TPROF_SUMMARY=none", table_printed({"TPROF_SUMMARY": "none"}),
   (False, True))
eq("TPROF_LOG=quiet: no table",
   table_printed({"TPROF_SUMMARY": "all", "TPROF_LOG": "quiet"}),
   (False, True))
r = run([prog("calls"), "1", "1", "launch", "0"],
        env={"TPROF_SUMMARY": "rank1"})
eq("TPROF_SUMMARY=rank1: refused, nothing written",
   (r.rc, r.all_files(), [l for l in r.stderr.splitlines()
                          if "TPROF_SUMMARY='rank1' is not valid" in l
                          and l.startswith("tprof: error: ")] != []),
   (0, [], True))
cleanup(r)

# --- summaries/: made safely, never through a symlink -----------------
# umask 0 would make a plain mkdir(0777) world-writable: summaries/ is
# 0755 whatever the umask.
r = run(["sh", "-c", "umask 0; exec \"$0\" 1 1 launch 0", prog("calls")])
st = os.lstat(os.path.join(r.dir, "summaries"))
eq("summaries/: a directory of mode 0755 under umask 0",
   (r.rc, oct(st.st_mode)), (0, "0o40755"))
cleanup(r)
# a summaries symlink planted in a shared output directory is not followed
d = tempfile.mkdtemp(prefix="tprof-it-")
elsewhere = tempfile.mkdtemp(prefix="tprof-elsewhere-")
os.symlink(elsewhere, os.path.join(d, "summaries"))
r = run([prog("calls"), "1", "1", "launch", "0"], outdir=d)
eq("summaries/ as a symlink: not followed, said once, the trace kept",
   (r.rc, os.listdir(elsewhere), [l for l in r.stderr.splitlines()
                                  if "summaries" in l],
    "tprof-rank0.trace.json.gz" in os.listdir(d)),
   (0, [], ["tprof: error: cannot write the summaries in %s/summaries: "
            "Not a directory (choose another TPROF_OUTPUT_DIR)" % d],
    True))
shutil.rmtree(elsewhere, ignore_errors=True)
cleanup(r)

# --- GEMMs: the kernels a GEMM launched give it GPU time --------------
FEED = prog("cupti_feed")
STAND_IN = os.path.join(BUILD, "tests", "bin", "gemm_launch.so")
r = run([FEED, "gemm"], preload=False,
        env={"LD_PRELOAD": os.path.join(BUILD, "libtprof.so") + ":" +
             STAND_IN})
printed = dict(l.split() for l in r.stdout.splitlines())
t = load(os.path.join(r.dir, TRACE))
s = summary_of(r)
corr = int(printed["gemm_launch"])
kernels = [e for e in xevents(t) if e["cat"] == "kernel" and
           e["args"]["correlation"] == corr]
gemm = s["gemm"][0] if len(s["gemm"]) == 1 else {}
gpu = sum(ns(e["dur"]) for e in kernels)
check("gemm: its launch's kernels are in the trace", len(kernels) >= 1,
      kernels)
eq("gemm: shape, type, calls, FLOPs",
   {k: gemm.get(k) for k in ("name", "m", "n", "k", "batch", "dtype",
                             "calls", "flops")},
   {"name": "cublasSgemm_v2", "m": 1024, "n": 1024, "k": 1024, "batch": 1,
    "dtype": "CUDA_R_32F", "calls": 1, "flops": 2 * 1024 ** 3})
eq("gemm: GPU time of the kernels it launched (not the other one)",
   (gemm.get("kernels"), gemm.get("gpu_ns")), (len(kernels), gpu))
eq("gemm: TFLOP/s = FLOPs / GPU time", gemm.get("tflops"),
   round(2 * 1024 ** 3 / gpu / 1000, 3))
eq("gemm: cpu time is the call's",
   gemm.get("cpu_ns"), ns(xevents(t, "cublasSgemm_v2")[0]["dur"]))
check_rows("gemm", s, t)
check("gemm: GPU time per kernel name",
      any(x["cat"] == "kernel" and x["name"] == "sgemm_128x64_kernel"
          for x in s["calls"]), s["calls"])
cleanup(r)

# --- ranges with memory and steps, through tprof's C API --------------
SCRIPT = r"""
import ctypes, time
lib = ctypes.CDLL(None)
lib.tprof_range_push.argtypes = [ctypes.c_char_p]
lib.tprof_range_pop_memory.argtypes = [ctypes.c_int64] * 3
for i in range(4):
    lib.tprof_range_push(b"forward")
    time.sleep(0.002)
    lib.tprof_range_pop_memory(1000 * i, 1000 * i + 4096, 1000 * i + 65536)
    lib.tprof_range_push(b"plain")
    lib.tprof_range_pop()
    lib.tprof_step()
"""
r = run([sys.executable, "-c", SCRIPT])
t = load(os.path.join(r.dir, TRACE))
s = summary_of(r)
fw = [x for x in s["ranges"] if x["name"] == "forward"]
fw = fw[0] if fw else {}
tr = [e for e in xevents(t, "forward")]
eq("ranges: repeats, total, domain",
   (fw.get("repeats"), fw.get("total_ns"), fw.get("domain")),
   (4, sum(ns(e["dur"]) for e in tr), "tprof"))
eq("ranges: net and peak memory change",
   (fw.get("mem_net_bytes"), fw.get("mem_peak_bytes")), (4096, 65536))
pl = [x for x in s["ranges"] if x["name"] == "plain"]
eq("ranges: no memory recorded: null",
   (pl[0]["mem_net_bytes"], pl[0]["mem_peak_bytes"]) if pl else None,
   (None, None))
steps = [e for e in xevents(t) if e["name"].startswith("ProfilerStep#")]
eq("steps: every kept step",
   s["steps"]["times"],
   [[e["args"]["step"], ns(e["ts"]), ns(e["dur"])] for e in steps])
eq("steps: count", s["steps"]["count"], len(steps))
check_rows("ranges", s, t)
cleanup(r)

# --- NVTX push/pop and start/end ranges --------------------------------
r = run([prog("nvtx_calls")])
t = load(os.path.join(r.dir, TRACE))
s = summary_of(r)
check("nvtx: the trace has start/end ranges",
      any(e["ph"] == "b" for e in t["traceEvents"]), "no b events")
check_rows("nvtx", s, t)
eq("nvtx: a range row per annotated name",
   sorted({x["name"] for x in s["ranges"]}),
   sorted({k[1] for k in spans(t) if k[0] == "user_annotation"}))
eq("nvtx: ranges repeat as often as the trace's",
   sorted((x["name"], x["repeats"]) for x in s["ranges"]),
   sorted((x["name"], x["count"]) for x in s["calls"]
          if x["cat"] == "user_annotation"))
cleanup(r)

# --- the call stacks of the slowest calls (TPROF_BACKTRACE) -----------
r = run([prog("stacks"), "5"], env={"TPROF_BACKTRACE": "0"})
t = load(os.path.join(r.dir, TRACE))
s = summary_of(r)
top = t["tprof"]["backtraces"]["top"]
eq("stacks: the trace's top stacks, in ns",
   [(x["calls"], x["total_ns"], x["max_ns"], x["slowest"], x["frames"])
    for x in s["stacks"]],
   [(x["calls"], ns(x["total_us"]), ns(x["max_us"]), x["slowest"],
     x["stack"]) for x in top][:10])
check("stacks: some recorded", len(s["stacks"]) > 0, s["stacks"])
with open(os.path.join(r.dir, SMD)) as f:
    md = f.read()
check("stacks: markdown table", "## Call stacks of the slowest calls" in md
      and top and top[0]["stack"][0] in md, md[-600:])
cleanup(r)
# C++ frames: '<' would open an HTML tag in the rendered markdown.
r = run([prog("stacks_cpp")], env={"TPROF_BACKTRACE": "0"})
with open(os.path.join(r.dir, SMD)) as f:
    md = f.read()
rows = [l for l in md.splitlines() if "cudaMemcpy" in l and "<br/>" in l]
cell = rows[0].split(" | ")[4] if rows else ""
eq("stacks: markdown row, '<' escaped, one frame per line",
   [re.sub(r"\+0x[0-9a-f]+", "", f) for f in cell.split(" <br/> ")[:3]],
   ["model::Layer\\<float>::forward() (stacks_cpp)", "model::run(int) (stacks_cpp)",
    "main (stacks_cpp)"])
cleanup(r)
r = run([prog("calls"), "1", "1", "launch", "0"])
eq("stacks: null when not recorded", summary_of(r)["stacks"], None)
cleanup(r)

# --- a full ring: dropped calls are still counted ---------------------
for iters in (20000, 80000):
    r = run([prog("calls"), "1", str(iters), "launch", "0"],
            env={"TPROF_BUFFER_MB": "1"})
    s = summary_of(r)
    if s["dropped"]:
        break
    cleanup(r)
t = load(os.path.join(r.dir, TRACE))
lost = t["tprof"]["events_dropped"]
check("drops: the ring dropped calls", lost > 0, lost)
row = [x for x in s["calls"] if x["name"] == "cudaLaunchKernel"][0]
in_trace = len(xevents(t, "cudaLaunchKernel"))
eq("drops: counted in their row", (row["count"], row["dropped"]),
   (in_trace + row["dropped"], row["dropped"]))
eq("drops: every call made is counted", row["count"], iters)
eq("drops: summary total", s["dropped"], lost)
cleanup(r)

done()
