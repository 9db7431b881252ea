"""tprof diff: what changed between two runs.

Runs whose differences are known: tests/sim/progs/diff_run.cu on the
simulated GPU in two versions, where B's gemm_fwd kernels take twice as
long (4 x 5 ms -> 4 x 10 ms per step), a new bias_gelu kernel of 10 ms
appears, and the 15 ms all-reduce that A's compute kernels hid runs
after them (its 15 ms exposed); scale is launched twice as often for the
same time. The numbers are checked against what the simulation was told
(sim_next), within its clock conversion (2 ns + 2 ppm per kernel, as
test_gpu_truth.py checks it), not against tprof's own output. Also: a run
against itself, 2 ranks against 4 with different step counts, summaries
alone (and one without its GPU analyses), torch.profiler traces
(kineto_fixture.py), the HTML page, and bad input.
"""
import copy
import json
import os
import shutil
import subprocess
import tempfile
import xml.etree.ElementTree as ET

import kineto_fixture
from simrun import LIBDIR, sim_prog
from tplib import CLI, PRELOAD, base_env, check, done, eq

TMP = tempfile.mkdtemp(prefix="tprof-diff-")
MS = 1000000
FWD, BWD, NCCL, GELU = "gemm_fwd(float*)", "gemm_bwd(float*)", \
    "ncclDevKernel_AllReduce_Sum_f32_RING_LL(float*)", "bias_gelu(float*)"
# What diff_run launches per step, (name, ns) per kernel, as told.
TOLD = {
    "a": [(FWD, 5 * MS)] * 4 + [(BWD, 5 * MS)] * 4 + [(NCCL, 15 * MS)] +
         [("scale(float*)", 2500000)],
    "b": [(FWD, 10 * MS)] * 4 + [(GELU, 10 * MS)] + [(BWD, 5 * MS)] * 4 +
         [(NCCL, 15 * MS)] + [("scale(float*)", 1250000)] * 2,
}


def per_step(mode, name):
    """Told in the GPU's clock, which runs 20 ppm fast against the host's
    (tests/sim/core.c): tprof gives host nanoseconds."""
    return sum(ns for n, ns in TOLD[mode] if n == name) / 1.00002


def tol(*names):
    """What the clock conversion may move a per-step sum of these
    kernels, in A and B together."""
    return sum(2 + ns * 2e-6 for m in "ab" for n, ns in TOLD[m]
               if n in names) + 1


def near(name, got, want, slack):
    return check(name, got is not None and abs(got - want) <= slack,
                 "got %r, want %r within %r" % (got, want, slack))


def tprof(*args):
    p = subprocess.run([CLI, "diff"] + list(args), capture_output=True,
                       text=True, timeout=60)
    return p.returncode, p.stdout, p.stderr


def diff_json(*args):
    rc, out, err = tprof("--json", *args)
    if rc:
        print("tprof diff failed: " + err)
        return None
    return json.loads(out)


def run_ranks(name, modes, steps):
    """One run of diff_run per rank (mode per rank), one after the other
    (side by side on a loaded machine they would slow each other)."""
    out = os.path.join(TMP, name)
    e = base_env()
    e.update({"LD_LIBRARY_PATH": LIBDIR, "TPROF_TRACE": "all",
              "TPROF_OUTPUT_DIR": out, "WORLD_SIZE": str(len(modes)),
              "LD_PRELOAD": PRELOAD})
    for rank, mode in enumerate(modes):
        e["RANK"] = str(rank)
        p = subprocess.run([sim_prog("diff_run"), str(steps), mode], env=e,
                           capture_output=True, text=True, timeout=120)
        check("%s: rank %d (%s) runs" % (name, rank, mode),
              p.returncode == 0, p.stderr[-800:])
    return out


def row(rows, name):
    for r in rows:
        if r["name"] == name:
            return r
    return None


def part(d, name):
    return row(d["breakdown"], name)


def trace_of(d):
    return os.path.join(d, "tprof-rank0.trace.json.gz")


def summary_of(d):
    return os.path.join(d, "summaries", "tprof-rank0.summary.json")


def top_three(label, d, a_rank="median"):
    """The three changes the simulation was told to make, first and in
    order of impact, with their deltas."""
    if not check("%s: a diff" % label, d is not None):
        return
    eq("%s: the top three rows" % label,
       [(r["name"], r["status"]) for r in d["changes"][:3]],
       [(FWD, "changed"), ("exposed communication", "changed"),
        (GELU, "new")])
    fwd, exp, gelu = d["changes"][:3]
    near("%s: gemm_fwd +20 ms per step" % label, fwd["delta"],
         per_step("b", FWD) - per_step("a", FWD), tol(FWD))
    near("%s: gemm_fwd 2x" % label, fwd["ratio"], 2.0, 1e-4)
    eq("%s: gemm_fwd 4 calls per step in both" % label,
       (fwd["a"]["calls_median"], fwd["b"]["calls_median"]), (4.0, 4.0))
    near("%s: exposed communication +15 ms per step" % label, exp["delta"],
         per_step("b", NCCL), tol(NCCL))
    near("%s: bias_gelu +10 ms per step, new" % label, gelu["delta"],
         per_step("b", GELU), tol(GELU))
    eq("%s: bias_gelu absent from A" % label,
       (gelu["a"]["present"], gelu["b"]["present"], gelu["ratio"]),
       (0, 1, None))


def test_sim():
    a = run_ranks("a", "a", 8)
    b = run_ranks("b", "b", 8)
    d = diff_json("--traces", trace_of(a), trace_of(b))
    top_three("traces", d)
    if not d:
        return a, b
    eq("traces: one rank each, read from its trace",
       [(s["ranks"], s["traces"], s["summaries"], s["steps_min"],
         s["per"]) for s in (d["a"], d["b"])],
       [(1, 1, 0, 8, "step")] * 2)
    sc = row(d["changes"], "scale(float*)")
    eq("scale: launched twice per step instead of once",
       sc and (sc["status"], sc["a"]["calls_median"],
               sc["b"]["calls_median"]), ("calls", 1.0, 2.0))
    near("scale: the same time per step", sc and sc["delta"], 0,
         tol("scale(float*)"))
    bwd = row(d["changes"], BWD)
    check("gemm_bwd: unchanged (or by its clock's rounding only)",
          bwd is None or abs(bwd["delta"]) <= tol(BWD), bwd)
    near("breakdown: compute +30 ms", part(d, "compute")["delta"],
         (20 * MS + 10 * MS) / 1.00002, tol(FWD, GELU, BWD, "scale(float*)"))
    near("breakdown: communication unchanged",
         part(d, "communication")["delta"], 0, tol(NCCL))
    near("breakdown: GPU busy +45 ms", part(d, "GPU busy")["delta"],
         45 * MS / 1.00002, tol(*[n for n, _ in TOLD["b"]]))
    near("breakdown: exposed communication 0 in A",
         part(d, "exposed communication")["a"]["median"], 0, tol(NCCL))
    # The step waits for the GPU: its change is the GPU's. The host times
    # it, though: on a loaded machine one step ends late and the next
    # early, which the median step mostly, not wholly, hides.
    near("breakdown: the step +45 ms", part(d, "step")["delta"], 45 * MS,
         9 * MS)
    mem = part(d, "memory peak")
    eq("breakdown: memory unavailable (the simulation records none)",
       (mem["status"], mem["a"], mem["unavailable"]),
       ("unavailable", None, "A: no device memory recorded"))

    rc, md, err = tprof(a, b)
    lines = [l for l in md.splitlines() if l.startswith("| ")]
    head = lines.index(next(l for l in lines if l.startswith("| # |")))
    eq("Markdown: the top three rows, their changes",
       [[c.strip() for c in l.split("|")[2:7]][0::4]
        for l in lines[head + 1:head + 4]],
       [[FWD, "+20.000 ms"], ["exposed communication", "+15.000 ms"],
        [GELU, "+10.000 ms"]])
    check("Markdown: from the directories' summaries, says so",
          rc == 0 and md.count(": 1 rank (1 summary)\n") == 2, md[:400])
    check("Markdown: says how steps were found",
          "Steps: the ProfilerStep#N spans" in md and
          "A: 8 steps per rank; B: 8 steps per rank" in md and
          "differ" not in md.split("\n\n")[3], md[:900])
    return a, b


def test_self(a):
    d = diff_json(a, a)
    eq("A against itself: no changes",
       d and (d["changes"], d["cpu_calls"], d["ranges"]), ([], [], []))
    eq("A against itself: every part's change 0 (or unavailable)",
       d and [(p["name"], p["delta"]) for p in d["breakdown"]
              if p["status"] != "unavailable"],
       [(n, 0.0) for n in ("step", "GPU busy", "compute", "communication",
                           "exposed communication", "GPU idle")])
    rc, md, err = tprof(a, a)
    check("A against itself, Markdown: No changes",
          rc == 0 and md.count("No changes") == 3, md)


def test_ranks():
    a = run_ranks("a2", "aa", 4)
    b = run_ranks("b4", "aaab", 6)
    d = diff_json(a, b)
    if not check("2 ranks against 4: a diff", d is not None):
        return
    eq("2 ranks against 4: the runs",
       [(s["ranks"], s["steps_min"], s["steps_max"]) for s in
        (d["a"], d["b"])], [(2, 4, 4), (4, 6, 6)])
    eq("2 ranks against 4: the step counts differ", d["steps_differ"],
       True)
    eq("2 ranks against 4: the top three rows (by the slowest rank)",
       [(r["name"], r["status"]) for r in d["changes"][:3]],
       [(FWD, "changed"), ("exposed communication", "changed"),
        (GELU, "new")])
    fwd = row(d["changes"], FWD)
    near("gemm_fwd: the median rank unchanged", fwd["delta"], 0, tol(FWD))
    near("gemm_fwd: the slowest rank +20 ms", fwd["delta_max"],
         per_step("b", FWD) - per_step("a", FWD), tol(FWD))
    eq("gemm_fwd: on every rank", (fwd["a"]["present"], fwd["a"]["ranks"],
                                   fwd["b"]["present"], fwd["b"]["ranks"]),
       (2, 2, 4, 4))
    gelu = row(d["changes"], GELU)
    eq("bias_gelu: new, on 1 rank of 4, the median rank's 0",
       (gelu["status"], gelu["b"]["present"], gelu["b"]["median"]),
       ("new", 1, 0.0))
    near("bias_gelu: the slowest rank +10 ms", gelu["delta_max"],
         per_step("b", GELU), tol(GELU))
    bwd = row(d["changes"], BWD)
    check("gemm_bwd: per step, 1.5x the steps is no change",
          bwd is None or (abs(bwd["delta"]) <= tol(BWD) and
                          abs(bwd["delta_max"]) <= tol(BWD)), bwd)
    rc, md, err = tprof(a, b)
    check("Markdown: median and max columns, ranks, counts differ",
          rc == 0 and "| A median | A max |" in md and
          "| ranks A, B |" in md and "1/4" in md and
          "The step counts differ: every time is per step" in md and
          "A: 4 steps per rank; B: 6 steps per rank" in md, md[:1500])


def test_summaries(a, b):
    d = diff_json(summary_of(a), summary_of(b))
    top_three("summaries", d)
    eq("summaries: read as summaries",
       d and [(s["summaries"], s["traces"]) for s in (d["a"], d["b"])],
       [(1, 0), (1, 0)])
    # A summary without its GPU analyses (as one written without them):
    # the parts they give are unavailable, said so, never made up.
    bare = os.path.join(TMP, "bare")
    os.makedirs(bare)
    with open(summary_of(a)) as f:
        s = json.load(f)
    s.pop("gpu")
    path = os.path.join(bare, "tprof-rank0.summary.json")
    with open(path, "w") as f:
        json.dump(s, f)
    d = diff_json(path, summary_of(b))
    if not check("summary without GPU analyses: a diff", d is not None):
        return
    why = ("A: its summaries have no GPU analyses (written without GPU "
           "activity, or before schema version 2): give its traces")
    eq("summary without GPU analyses: the GPU parts unavailable, why",
       [(p["name"], p["status"], p["unavailable"], p["delta"])
        for p in d["breakdown"][1:6]],
       [(n, "unavailable", why, None) for n in
        ("GPU busy", "compute", "communication", "exposed communication",
         "GPU idle")])
    exp = row(d["changes"], "exposed communication")
    eq("summary without GPU analyses: exposed communication listed as "
       "unavailable", exp and (exp["status"], exp["a"]), ("unavailable",
                                                         None))
    eq("summary without GPU analyses: the kernels still there",
       [(r["name"], r["status"]) for r in d["changes"][:2]],
       [(FWD, "changed"), (GELU, "new")])
    rc, md, err = tprof(path, summary_of(b))
    check("Markdown: says which rows are unavailable and why",
          rc == 0 and md.count(why) == 7, md)


def test_torch():
    # torch.profiler traces: 3 steps against 6, kernels twice as slow,
    # an NCCL kernel new; memory grows 1 MiB per step.
    fa = kineto_fixture.write(os.path.join(TMP, "a.pt.trace.json"),
                              kineto_fixture.make(steps=3)[0])
    tb, xb = kineto_fixture.make(steps=6, slow=2.0, nccl=True)
    fb = kineto_fixture.write(os.path.join(TMP, "b.pt.trace.json.gz"), tb)
    d = diff_json(fa, fb)
    if not check("torch.profiler: a diff", d is not None):
        return
    k = row(d["changes"], "ampere_sgemm_128x64_nn")
    eq("torch.profiler: the GEMM kernel per step, exact",
       k and (k["a"]["median"], k["b"]["median"], k["delta"], k["ratio"]),
       (60000.0, 120000.0, 60000.0, 2.0))
    n = row(d["changes"], "ncclDevKernel_AllReduce_Sum_f32_RING_LL")
    eq("torch.profiler: the NCCL kernel new, 40 us per step",
       n and (n["status"], n["delta"]), ("new", 40000.0))
    eq("torch.profiler: the step 1 ms -> 2 ms",
       [part(d, "step")[x] for x in ("delta", "ratio")], [1000000.0, 2.0])
    mem = part(d, "memory peak")
    eq("torch.profiler: memory peak 3 MiB -> 6 MiB, in bytes",
       (mem["unit"], mem["a"]["median"], mem["b"]["median"], mem["delta"]),
       ("bytes", 3 << 20, xb["memory_peak"], 3 << 20))
    launch = row(d["cpu_calls"], "cudaLaunchKernel")
    eq("torch.profiler: cudaLaunchKernel 3 -> 4 calls per step",
       launch and (launch["status"], launch["a"]["calls_median"],
                   launch["b"]["calls_median"]), ("calls", 3.0, 4.0))
    eq("torch.profiler: 3 steps against 6", (d["steps_differ"],
       d["a"]["steps_min"], d["b"]["steps_min"]), (True, 3, 6))


def test_outputs(a, b):
    html = os.path.join(TMP, "diff.html")
    rc, out, err = tprof("-o", html, a, b)
    check("-o x.html: stdout the step time and the file",
          rc == 0 and out.startswith("Step time: ") and
          out.endswith("\nDiff: %s\n" % html), (rc, out, err))
    try:
        root = ET.parse(html).getroot()
    except (OSError, ET.ParseError) as e:
        check("-o x.html: well-formed XML", False, e)
        return
    ns = {"s": "http://www.w3.org/2000/svg"}
    bars = [r.get("data-name") for r in root.iter(
        "{http://www.w3.org/2000/svg}rect")]
    eq("HTML: the chart's first three bars", bars[:3],
       [FWD, "exposed communication", GELU])
    check("HTML: the tables", len(root.findall(
        ".//{http://www.w3.org/1999/xhtml}table")) == 4, ns)
    js = os.path.join(TMP, "diff.json")
    rc, out, err = tprof("-o", js, a, b)
    rc2, full, err2 = tprof("--json", a, b)
    with open(js) as f:
        eq("-o x.json: the same as --json", f.read(), full)
    md = os.path.join(TMP, "diff.md")
    rc, out, err = tprof("-o", md, "--top", "1", a, b)
    with open(md) as f:
        text = f.read()
    check("--top 1: one row per table, says more exist",
          "| 2 |" not in text and "the top ones listed" in text, text)


def test_errors(a):
    bad = os.path.join(TMP, "bad.trace.json")
    with open(bad, "w") as f:
        f.write("{\"traceEvents\": [")
    cases = [
        ("one run", [a], 2, "tprof diff: give two runs"),
        ("three runs", [a, a, a], 2, "tprof diff: a third run"),
        ("unknown option", ["--bogus", a, a], 2,
         "tprof diff: unknown option '--bogus'"),
        ("-o without a format", ["-o", "x.txt", a, a], 2,
         "tprof diff: -o x.txt: the extension says no format"),
        ("--top 0", ["--top", "0", a, a], 2, "tprof diff: --top 0: not"),
        ("a missing run", [a, os.path.join(TMP, "nothere")], 1,
         "tprof: error: %s: cannot open" % os.path.join(TMP, "nothere")),
        ("a truncated trace", [bad, a], 1, "tprof: error: %s: " % bad),
    ]
    for name, args, code, line in cases:
        rc, out, err = tprof(*args)
        eq("bad input, %s: exit %d, one line, nothing on stdout" %
           (name, code), (rc, out, len(err.splitlines()),
                          err.startswith(line)), (code, "", 1, True))
    rc, out, err = tprof("--help")
    p = subprocess.run([CLI, "help", "diff"], capture_output=True, text=True)
    check("--help and tprof help diff: the same help",
          rc == 0 and out.startswith("usage: tprof diff") and
          p.stdout == out, out[:200])


A, B = test_sim()
test_self(A)
test_ranks()
test_summaries(A, B)
test_torch()
test_outputs(A, B)
test_errors(A)
shutil.rmtree(TMP, ignore_errors=True)
done()
