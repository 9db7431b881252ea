"""Checks of the tprof GPU validation suite (tests/gpu/run.sh).

Library: contract() checks what every tprof trace with GPU activity must
hold (CUPTI state, GPU op args, ac2g flows, GPU after CPU); native() the
exact counts of tests/gpu/progs/known_work.cu; compare() tprof against
torch.profiler. Command line: one subcommand per check, reading the files
run.sh left in the check's folder (LABEL.out/.err/.rc, trace/) and
writing its result.json there; `report` gathers them. Stdlib only.
"""
import collections
import datetime
import glob
import gzip
import json
import os
import re
import socket
import statistics
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
CLI = os.path.join(os.environ.get("TPROF_TEST_BUILD") or os.path.join(ROOT, "build"), "tprof")
CHECKS = ["native", "native_static", "torch_vs_profiler", "overhead_torch",
          "overhead_native"]
GPU_OPS = ("kernel", "gpu_memcpy", "gpu_memset")
CPU_CATS = ("cuda_runtime", "cuda_driver")
COPY_KINDS = ("HtoD", "DtoH", "DtoD", "HtoH", "PtoP")
WORK_CALL = re.compile(r"^cu(da)?(Launch|GraphLaunch|Memcpy|Memset)")
COUNT_TOL, TIME_TOL = 0.02, 0.10


def ns(us):
    return round(us * 1000)


def load(path):
    with (gzip.open if path.endswith(".gz") else open)(path, "rt", encoding="utf-8") as f:
        return json.load(f)


def xs(trace, cats):
    return [e for e in trace.get("traceEvents", [])
            if e.get("ph") == "X" and e.get("cat") in cats]


def isint(v):
    return isinstance(v, int) and not isinstance(v, bool)


class Problems:
    """Problems grouped by kind, with a count and the first example."""

    def __init__(self):
        self.kinds = collections.OrderedDict()

    def add(self, kind, example=""):
        n, ex = self.kinds.get(kind, (0, example))
        self.kinds[kind] = (n + 1, ex)

    def merge(self, other, prefix=""):
        for k, (n, ex) in other.kinds.items():
            self.kinds[prefix + k] = (n, ex)

    def list(self):
        return [k + (" (x%d)" % n if n > 1 else "") +
                ((", e.g. " if n > 1 else ": ") + str(ex)[:300] if ex else "")
                for k, (n, ex) in self.kinds.items()]


def brief(e):
    return "%s %r ts=%s corr=%s" % (e.get("cat") or e.get("ph"), e.get("name"),
                                    e.get("ts"), e.get("args", {}).get("correlation", e.get("id")))


def flows(t, ops=None, cpu=None, p=None, fig=None):
    """The ac2g flows of a trace: one s on the CPU event per correlation
    (written with its first GPU op), and one f on each GPU op of that
    correlation (a graph launch has several; Perfetto draws an arrow per
    f). Returns the GPU ops per correlation; problems into p, counts
    into fig["flows"]."""
    ops = xs(t, GPU_OPS) if ops is None else ops
    cpu = xs(t, CPU_CATS) if cpu is None else cpu
    p = Problems() if p is None else p
    fig = {} if fig is None else fig
    fl = [e for e in t.get("traceEvents", []) if e.get("ph") in ("s", "f")]
    n_s = collections.Counter(e.get("id") for e in fl if e["ph"] == "s")
    n_f = collections.Counter(e.get("id") for e in fl if e["ph"] == "f")
    fig["flows"] = {"s": sum(n_s.values()), "f": sum(n_f.values())}
    cpu_at = collections.defaultdict(set)
    for e in cpu:
        cpu_at[(e.get("pid"), e.get("tid"), ns(e["ts"]))].add(e.get("args", {}).get("correlation"))
    op_at = collections.Counter((e.get("args", {}).get("correlation"), e.get("pid"), e.get("tid"),
                                 ns(e["ts"])) for e in ops)
    f_at = collections.Counter()
    for e in fl:
        if e.get("cat") != "ac2g" or e.get("name") != "ac2g":
            p.add("flow whose cat/name is not ac2g", brief(e))
        key = (e.get("pid"), e.get("tid"), ns(e.get("ts", -1)))
        if e["ph"] == "s" and e.get("id") not in cpu_at.get(key, ()):
            p.add("flow start not on a CPU event with that args.correlation", brief(e))
        if e["ph"] == "f":
            if e.get("bp") != "e":
                p.add("flow end without \"bp\":\"e\"", brief(e))
            f_at[(e.get("id"),) + key] += 1
    for k, n in f_at.items():
        if n > op_at[k]:
            p.add("flow end not on a GPU op with that correlation", "id=%s pid=%s tid=%s" % k[:3])
    for k, n in op_at.items():
        if f_at[k] < n:
            p.add("GPU op without its flow end", "id=%s pid=%s tid=%s ts_ns=%s" % k)
    n_ops = collections.Counter()
    for k, n in op_at.items():
        n_ops[k[0]] += n
    for c in set(n_s) | set(n_f) | set(n_ops):
        if not (n_s[c] == 1 and n_f[c] == n_ops[c]):
            p.add("flow id without exactly one start and one end per GPU op",
                  "id=%s: %d s, %d f, %d ops" % (c, n_s[c], n_f[c], n_ops[c]))
    return n_ops


def contract(t, p=None):
    """The trace contract for GPU activity. Returns (Problems, figures)."""
    p = p or Problems()
    fig = {}
    cu = t.get("tprof", {}).get("cupti")
    fig["cupti"] = cu
    fig["clock"] = t.get("tprof", {}).get("clock")
    if not isinstance(cu, dict):
        p.add("no tprof.cupti object: CUPTI module missing from this build?")
    else:
        if cu.get("state") != "on":
            p.add("tprof.cupti.state is %r, reason %r" % (cu.get("state"), cu.get("reason")))
        if cu.get("dropped", 0) != 0:
            p.add("tprof.cupti.dropped is %r" % cu.get("dropped"))
    devs = t.get("deviceProperties")
    devs = devs if isinstance(devs, list) else []
    ids = {d["id"] for d in devs if isinstance(d, dict) and "id" in d and "name" in d}
    fig["devices"] = ["%s: %s" % (d.get("id"), d.get("name")) for d in devs if isinstance(d, dict)]
    if not ids:
        p.add("deviceProperties has no device with id and name")

    ops = xs(t, GPU_OPS)
    cpu = xs(t, CPU_CATS)
    # Ops that overlap on one stream (programmatic dependent launch) go on
    # lanes of it: tracks of their own named "stream S (k)".
    lane_names = {(e.get("pid"), e.get("tid")): e.get("args", {}).get("name", "")
                  for e in t.get("traceEvents", [])
                  if e.get("ph") == "M" and e.get("name") == "thread_name"}
    fig["events"] = dict(collections.Counter(
        e.get("cat") for e in t.get("traceEvents", []) if e.get("ph") == "X"))
    fig["gpu_ops"] = len(ops)
    fig["kernel_time_us"] = round(sum(e.get("dur", 0) for e in ops if e["cat"] == "kernel"), 3)
    if not ops:
        p.add("no GPU op (kernel, gpu_memcpy, gpu_memset) in the trace")

    for e in ops:
        a = e.get("args", {})
        miss = [k for k in ("device", "stream", "correlation") if not isint(a.get(k))]
        if miss:
            p.add("GPU op without integer args %s" % "/".join(miss), brief(e))
            continue
        if e.get("pid") != a["device"] or (
                e.get("tid") != a["stream"] and
                not re.fullmatch(r"stream %d \(\d+\)" % a["stream"],
                                 lane_names.get((e.get("pid"), e.get("tid")), ""))):
            p.add("GPU op whose pid/tid is not its args device/stream "
                  "(or a lane of that stream)", brief(e))
        if ids and a["device"] not in ids:
            p.add("GPU op on a device missing from deviceProperties", brief(e))
        if e["cat"] == "kernel":
            if not all(isinstance(a.get(k), list) and len(a[k]) == 3 and all(map(isint, a[k]))
                       for k in ("grid", "block")):
                p.add("kernel without grid/block arrays of 3 ints", brief(e))
            if "registers per thread" not in a or "shared memory" not in a:
                p.add("kernel without 'registers per thread'/'shared memory'", brief(e))
        else:
            if "bytes" not in a or "memory bandwidth (GB/s)" not in a:
                p.add("copy/memset without 'bytes'/'memory bandwidth (GB/s)'", brief(e))
            if e["cat"] == "gpu_memcpy" and a.get("kind") not in COPY_KINDS:
                p.add("memcpy with args.kind not in %s" % (COPY_KINDS,), brief(e))

    # Figures only: a launch during stream capture queues nothing, and an op
    # whose call lacks the correlation fails the flow checks below anyway.
    cpu_by_corr = collections.defaultdict(list)
    fig["work_calls_without_correlation"] = 0
    for e in cpu:
        c = e.get("args", {}).get("correlation")
        if isint(c):
            cpu_by_corr[c].append(e)
        elif WORK_CALL.match(e.get("name", "")) and e.get("args", {}).get("ret", 0) == 0:
            fig["work_calls_without_correlation"] += 1
    for c, es in cpu_by_corr.items():
        if sum(e["cat"] == "cuda_runtime" for e in es) > 1:
            p.add("correlation on more than one cuda_runtime event (a call recorded twice?)",
                  "; ".join(map(brief, es)))

    n_ops = flows(t, ops, cpu, p, fig)

    # A GPU op starts after the CPU call that queued it.
    leads = []
    for e in ops:
        c = e.get("args", {}).get("correlation")
        if c not in cpu_by_corr:
            p.add("GPU op with no CPU event of the same correlation", brief(e))
            continue
        lead = ns(e["ts"]) - min(ns(x["ts"]) for x in cpu_by_corr[c])
        leads.append(lead)
        if lead < 0:
            p.add("GPU op starting before its CPU call", "%s, %d ns early" % (brief(e), -lead))
        elif lead == 0:     # a start tprof moved onto its launch: a figure
            fig["clamped_to_launch"] = fig.get("clamped_to_launch", 0) + 1
    if leads:
        fig["cpu_to_gpu_start_us"] = {"min": min(leads) / 1e3,
                                      "median": statistics.median(leads) / 1e3,
                                      "max": max(leads) / 1e3}
    fig["work_calls_without_gpu_op"] = sum(
        1 for c, es in cpu_by_corr.items()
        if c not in n_ops and any(WORK_CALL.match(e.get("name", "")) for e in es))
    fig["cuda_sync"] = len(xs(t, ("cuda_sync",)))
    return p, fig


def native(t, expect, p=None):
    """known_work.cu's exact counts, shapes, graph args and CPU links."""
    p = p or Problems()
    fig = {}
    ops = xs(t, GPU_OPS)
    counts = collections.Counter()
    for e in (e for e in ops if e["cat"] == "kernel"):
        a = e.get("args", {})
        m = [k for k in expect["kernels"] if k["match"] in e.get("name", "")]
        if len(m) != 1:
            p.add("unexpected kernel", e.get("name"))
            continue
        k = m[0]
        counts[k["match"]] += 1
        if a.get("grid") != k["grid"] or a.get("block") != k["block"]:
            p.add("kernel with wrong grid/block", "%s grid %s block %s, want %s %s" % (
                k["match"], a.get("grid"), a.get("block"), k["grid"], k["block"]))
        graph = isint(a.get("graph id")) and isint(a.get("graph node id"))
        if graph != k["graph"]:
            p.add("kernel %s integer 'graph id'/'graph node id'" % (
                "without" if k["graph"] else "with"), brief(e))
    fig["kernels"] = {k["match"]: counts[k["match"]] for k in expect["kernels"]}
    for k in expect["kernels"]:
        if counts[k["match"]] != k["count"]:
            p.add("kernel count of %s" % k["match"], "%d in the trace, want %d" % (
                counts[k["match"]], k["count"]))

    copies = collections.defaultdict(lambda: [0, 0])
    for e in (e for e in ops if e["cat"] == "gpu_memcpy"):
        kind = e.get("args", {}).get("kind")
        copies[kind][0] += 1
        copies[kind][1] += e.get("args", {}).get("bytes", 0)
        if not e.get("name", "").startswith("Memcpy %s" % kind):
            p.add("memcpy name does not start with 'Memcpy <kind>'", brief(e))
    fig["memcpy"] = {k: v for k, v in copies.items()}
    for kind in set(copies) | set(expect["memcpy"]):
        if copies.get(kind, [0, 0]) != expect["memcpy"].get(kind, [0, 0]):
            p.add("memcpy %s [count, bytes]" % kind, "%s, want %s" % (
                copies.get(kind, [0, 0]), expect["memcpy"].get(kind, [0, 0])))
    sets = [e for e in ops if e["cat"] == "gpu_memset"]
    fig["memset"] = [len(sets), sum(e.get("args", {}).get("bytes", 0) for e in sets)]
    if fig["memset"] != expect["memset"]:
        p.add("memset [count, bytes]", "%s, want %s" % (fig["memset"], expect["memset"]))
    for e in sets:
        if not e.get("name", "").startswith("Memset"):
            p.add("memset name does not start with 'Memset'", brief(e))

    # One GPU op per launch; a graph launch's correlation holds the graph.
    by_corr = collections.defaultdict(list)
    for e in ops:
        by_corr[e.get("args", {}).get("correlation")].append(e)
    graph_corrs = [c for c, es in by_corr.items() if any("graph id" in e.get("args", {}) for e in es)]
    fig["graph_launches"] = len(graph_corrs)
    fig["graph_ids"] = sorted({e["args"]["graph id"] for c in graph_corrs for e in by_corr[c]
                               if "graph id" in e.get("args", {})}, key=str)
    if len(graph_corrs) != expect["graph_launches"]:
        p.add("graph launches (correlations holding graph kernels)",
              "%d, want %d" % (len(graph_corrs), expect["graph_launches"]))
    cpu_by_corr = collections.defaultdict(list)
    for e in xs(t, CPU_CATS):
        cpu_by_corr[e.get("args", {}).get("correlation")].append(e.get("name", ""))
    links = collections.Counter()
    for c, es in by_corr.items():
        graph = c in graph_corrs
        want = expect["ops_per_graph"] if graph else 1
        if len(es) != want:
            p.add("correlation with a wrong number of GPU ops (double-counted op?)",
                  "id=%s: %d ops (%s), want %d" % (c, len(es), ", ".join(e.get("name", "")[:40] for e in es), want))
        names = cpu_by_corr.get(c, [])
        for e in es:
            pat = "GraphLaunch" if graph else {"kernel": "Launch", "gpu_memcpy": "Memcpy",
                                               "gpu_memset": "Memset"}[e["cat"]]
            ok = [n for n in names if pat in n and (graph or "GraphLaunch" not in n)]
            links["%s <- %s" % (e["cat"] + (" (graph)" if graph else ""), "/".join(sorted(set(names))) or "none")] += 1
            if not ok:
                p.add("GPU op whose CPU call is not a %s call" % pat, "%s <- %s" % (brief(e), names))
    fig["cpu_links"] = dict(links)
    return p, fig


def kernels(t, window=None):
    """Kernel events, those starting inside window (Unix ns) if given."""
    ks = xs(t, ("kernel",))
    if window:
        base = t.get("baseTimeNanoseconds", 0)
        ks = [e for e in ks if window[0] <= base + ns(e["ts"]) < window[1]]
    return ks


def compare(tp_kernels, prof_kernels):
    """tprof against torch.profiler: (Problems, figures)."""
    p = Problems()
    n1, n2 = len(tp_kernels), len(prof_kernels)
    d1 = sum(e.get("dur", 0) for e in tp_kernels)
    d2 = sum(e.get("dur", 0) for e in prof_kernels)
    fig = {"tprof_kernels": n1, "profiler_kernels": n2,
           "count_ratio": round(n1 / n2, 4) if n2 else None,
           "tprof_kernel_time_us": round(d1, 3), "profiler_kernel_time_us": round(d2, 3),
           "time_ratio": round(d1 / d2, 4) if d2 else None}
    if not n2 or abs(n1 / n2 - 1) > COUNT_TOL:
        p.add("kernel counts differ by more than %d%%" % (COUNT_TOL * 100), "%d vs %d" % (n1, n2))
    if not d2 or abs(d1 / d2 - 1) > TIME_TOL:
        p.add("total kernel time differs by more than %d%%" % (TIME_TOL * 100),
              "%.1f us vs %.1f us" % (d1, d2))
    c1 = collections.Counter(e.get("name") for e in tp_kernels)
    c2 = collections.Counter(e.get("name") for e in prof_kernels)
    diff = sorted(((c1[k] - c2[k], k) for k in set(c1) | set(c2) if c1[k] != c2[k]),
                  key=lambda x: -abs(x[0]))
    fig["name_count_diffs"] = ["%+d %s" % (d, str(k)[:100]) for d, k in diff[:10]]
    return p, fig


def tprof_check(path, p):
    if not os.access(CLI, os.X_OK):
        p.add("build/tprof is missing: tprof check not run")
        return
    r = subprocess.run([CLI, "check", path], capture_output=True, text=True)
    if r.returncode:
        p.add("tprof check failed", (r.stdout + r.stderr).strip().replace("\n", " | "))


# ---- command line: one check per subcommand ----

def ran(d, label):
    """(rc, stdout, stderr) of the step run.sh ran as d/label.*"""
    def rd(ext):
        try:
            with open(os.path.join(d, "%s.%s" % (label, ext)), errors="replace") as f:
                return f.read()
        except OSError:
            return None
    rc = rd("rc")
    return (int(rc) if rc and rc.strip().lstrip("-").isdigit() else None), rd("out") or "", rd("err") or ""


def step_problem(d, label):
    """None if the step succeeded, else ('skipped'|'fail', why)."""
    rc, out, err = ran(d, label)
    last = (err.strip().splitlines() or out.strip().splitlines() or ["no output"])[-1]
    if rc == 0:
        return None
    if rc is None:
        return "fail", "%s did not run" % label
    if rc == 77:
        return "skipped", last
    if rc in (124, 137):
        return "fail", "%s timed out (see %s.err)" % (label, label)
    return "fail", "%s exited %d: %s" % (label, rc, last)


def line_json(text, prefix=""):
    for l in reversed(text.splitlines()):
        if l.startswith(prefix + "{"):
            try:
                return json.loads(l[len(prefix):])
            except ValueError:
                pass
    return None


def one_trace(tdir, name, p, fig):
    """The trace of NAME in tdir; with several (-pid files) the one with most GPU ops."""
    paths = sorted(glob.glob(os.path.join(tdir, name + "-rank*.trace.json.gz")))
    fig["trace_files"] = [os.path.relpath(x, os.path.dirname(tdir)) for x in paths]
    if not paths:
        p.add("no trace %s/%s-rank*.trace.json.gz" % (tdir, name))
        return None, None
    traces = [(len(xs(t, GPU_OPS)), i, t, x) for i, (x, t) in enumerate((x, load(x)) for x in paths)]
    _, _, t, path = max(traces)
    return t, path


def result(d, status, reason="", figures=None):
    r = {"name": os.path.basename(os.path.normpath(d)), "status": status,
         "reason": reason, "figures": figures or {}}
    with open(os.path.join(d, "result.json"), "w") as f:
        json.dump(r, f, indent=1)
    print("%s: %s%s" % (r["name"], status, ": " + reason if reason else ""))
    print(json.dumps(r["figures"], indent=1))


def finish(d, p, fig):
    probs = p.list()
    result(d, "fail" if probs else "pass", "; ".join(probs), fig)


def cmd_native(d, name):
    p, fig = Problems(), {}
    bad = step_problem(d, "run")
    expect = line_json(ran(d, "run")[1], "EXPECT ")
    if bad and bad[0] == "skipped":
        return result(d, *bad)
    if bad:
        p.add(bad[1])
    t, path = one_trace(os.path.join(d, "trace"), name, p, fig)
    if t:
        fig.update(contract(t, p)[1])
        tprof_check(path, p)
        if expect:
            fig.update(native(t, expect, p)[1])
    if not expect:
        p.add("known_work printed no EXPECT line: counts not checked")
    finish(d, p, fig)


def truth(t, want_ops, p):
    """GPU truth on a real GPU: every GPU op has exactly one flow from its
    launch, no two ops overlap on a track (strict nesting elsewhere), and
    CUPTI lost, moved or left unlinked nothing."""
    fig = {}
    gpu = [e for e in xs(t, ("kernel", "gpu_memcpy", "gpu_memset"))]
    fig["gpu_ops"] = len(gpu)
    if want_ops is not None and len(gpu) != want_ops:
        p.add("GPU ops", "%d GPU ops, want %d" % (len(gpu), want_ops))
    ends = {}
    starts = set()
    for e in t["traceEvents"]:
        if e.get("ph") == "f":
            ends.setdefault(e["id"], []).append(e)
        elif e.get("ph") == "s":
            starts.add(e["id"])
    linked = sum(1 for e in gpu
                 if e["args"].get("correlation") in starts and
                 any(f["pid"] == e["pid"] and f["tid"] == e["tid"] and
                     f["ts"] == e["ts"]
                     for f in ends.get(e["args"]["correlation"], [])))
    fig["linked"] = "%d/%d" % (linked, len(gpu))
    if linked != len(gpu):
        p.add("no flow", "%d of %d GPU ops have no flow from their launch" %
              (len(gpu) - linked, len(gpu)))
    tracks = {}
    for e in gpu:
        tracks.setdefault((e["pid"], e["tid"]), []).append(
            (ns(e["ts"]), ns(e["ts"]) + ns(e["dur"])))
    over = sum(1 for v in tracks.values() for a, b in zip(sorted(v),
                                                          sorted(v)[1:])
               if b[0] < a[1])
    fig["overlaps"] = over
    if over:
        p.add("overlap", "%d GPU ops overlap another on their track" % over)
    cu = t.get("tprof", {}).get("cupti", {})
    for k in ("dropped", "zero_timestamps", "unclocked", "unplaced",
              "unlinked", "truncated_buffers"):
        fig[k] = cu.get(k)
        if cu.get(k):
            p.add("tprof.cupti.%s" % k, cu.get(k))
    fig["shifted"] = cu.get("shifted")
    fig["overlapped"] = cu.get("overlapped")
    return p, fig


def cmd_truth(d):
    p, fig = Problems(), {}
    for name, ops in (("two_threads", 2400), ("exit_inflight", 85),
                      ("graph", 150)):
        bad = step_problem(d, name)
        if bad:
            p.add(name, bad[1])
            continue
        t, path = one_trace(os.path.join(d, name), name, p, fig)
        if not t:
            continue
        sub = Problems()
        f = truth(t, ops, sub)[1]
        fig.update({"%s %s" % (name, k): v for k, v in f.items()})
        p.merge(sub, name + ": ")
        tprof_check(path, p)
    finish(d, p, fig)


def cmd_torch(d):
    p, fig = Problems(), {}
    for label in ("tprof", "profiler"):
        bad = step_problem(d, label)
        if bad:
            p.add(bad[1])
    t, path = one_trace(os.path.join(d, "trace"), "torch", p, fig)
    try:
        w = load(os.path.join(d, "window.json"))
        prof = load(os.path.join(d, "profiler.json"))
    except (OSError, ValueError) as e:
        p.add("torch_loop output missing: %s" % e)
        return finish(d, p, fig)
    if t:
        c = contract(t, Problems())
        p.merge(c[0], "tprof trace: ")
        fig.update({k: v for k, v in c[1].items() if k in ("cupti", "events", "flows")})
        tprof_check(path, p)
        win = (w["t0_ns"], w["t1_ns"])
        fig["tprof_kernels_whole_run"] = len(kernels(t))
        fig["tprof_kernels_near_window"] = len(kernels(t, (win[0] - 50000000, win[0]))) + \
            len(kernels(t, (win[1], win[1] + 50000000)))
        cp, cf = compare(kernels(t, win), kernels(prof))
        fig.update(cf)
        p.merge(cp)
    finish(d, p, fig)


def inside(a, b):
    return a.get("tid") == b.get("tid") and ns(b["ts"]) <= ns(a["ts"]) and \
        ns(a["ts"]) + ns(a.get("dur", 0)) <= ns(b["ts"]) + ns(b["dur"])


def libs(t, ex, p=None):
    """torch_libs.py's work: GEMMs with their FLOPs, a convolution, the
    NVTX range around them, the all-reduce with its bytes, NCCL's world."""
    p = p or Problems()
    ev = t.get("traceEvents", [])
    gemms = [e for e in xs(t, ("cublas",))
             if e.get("args", {}).get("flops") == ex["gemm_flops"]]
    if len(gemms) < ex["gemms"]:
        p.add("cuBLAS: %d events with flops %d, want at least %d" %
              (len(gemms), ex["gemm_flops"], ex["gemms"]),
              [brief(e) for e in xs(t, ("cublas",))[:3]])
    conv = xs(t, ("cudnn",))
    if not conv:
        p.add("cuDNN: no event")
    rng = [e for e in xs(t, ("user_annotation",)) if e.get("name") == ex["range"]]
    if len(rng) != 1:
        p.add("NVTX: %d ranges named %r, want 1" % (len(rng), ex["range"]))
    elif any(not inside(g, rng[0]) for g in gemms):
        p.add("NVTX: a GEMM lies outside the range around it")
    ar = [e for e in xs(t, ("nccl",)) if e.get("name") == "ncclAllReduce" and
          e.get("args", {}).get("bytes") == ex["allreduce_bytes"]]
    if not ar:
        p.add("NCCL: no ncclAllReduce of %d bytes" % ex["allreduce_bytes"])
    di = t.get("distributedInfo", {})
    if di.get("backend") != "nccl" or di.get("nccl_world_size") != 1:
        p.add("distributedInfo lacks the NCCL world", di)
    fig = {"cublas_events": len(xs(t, ("cublas",))), "gemms_with_flops": len(gemms),
           "cublas_names": sorted({e["name"] for e in xs(t, ("cublas",))}),
           "cudnn_names": sorted({e["name"] for e in conv}),
           "nccl_names": sorted({e["name"] for e in xs(t, ("nccl",))}),
           "annotations": sum(1 for e in ev if e.get("cat") == "user_annotation")}
    return p, fig


def cmd_libs(d):
    p, fig = Problems(), {}
    bad = step_problem(d, "run")
    expect = line_json(ran(d, "run")[1], "EXPECT ")
    if bad:
        p.add(bad[1])
    t, path = one_trace(os.path.join(d, "trace"), "libs", p, fig)
    if t:
        tprof_check(path, p)
        if expect:
            fig.update(libs(t, expect, p)[1])
    if not expect:
        p.add("torch_libs printed no EXPECT line")
    finish(d, p, fig)


def steps(t, want, p=None):
    """A --torch-steps run with a schedule: exactly the wanted
    ProfilerStep events; kernels kept, each launched inside a kept step;
    CUPTI let go after the last window."""
    p = p or Problems()
    ps = [e for e in t["traceEvents"] if e.get("ph") == "X" and
          str(e.get("name", "")).startswith("ProfilerStep#")]
    names = [e["name"] for e in ps]
    if names != ["ProfilerStep#%d" % n for n in want]:
        p.add("kept steps are not the schedule's", names)
    ks = kernels(t)
    if not ks:
        p.add("no kernel kept")
    launch = {e["args"]["correlation"]: e for e in t["traceEvents"]
              if e.get("ph") == "X" and e.get("cat") in ("cuda_runtime", "cuda_driver")
              and isinstance(e.get("args"), dict) and "correlation" in e["args"]}
    for k in ks:
        c = launch.get(k.get("args", {}).get("correlation"))
        if not c:
            p.add("kernel without its launch", brief(k))
        elif not any(ns(s["ts"]) <= ns(c["ts"]) < ns(s["ts"]) + ns(s["dur"]) for s in ps):
            p.add("kernel launched outside every kept step", brief(k))
    fin = t.get("tprof", {}).get("cupti", {}).get("finalized")
    if fin != 1:
        p.add("CUPTI not finalized after the last window", fin)
    return p, {"steps": names, "kernels": len(ks), "finalized": fin}


def cmd_run_trace(d, name, judge):
    """One `run` step, its trace NAME judged by judge(trace) -> (problems, figures)."""
    p, fig = Problems(), {}
    bad = step_problem(d, "run")
    if bad:
        p.add(bad[1])
    t, path = one_trace(os.path.join(d, "trace"), name, p, fig)
    if t:
        tprof_check(path, p)
        sp, sf = judge(t)
        p.merge(sp)
        fig.update(sf)
    finish(d, p, fig)


def cmd_steps(d):
    cmd_run_trace(d, "steps", lambda t: steps(t, [2, 3]))


def stacks(t, p=None):
    """--backtrace all:sync,memcpy --python-stacks on torch: every sync
    and copy has a stack; under Python 3.12 or later some reach
    torch_loop.py's functions through the trampoline, down to <module>."""
    p = p or Problems()
    evs = [e for e in t["traceEvents"] if e.get("ph") == "X" and
           e.get("cat") in ("cuda_runtime", "cuda_driver") and
           re.search(r"Synchronize|Memcpy", str(e.get("name", "")))]
    with_st = [e for e in evs if isinstance(e.get("args"), dict) and e["args"].get("stack")]
    if not evs:
        p.add("no sync or copy call recorded")
    elif len(with_st) != len(evs):
        p.add("calls without a stack", "%d of %d" % (len(evs) - len(with_st), len(evs)))
    py = [e for e in with_st if any(f.startswith("py::") and "torch_loop.py" in f
                                    for f in e["args"]["stack"])]
    fig = {"calls": len(evs), "with_stack": len(with_st),
           "unique_stacks": t.get("tprof", {}).get("backtraces", {}).get("unique_stacks"),
           "max_depth": max((len(e["args"]["stack"]) for e in with_st), default=0),
           "python": "%d.%d" % sys.version_info[:2], "reaching_torch_loop_py": len(py)}
    if sys.version_info >= (3, 12):
        if not py:
            p.add("no stack reaches a torch_loop.py function (py::...)")
        else:
            st = py[0]["args"]["stack"]
            fig["example"] = [f for f in st if f.startswith("py::")]
            if not any(f.startswith("py::<module>") for f in st):
                p.add("a stack stops before <module>", fig["example"])
    return p, fig


def cmd_stacks(d):
    cmd_run_trace(d, "stacks", stacks)


def cmd_overhead(d, labels):
    p, fig = Problems(), {}
    base = None
    for label in labels:
        bad = step_problem(d, label)
        if bad and bad[0] == "skipped":
            return result(d, *bad)
        r = line_json(ran(d, label)[1], "RESULT ") or line_json(ran(d, label)[1])
        if bad or not r:
            p.add(bad[1] if bad else "%s printed no result" % label)
            continue
        secs = r.get("best_s", r.get("seconds"))
        base = base or secs
        fig[label] = {"seconds": round(secs, 6),
                      "per_op_us": round(r.get("per_op_us", r.get("per_launch_us", 0)), 3),
                      "ratio_vs_" + labels[0]: round(secs / base, 3)}
    tdir = os.path.join(d, "trace")
    for x in sorted(glob.glob(os.path.join(tdir, "*.trace.json.gz"))):
        t = load(x)
        fig.setdefault("tprof_traces", {})[os.path.basename(x)] = {
            "kernels": len(kernels(t)), "cupti": t.get("tprof", {}).get("cupti"),
            "dropped_events": t.get("tprof", {}).get("dropped")}
    finish(d, p, fig)


def torch_probe():
    try:
        import torch
    except Exception as e:   # noqa: BLE001 - any import failure is a reason to skip
        print("import torch failed: %s: %s" % (type(e).__name__, e))
        return 1
    info = "torch %s (CUDA %s)" % (torch.__version__, torch.version.cuda)
    if not torch.cuda.is_available():
        print("torch.cuda.is_available() is False; %s" % info)
        return 1
    print("%s, %s" % (info, torch.cuda.get_device_name()))
    return 0


def sh(argv):
    try:
        r = subprocess.run(argv, capture_output=True, text=True, timeout=60)
        return (r.stdout + r.stderr).strip() or "(no output, exit %d)" % r.returncode
    except (OSError, subprocess.SubprocessError) as e:
        return "unavailable (%s)" % e


def read(path, default=""):
    try:
        with open(path) as f:
            return f.read().strip()
    except OSError:
        return default


def report(res, names):
    rs = []
    for name in names or CHECKS:
        try:
            rs.append(load(os.path.join(res, name, "result.json")))
        except (OSError, ValueError):
            rs.append({"name": name, "status": "fail", "reason": "no result: the check did not run",
                       "figures": {}})
    n = collections.Counter(r["status"] for r in rs)
    env = {"date": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
           "host": socket.gethostname(), "nvidia_smi_L": sh(["nvidia-smi", "-L"]),
           "driver": sh(["nvidia-smi", "--query-gpu=driver_version", "--format=csv,noheader"]),
           "torch": read(os.path.join(res, "torch.txt"), "not probed"),
           "build": read(os.path.join(res, "build.txt"), "unknown")}
    with open(os.path.join(res, "results.json"), "w") as f:
        json.dump(dict(env, checks=rs, passed=n["pass"], failed=n["fail"], skipped=n["skipped"]),
                  f, indent=1)
    md = ["# tprof GPU validation, %s" % env["date"], ""]
    md += ["- host: %s" % env["host"], "- nvidia-smi -L:"]
    md += ["    " + l for l in env["nvidia_smi_L"].splitlines()]
    md += ["- driver: %s" % env["driver"], "- torch: %s" % env["torch"],
           "- build: %s" % env["build"],
           "- result: %d passed, %d failed, %d skipped" % (n["pass"], n["fail"], n["skipped"]), "",
           "| check | status | reason |", "|---|---|---|"]
    md += ["| %s | %s | %s |" % (r["name"], r["status"], r["reason"].replace("|", "\\|"))
           for r in rs]
    for r in rs:
        md += ["", "## %s: %s" % (r["name"], r["status"]), "", "```",
               json.dumps(r["figures"], indent=1), "```"]
    text = "\n".join(md) + "\n"
    with open(os.path.join(res, "summary.md"), "w") as f:
        f.write(text)
    print(text)
    if n["fail"]:
        return 1
    return 0 if n["pass"] else 3     # nothing ran on a GPU: not a success


def main(argv):
    cmd, args = argv[1], argv[2:]
    if cmd == "torch-probe":
        return torch_probe()
    if cmd == "report":
        return report(args[0], args[1:])
    if cmd == "show":
        r = load(os.path.join(args[0], "result.json"))
        print("   %s%s" % (r["status"], ": " + r["reason"][:400] if r["reason"] else ""))
        return 0
    if cmd in ("skip", "fail"):
        return result(args[0], "skipped" if cmd == "skip" else "fail", args[1])
    d = args[0]
    try:
        if cmd == "native":
            cmd_native(d, args[1])
        elif cmd == "torch":
            cmd_torch(d)
        elif cmd == "overhead":
            cmd_overhead(d, args[1:])
        elif cmd == "libs":
            cmd_libs(d)
        elif cmd == "steps":
            cmd_steps(d)
        elif cmd == "stacks":
            cmd_stacks(d)
        elif cmd == "truth":
            cmd_truth(d)
        else:
            sys.exit("unknown subcommand %s" % cmd)
    except Exception as e:   # noqa: BLE001 - the check fails, the suite goes on
        result(d, "fail", "checker error: %s: %s" % (type(e).__name__, e))
        raise
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
