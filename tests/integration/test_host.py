"""The host side (TPROF_TRACE=cpu,osrt): CPU samples with native and
Python stacks, blocking OS calls over a threshold, what the host did
while the GPU was idle in the summary and tprof report; and that
sampling leaves the program alone (its own SIGPROF, no new EINTR), with
perf_event_open forbidden too."""
import collections
import glob
import json
import os
import shutil
import signal
import subprocess
import tempfile
import time

from tplib import *
from simrun import sim_prog, sim_run

HOST = "all,cpu,osrt"


def samples(t, tid=None):
    return [e for e in t["traceEvents"] if e.get("cat") == "cpu_sample" and
            (tid is None or e["tid"] == tid)]


def leaf_fn(e):
    return e["args"]["stack"][0].split("+")[0]


def summary_of(r):
    path = os.path.join(r.dir, "summaries", "tprof-rank0.summary.json")
    with open(path) as f:
        return json.load(f)


def report(*args):
    p = subprocess.run([CLI, "report"] + list(args), capture_output=True,
                       text=True)
    return p.returncode, p.stdout, p.stderr


def xml_ok(path):
    import xml.etree.ElementTree as ET
    try:
        ET.parse(path)
        return True
    except ET.ParseError:
        return False


def wrote_only(r):
    """tprof's lines on stderr but the one saying the trace was written."""
    return [l for l in r.lines() if not l.startswith("tprof: wrote ")]


def split_of(evs, a, b):
    w = collections.Counter()
    for e in evs:
        w[leaf_fn(e)] += e["args"]["weight_ns"]
    return w[a] / (w[a] + w[b]) if w[a] + w[b] else 0.0, w


# Two functions, 70 % and 30 % of the thread's CPU time, between kernel
# launches on the simulated GPU: the program measures the split on its
# own CPU clock; the samples must agree within 4 points, or 3.5 standard
# deviations of a binomial over the samples taken when they are fewer:
# CPU-time timers fire at the kernel's tick (250 Hz on this machine's
# kernel, whatever TPROF_SAMPLE_HZ asks); perf_event, at the rate asked,
# is checked where timer_create is forbidden, below.
def split_run(sampler, seconds):
    r = sim_run([sim_prog("host_split"), seconds],
                env={"TPROF_TRACE": HOST, "TPROF_SAMPLER": sampler})
    out = r.stdout.split()
    check("70/30, %s: program ran" % sampler, r.rc == 0 and out[:1] == ["split"],
          r.stdout + r.stderr)
    truth = float(out[1]) if len(out) > 1 else 0.0
    evs = samples(r.trace) if r.trace else []
    split, w = split_of(evs, "work70(unsigned int)", "work30(unsigned int)")
    n = sum(1 for e in evs if leaf_fn(e) in ("work70(unsigned int)", "work30(unsigned int)"))
    tol = max(0.04, 3.5 * (truth * (1 - truth) / max(n, 1)) ** 0.5)
    check("70/30, %s: the samples split as the CPU time did (%.3f, measured %.3f, "
          "%d samples, within %.3f)" % (sampler, split, truth, n, tol),
          abs(split - truth) < tol, str(w.most_common(6)))
    return r, truth, tol


r, truth, tol = split_run("auto", "1.5")
t = r.trace
evs = samples(t) if t else []
mech = t["tprof"]["sampling"]["mechanism"] if t else None
eq("70/30, auto: the trace says CPU-time timers ran", mech, "timer")
check("70/30: the time spent in the handler is counted (handler_ns)",
      t and 0 < t["tprof"]["sampling"]["handler_ns"] < 0.05e9,
      str(t["tprof"].get("sampling") if t else None))
work = [e for e in evs if leaf_fn(e) in ("work70(unsigned int)", "work30(unsigned int)")]
eq("70/30: every sample of the two functions names their stack down to main",
   (len(work) > 100, all("main" in [f.split("+")[0] for f in e["args"]["stack"]]
                         for e in work)), (True, True))
s = summary_of(r) if t else {}
h = s.get("host_activity", {})
eq("70/30: summary: host_activity version 1, the sampler", (h.get("version"), h.get("sampler")),
   (1, mech))
idle = h.get("idle") or {}
top = [f["function"] for f in idle.get("functions", [])[:2]]
eq("70/30: summary: while the GPU was idle, the two functions on top", top,
   ["work70(unsigned int) (host_split)", "work30(unsigned int) (host_split)"])
fs = {f["function"]: f["self_ns"] for f in idle.get("functions", [])}
got = fs.get("work70(unsigned int) (host_split)", 0) / max(1, fs.get("work70(unsigned int) (host_split)", 0) +
                                             fs.get("work30(unsigned int) (host_split)", 0))
check("70/30: summary: the idle split as the CPU time did (%.3f)" % got,
      abs(got - truth) < tol, str(fs))
check("70/30: summary: idle samples are the program's work, not its waits",
      idle.get("sampled_ns", 0) >= 0.9 * (fs.get("work70(unsigned int) (host_split)", 0) +
                                         fs.get("work30(unsigned int) (host_split)", 0)) > 0,
      str({k: v for k, v in idle.items() if k.endswith("ns")}))
flame = idle.get("flame") or {}
check("70/30: summary: the flame tree's root holds the idle samples",
      flame.get("name") == "all" and flame.get("ns") == idle.get("sampled_ns"), str(flame)[:300])
rc, md, err = report(r.path)
check("70/30: report: the host section, with a finding naming work70",
      rc == 0 and "## Host while the GPU was idle" in md and
      "| 0 | native | work70(unsigned int) (host_split) |" in md and
      any(l.startswith("1. **rank 0: GPU idle ") and
          "; during it the host spent " in l and
          "% in work70(unsigned int) (host\\_split)" in l and
          " per run (" in l for l in md.splitlines()),
      md[:1500] + md[-1500:] + err)
rc4, js, _ = report(r.path, "--json")
js = json.loads(js) if rc4 == 0 else {}
hf = [f for f in js.get("findings", []) if f.get("kind") == "host_while_idle"]
hj = js.get("host", [{}])[0]
eq("70/30: report --json: the finding names work70, the host rows start with it",
   ([f.get("names", [])[:1] for f in hf], hj.get("over"),
    [(x["kind"], x["what"]) for x in hj.get("top", [])[:1]]),
   ([["work70(unsigned int) (host_split)"]], "gpu_idle",
    [("native", "work70(unsigned int) (host_split)")]))
rc2, md2, _ = report(os.path.join(r.dir, "summaries"))
eq("70/30: report from the summary written at exit equals the one from the trace",
   md2[md2.find("## Host while"):], md[md.find("## Host while"):])
html = os.path.join(r.dir, "report.html")
rc3, _, err3 = report(r.path, "--html", html)
body = open(html).read() if os.path.exists(html) else ""
check("70/30: report --html: the host table and an icicle, well-formed",
      rc3 == 0 and "<h2>Host while the GPU was idle</h2>" in body and
      'class="icicle"' in body and body.count("<rect") > 3 and
      "work70(unsigned int) (host_split)" in body and xml_ok(html), err3)
tprof_check(r.path, "70/30: tprof check passes")
cleanup(r)


# Python: the samples name the pure-Python function the time is in, with
# its file and the line it is defined at (the perf trampoline, 3.12+).
def python_checks():
    pys = sorted(glob.glob(os.path.expanduser("~/.pyenv/versions/3.1[2-9]*/bin/python3.1[2-9]")) +
                 glob.glob("/usr/bin/python3.1[2-9]"))[:1]
    if not pys:
        print("SKIP host: Python samples: no Python 3.12 or later here")
    script = os.path.join(os.path.dirname(os.path.abspath(__file__)), "pyhost.py")
    for py in pys:
        out = tempfile.mkdtemp(prefix="tprof-it-")
        p = subprocess.run([RUN, "-o", out, "-t", "cuda,cpu", "--python-stacks", py, script,
                            prog("libuser.so"), "0.5"], env=base_env(),
                           capture_output=True, text=True)
        eq("python: program ran", (p.returncode, p.stdout), (0, "py host done\n"))
        t = load(os.path.join(out, "tprof-rank0.trace.json.gz"))
        evs = samples(t)
        want = "py::hot_loop:%s:9" % script
        inner = collections.Counter(next((f for f in e["args"]["stack"] if f.startswith("py::")),
                                         None) for e in evs)
        check("python: the innermost Python function of most samples is hot_loop, "
              "with its file and line", inner[want] >= 0.9 * len(evs) and len(evs) >= 20,
              str(inner.most_common(4)))
        eq("python: those samples are named after it",
           {e["name"] for e in evs if want in e["args"]["stack"]}, {"hot_loop"})
        with open(os.path.join(out, "summaries", "tprof-rank0.summary.json")) as f:
            top = json.load(f)["host_activity"]["all"]["python"][0]
        eq("python: summary: the top Python function, its file and line",
           (top["function"], top["file"], top["line"]), ("hot_loop", script, 9))
        pid = t["traceEvents"][0]["pid"]
        if os.path.exists("/tmp/perf-%d.map" % pid):
            os.unlink("/tmp/perf-%d.map" % pid)
        shutil.rmtree(out, ignore_errors=True)


if NO_SHELL:
    skip("host: Python samples through tprof-run", NO_SHELL)
else:
    python_checks()

# A thread blocked 50 ms in read on a pipe ten times among 100,000 fast
# reads: ten slices, none for the fast ones (a read the program itself
# saw last over 1 ms, a loaded machine's scheduling, may have one).
r = run([prog("host_calls"), "pipe"], env={"TPROF_TRACE": "cuda,osrt", "TPROF_BACKTRACE": "10ms"})
out = r.stdout.split()
check("pipe: program ran", r.rc == 0 and out[:2] == ["reads", "100000"], r.stdout + r.stderr)
between = int(out[5]) if len(out) > 5 else 0
t = load(os.path.join(r.dir, r.files()[0])) if r.files() else {"traceEvents": []}
reads = [e for e in xevents(t, "read") if e.get("cat") == "osrt"]
slow = [e for e in reads if e["dur"] >= 40000]
eq("pipe: exactly ten slow reads, each a slice", len(slow), 10)
check("pipe: no slice for the fast reads",
      len(reads) - len(slow) <= between and (between or len(reads) == 10),
      "%d short slices, the program saw %d reads of 1-40 ms" % (len(reads) - len(slow), between))
a = slow[0]["args"] if slow else {}
check("pipe: a slice's args: the fd, its file (the pipe), bytes asked, ret",
      a.get("bytes") == 1 and a.get("ret") == 1 and isinstance(a.get("fd"), int) and
      a.get("path", "").startswith("pipe:["), str(a))
def caller(e):
    """The first frame of a call's stack past a sanitizer's interceptor
    (under make test SANITIZE=address the program's read reaches tprof's
    hook through ASan's)."""
    st = [f for f in e["args"].get("stack", ["-"]) if not f.startswith("__interceptor_")]
    return st[0].split("+")[0] if st else "-"


eq("pipe: with TPROF_BACKTRACE, a slow read's stack starts at its caller",
   sorted({caller(e) for e in slow}), ["run_pipe"])
sleeps = [e for e in xevents(t, "nanosleep") if e["dur"] >= 40000]
eq("pipe: and the writer thread's 50 ms sleeps are slices too, from writer()",
   (len(sleeps), sorted({caller(e) for e in sleeps})),
   (10, ["writer"]))
eq("pipe: the blocking calls' threshold is TPROF_OSRT_MIN_US's default",
   t.get("tprof", {}).get("sampling", {}).get("osrt_min_ns"), 1000000)
tprof_check(os.path.join(r.dir, r.files()[0]), "pipe: tprof check passes")
cleanup(r)

# A program profiling itself with SIGPROF and ITIMER_PROF: its handler
# and its timer stay, its signals keep coming, tprof samples on another
# signal. (How many SIGPROFs a run gets depends on the machine's load,
# with or without tprof: the kernel checks ITIMER_PROF at the ticks where
# a thread of the process runs; 0 to 68 in runs under load. Only their
# coming at all is checked.)
r = run([prog("host_calls"), "sigprof"], env={"TPROF_TRACE": "cuda,cpu"})
out = r.stdout.split()
check("sigprof: the program's own handler and timer are still installed",
      r.rc == 0 and out[2:] == ["handler", "ours", "timer", "1000"], r.stdout + r.stderr)
check("sigprof: its SIGPROFs came", len(out) > 1 and int(out[1]) > 0, r.stdout)
t = load(os.path.join(r.dir, r.files()[0])) if r.files() else {"tprof": {}}
sig = t["tprof"].get("sampling", {}).get("signal")
check("sigprof: tprof sampled with a real-time signal, not SIGPROF (%s)" % sig,
      sig and sig >= 34 and sig != 27, str(sig))
# (CPU-time timers are checked at the ticks where the thread runs: a loaded
# machine gives fewer samples, each weighing more.)
check("sigprof: and took its samples", len(samples(t)) > 5 if "traceEvents" in t else False,
      str(len(samples(t)) if "traceEvents" in t else None))
cleanup(r)

# Calls the kernel never restarts after a handler (nanosleep, usleep,
# poll, epoll_wait, select, sigtimedwait), each right after CPU work so a
# sample falls due at their entry as often as can be: none may fail with
# EINTR. At 10 kHz, without the guard the osrt hooks put around them,
# 20 to 40 of 1,200 calls did.
for sampler in ("auto", "timer"):
    r = run([prog("host_calls"), "eintr"],
            env={"TPROF_TRACE": "cuda,cpu", "TPROF_SAMPLE_HZ": "10000", "TPROF_SAMPLER": sampler})
    eq("eintr: TPROF_SAMPLER=%s: no call saw EINTR" % sampler, (r.rc, r.stdout),
       (0, "eintr 0 calls 800\n"))
    t = load(os.path.join(r.dir, r.files()[0])) if r.files() else {"traceEvents": []}
    # timers fire at the kernel's tick (250 Hz here), whatever the rate
    check("eintr: TPROF_SAMPLER=%s: while sampled" % sampler, len(samples(t)) > 30,
          str(len(samples(t))))
    cleanup(r)

# Timers by default: perf_event_open forbidden (a seccomp filter, as
# Docker's default profile has) changes nothing; TPROF_SAMPLER=perf then
# says why it takes no samples. timer_create forbidden: perf_event_open
# takes over (where it is allowed, as here), and the trace says why.
def burn_run(forbid, sampler, seconds="0.3"):
    return run([prog("forbid"), forbid, prog("host_calls"), "burn", seconds],
               env={"TPROF_TRACE": "cuda,cpu", "TPROF_SAMPLER": sampler})


def sampling_of(r):
    t = load(os.path.join(r.dir, r.files()[0])) if r.files() else \
        {"tprof": {}, "traceEvents": []}
    return t, t["tprof"].get("sampling", {})


def burning(t):
    evs = samples(t)
    burn = [e for e in evs if "spin_us" in [f.split("+")[0] for f in e["args"]["stack"]]]
    return len(burn) >= 0.8 * len(evs) and len(burn) > 20


r = burn_run("perf_event_open", "auto")
t, smp = sampling_of(r)
eq("perf_event_open forbidden: program ran, no warning, timers ran",
   (r.rc, r.stdout, wrote_only(r), smp.get("mechanism"), smp.get("perf_event_refused")),
   (0, "burn done\n", [], "timer", None))
check("perf_event_open forbidden: the samples name the busy function", burning(t),
      str(len(samples(t))))
cleanup(r)
r = burn_run("perf_event_open", "perf", "0.2")
t, smp = sampling_of(r)
eq("TPROF_SAMPLER=perf, forbidden: one warning, no samples, program unaffected",
   (r.rc, r.stdout, len(wrote_only(r)), len(samples(t)), smp.get("mechanism")),
   (0, "burn done\n", 1, 0, "none"))
check("TPROF_SAMPLER=perf, forbidden: the warning and the trace say why",
      wrote_only(r) and wrote_only(r)[0].startswith(
          "tprof: warning: TPROF_SAMPLER=perf: perf_event_open: Operation not permitted "
          "(a seccomp filter") and "TPROF_SAMPLER=auto" in wrote_only(r)[0] and
      smp.get("perf_event_refused", "").startswith("perf_event_open: Operation not permitted"),
      str(r.lines()) + str(smp))
cleanup(r)
r = burn_run("timer_create", "auto")
t, smp = sampling_of(r)
if smp.get("mechanism") == "none" and "perf_event_paranoid" in (smp.get("perf_event_refused") or ""):
    skip("timer_create forbidden: perf_event_open fallback",
         "perf_event_open is refused here too: " + smp["perf_event_refused"])
else:
    eq("timer_create forbidden: program ran, no warning, perf_event_open took over",
       (r.rc, r.stdout, wrote_only(r), smp.get("mechanism")),
       (0, "burn done\n", [], "perf_event"))
    check("timer_create forbidden: the trace says why timers were not used",
          (smp.get("timer_refused") or "").startswith("timer_create: Operation not permitted "
                                                      "(a seccomp filter"), str(smp))
    check("timer_create forbidden: the samples name the busy function", burning(t),
          str(len(samples(t))))
cleanup(r)

# SIGTERM while a thread runs a new library's constructor (holding the
# loader's lock) that keeps calling a hooked function: the writer, which
# drives the sampler, must complete the trace without the loader (before
# the fix it loaded libunwind when sampling started, and a first lookup
# of a C library function could be the writer's: the trace was lost).
def loader_lock():
    outdir = tempfile.mkdtemp(prefix="tprof-it-")
    e = base_env()
    e.update(TPROF_OUTPUT_DIR=outdir, LD_PRELOAD=PRELOAD, TPROF_TRACE=HOST)
    p = subprocess.Popen([prog("robust"), "dlterm", prog("parkctor.so")], env=e,
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    ready = p.stdout.readline().strip() == "ready"
    time.sleep(0.5)
    p.send_signal(signal.SIGTERM)
    try:
        out, err = p.communicate(timeout=60)
    except subprocess.TimeoutExpired:
        p.kill()
        out, err = p.communicate()
    eq("SIGTERM, a thread in dlopen, host side on: trace completed, no error line",
       (ready, p.returncode, os.path.exists(os.path.join(outdir, "tprof-rank0.trace.json.gz")),
        [l for l in err.splitlines() if l.startswith("tprof: error")]),
       (True, -signal.SIGTERM, True, []))
    shutil.rmtree(outdir, ignore_errors=True)


loader_lock()

# The Perfetto trace carries the samples too: tprof report reads them.
r = run([prog("host_calls"), "burn", "0.3"],
        env={"TPROF_TRACE": "cuda,cpu", "TPROF_FORMAT": "perfetto"})
pf = [f for f in r.files() if f.endswith(".pftrace.gz")]
rc, md, err = report(os.path.join(r.dir, pf[0])) if pf else (1, "", "no trace")
check("perfetto: report from the .pftrace.gz names the busy function",
      rc == 0 and "| 0 | native | spin_us (host_calls) |" in md, md[-800:] + err)
cleanup(r)
done()
