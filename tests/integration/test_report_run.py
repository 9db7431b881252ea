"""From a run to the answer: a 4-rank job on the simulated GPU
(tests/sim/progs/train_step.cu) where rank 1 is data-loader-bound and
rank 2's kernels run twice as long, run under tprof-run --report.

The first lines of the terminal output (tprof-run's end-of-run report),
of the Markdown and of the HTML name both ranks, the cause of each and
its cost per step; the HTML opens in a real browser (headless Chromium)
with the findings in the first screen; --json holds every row of every
rank. And tprof-run stays out of the way: the program's stdout, exit
status and death by a signal are its own.
"""
import glob
import html
import json
import os
import re
import shutil
import signal
import struct
import subprocess
import tempfile
import time

from simrun import LIBDIR, sim_prog
from tplib import (CLI, NO_SHELL, RUN, base_env, check, done, eq, skip)

TMP = tempfile.mkdtemp(prefix="tprof-report-run-")
STEPS = 8
MODES = ["normal", "loader", "slowgpu", "normal"]
VIEW = (1400, 900)


def run_job(out, extra=()):
    """The four ranks one after the other (on a loaded machine, side by
    side they would slow each other), under one tprof-run."""
    prog = sim_prog("train_step")
    cmd = "; ".join("RANK=%d WORLD_SIZE=4 %s %d %s" % (r, prog, STEPS, m)
                    for r, m in enumerate(MODES))
    e = base_env()
    e["LD_LIBRARY_PATH"] = LIBDIR
    return subprocess.run([RUN, "-o", out, "--report"] + list(extra) +
                          ["sh", "-c", cmd], env=e, capture_output=True,
                          text=True, timeout=120)


def is_rank(line, rank, cause):
    m = re.match(r" ?\d+\. rank (\d+): (.*): \+([0-9.]+) ms per step", line)
    return bool(m) and m.group(1) == str(rank) and cause in m.group(2) and \
        float(m.group(3)) >= 5.0


def both_ranks(lines, what):
    """The first two findings: rank 1 host-bound in the data loader,
    rank 2's kernels slower, in either order (their costs are close)."""
    ok = len(lines) >= 2 and sorted(
        [is_rank(lines[0], 1, "waits for the host (in DataLoader.__next__)")
         or is_rank(lines[0], 2, "kernels run slower"),
         is_rank(lines[1], 1, "waits for the host (in DataLoader.__next__)")
         or is_rank(lines[1], 2, "kernels run slower")]) == [True, True] \
        and lines[0].split(":")[0] != lines[1].split(":")[0]
    check(what, ok, lines[:2])


def test_terminal(out):
    p = run_job(out)
    eq("tprof-run --report: the program's exit status and stdout",
       (p.returncode, p.stdout.splitlines()),
       (0, ["done %d %s" % (STEPS, m) for m in MODES]))
    err = [l for l in p.stderr.splitlines() if not l.startswith("tprof: ")]
    eq("terminal: the report's first line", err[:1],
       ["tprof report: 4 ranks; median step " +
        (err[0].split("median step ")[-1] if err else "?")])
    both_ranks(err[1:3], "terminal: the first findings name rank 1 "
               "(data loader) and rank 2 (slower kernels), each with its "
               "cost per step")
    eq("terminal: ends with the HTML report's path", err[-1:],
       ["Report: %s/report.html" % out])
    check("terminal: a few lines", len(err) <= 8, err)
    return out


def md_findings(md):
    return [l for l in md.split("## Findings\n", 1)[-1].splitlines()
            if re.match(r"\d+\. \*\*", l)]


def test_markdown(out):
    p = subprocess.run([CLI, "report", out], capture_output=True, text=True)
    lines = p.stdout.splitlines()
    eq("markdown: opens with the findings", lines[4:5], ["## Findings"])
    heads = [l.replace("**", "").replace("\\_", "_")
             for l in md_findings(p.stdout)]
    both_ranks(heads, "markdown: the first findings name rank 1 and rank "
               "2, each cause and cost per step")
    check("markdown: no finding about ranks 0 or 3 costs 5 ms a step",
          not [h for h in heads if re.match(r"\d+\. rank [03]:", h) and
               float(re.search(r"\+([0-9.]+) ms", h).group(1)) >= 5], heads)
    check("markdown: no collective wait, launch-bound or pageable "
          "finding here", not [h for h in heads if "collectives" in h or
                               "launch-bound" in h or "pageable" in h],
          heads)


def summaries(out):
    res = {}
    for f in glob.glob(os.path.join(out, "summaries", "*.summary.json")):
        with open(f) as fh:
            s = json.load(fh)
        res[s["rank"]] = s
    return res


def test_json(out):
    p = subprocess.run([CLI, "report", "--json", out], capture_output=True,
                       text=True)
    j = json.loads(p.stdout)
    eq("json: schema version 2, findings first",
       (j["schema"], j["schema_version"], list(j)[2]),
       ("tprof.report", 2, "findings"))
    # A rank may have several findings (on a loaded machine rank 2's host
    # can also keep its GPU waiting): each rank's cause must be among its
    # own, and come first of them.
    kinds = {}
    for f in j["findings"]:
        kinds.setdefault(tuple(f["who"]["ranks"]), []).append(f["kind"])
    eq("json: rank 1 host-bound, rank 2 slower kernels, each its first",
       ((kinds.get((1,)) or [None])[0], (kinds.get((2,)) or [None])[0]),
       ("host_bound", "slow_gpu"))
    want, got = set(), set()
    for r, s in summaries(out).items():
        for c in s["calls"]:
            if c["name"].startswith("ProfilerStep#"):
                continue
            want.add((r, c["cat"], c["name"], c["count"], c["total_ns"]))
    for n in j["names"]:
        for x in n["per_rank"]:
            got.add((x["rank"], n["cat"], n["name"], x["count"],
                     x["total_ns"]))
    eq("json: every (category, name) row of every rank, exactly",
       (len(got), sorted(want - got), sorted(got - want)),
       (len(want), [], []))
    eq("json: each rank's row of the Ranks table, with its findings",
       [(x["rank"], x["per"], bool(x["findings"])) for x in j["ranks"]],
       [(r, "step", True) for r in range(4)])


def png_size(path):
    with open(path, "rb") as f:
        head = f.read(24)
    if head[:8] != b"\x89PNG\r\n\x1a\n":
        return None
    return struct.unpack(">II", head[16:24])


def chromium():
    for c in ("chromium", "chromium-browser", "google-chrome"):
        p = shutil.which(c)
        if p:
            return p
    return None


# Measures the page as the browser lays it out, into an attribute that
# --dump-dom prints: the findings' boxes, the viewport, the charts'
# widths. Added to a copy: the report itself has no script.
PROBE = """<script>
const box = e => { const r = e.getBoundingClientRect();
  return [r.top, r.bottom, r.width]; };
document.body.setAttribute("data-probe", JSON.stringify({
  vh: innerHeight, vw: document.body.clientWidth,
  findings: [...document.querySelectorAll("li.finding")].map(box),
  svgs: [...document.querySelectorAll("svg")].map(box)}));
</script>
"""


def test_browser(out):
    page = os.path.join(out, "report.html")
    browser = chromium()
    if not browser:
        return skip("html in a browser", "no chromium (apt-get install "
                    "chromium)")
    flags = [browser, "--headless", "--no-sandbox", "--disable-gpu",
             "--hide-scrollbars", "--window-size=%d,%d" % VIEW]
    shot = os.path.join(TMP, "top.png")
    subprocess.run(flags + ["--screenshot=" + shot, "file://" + page],
                   capture_output=True, timeout=120)
    eq("html: Chromium renders a screenshot of the top", png_size(shot)
       if os.path.exists(shot) else None, VIEW)
    probe = os.path.join(TMP, "probe.html")
    with open(page) as f:
        text = f.read()
    with open(probe, "w") as f:
        f.write(text.replace("</body>", PROBE + "</body>"))
    p = subprocess.run(flags + ["--dump-dom", "file://" + probe],
                       capture_output=True, text=True, timeout=120)
    m = re.search(r'data-probe="([^"]*)"', p.stdout)
    if not check("html: the browser laid the page out", m, p.stderr[-500:]):
        return
    v = json.loads(html.unescape(m.group(1)))
    f = v["findings"]
    check("html: the first two findings are in the first screen",
          len(f) >= 2 and f[0][0] >= 0 and f[1][1] <= v["vh"], (v["vh"], f))
    check("html: every chart as wide as the page",
          v["svgs"] and min(w for _, _, w in v["svgs"]) >= 0.95 * v["vw"],
          (v["vw"], [w for _, _, w in v["svgs"]]))
    # the page's own first lines, as text: both ranks, causes, costs
    heads = [re.sub(r"\s+", " ", html.unescape(re.sub(r"<[^>]+>", "", h)))
             .strip() for h in re.findall(
                 r'<div class="headline">(.*?)</div>', text)]
    heads = [re.sub(r"^(\d+)\.", r"\1. ", h).replace("  ", " ")
             .replace(" +", ": +", 1) for h in heads]
    both_ranks(heads, "html: the first findings name rank 1 and rank 2, "
               "each cause and cost per step")


def test_exit_status():
    e = base_env()
    p = subprocess.run([RUN, "--report", "sh", "-c", "exit 3"], env=e,
                       capture_output=True, text=True, timeout=60)
    eq("tprof-run --report: the program's exit status, nothing said "
       "without traces", (p.returncode, p.stderr), (3, ""))
    p = subprocess.run([RUN, "--report", "sh", "-c", "kill -TERM $$"],
                       env=e, capture_output=True, text=True, timeout=60)
    eq("tprof-run --report: ends by the signal that ended the program",
       p.returncode, -signal.SIGTERM)
    # a signal sent to tprof-run reaches the program
    mark = os.path.join(TMP, "got-term")
    proc = subprocess.Popen(
        [RUN, "--report", "sh", "-c",
         "trap 'echo term > %s; exit 7' TERM; while :; do sleep 0.05; "
         "done" % mark], env=e, stdout=subprocess.PIPE,
        stderr=subprocess.PIPE)
    time.sleep(1)
    proc.send_signal(signal.SIGTERM)
    try:
        rc = proc.wait(timeout=20)
    except subprocess.TimeoutExpired:
        proc.kill()
        rc = None
    eq("tprof-run --report: SIGTERM to it reaches the program, whose "
       "status it returns", (rc, os.path.exists(mark)), (7, True))
    p = subprocess.run([RUN, "--report", "sh", "-c", "cat"], env=e,
                       input="typed\n", capture_output=True, text=True,
                       timeout=60)
    eq("tprof-run --report: the program reads its stdin", p.stdout,
       "typed\n")
    # without a terminal, or --no-report: exec, as before
    p = subprocess.run([RUN, "sh", "-c", "echo $$; exit 4"], env=e,
                       capture_output=True, text=True, timeout=60)
    eq("tprof-run without a terminal: no report", (p.returncode, p.stderr),
       (4, ""))


def test_inside_rank(out):
    e = base_env()
    e["LD_LIBRARY_PATH"] = LIBDIR
    e["RANK"] = "0"
    p = subprocess.run([RUN, "-o", out, sim_prog("train_step"), "2"],
                       env=e, capture_output=True, text=True, timeout=60)
    eq("tprof-run inside one rank (RANK set, no --report): no report",
       (p.returncode, [l for l in p.stderr.splitlines()
                       if not l.startswith("tprof: ")],
        os.path.exists(os.path.join(out, "report.html"))), (0, [], False))


def test_launch_bound():
    d = os.path.join(TMP, "launch")
    e = base_env()
    e["LD_LIBRARY_PATH"] = LIBDIR
    p = subprocess.run([RUN, "-o", d, "--report", "sh", "-c",
                        "RANK=0 %s 6 launch" % sim_prog("train_step")],
                       env=e, capture_output=True, text=True, timeout=60)
    err = [l for l in p.stderr.splitlines() if "launch-bound" in l]
    check("launch mode: 600 kernels of 4 us a step are launch-bound",
          p.returncode == 0 and len(err) == 1 and
          err[0].split(": ", 1)[0].endswith("rank 0"), p.stderr)


if NO_SHELL:
    skip("tprof-run: every check", NO_SHELL)
else:
    job = test_terminal(os.path.join(TMP, "job"))
    test_markdown(job)
    test_json(job)
    test_browser(job)
    test_exit_status()
    test_inside_rank(os.path.join(TMP, "rank"))
    test_launch_bound()
shutil.rmtree(TMP, ignore_errors=True)
done()
