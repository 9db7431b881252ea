"""TPROF_BACKTRACE: call stacks of slow calls, deduplicated, symbolized
after the run (function+offset (library), or library+offset when
stripped), and Python frames through the perf trampoline."""
import glob
import os

from tplib import *


def trace_of(r):
    files = r.files()
    return load(os.path.join(r.dir, files[0])) if files else None


def frames(e):
    return [f.split("+")[0] for f in e["args"].get("stack", [])]


# Threshold 0: every hooked call records its stack, innermost first.
r = run([prog("stacks"), "5"], env={"TPROF_BACKTRACE": "0"})
t = trace_of(r)
eq("stacks: program unaffected", (r.rc, r.stdout), (0, "stacks done 1\n"))
copies = xevents(t, "cudaMemcpy")
syncs = xevents(t, "cudaStreamSynchronize")
eq("stacks: every call has a stack", all("stack" in e["args"] for e in copies + syncs), True)
eq("stacks: cudaMemcpy reached through known functions, in order",
   frames(copies[0])[:4], ["do_copy", "layer_one", "layer_two", "main"])
eq("stacks: cudaStreamSynchronize through do_sync",
   frames(syncs[0])[:2], ["do_sync", "main"])
check("stacks: frames name their library",
      copies[0]["args"]["stack"][0].endswith("(stacks)"), copies[0]["args"]["stack"][0])
eq("stacks: dedup: 10 calls from 2 sites are 2 stacks",
   t["tprof"]["backtraces"]["unique_stacks"], 2)
eq("stacks: identical stacks for the same site",
   len(set(tuple(e["args"]["stack"]) for e in copies)), 1)
top = t["tprof"]["backtraces"]["top"]
eq("stacks: top stacks listed with their calls", sorted(s["calls"] for s in top), [5, 5])
check("stacks: top stacks sorted by total time",
      top[0]["total_us"] >= top[1]["total_us"], str(top))
tprof_check(os.path.join(r.dir, r.files()[0]), "stacks: tprof check passes")
cleanup(r)

# A threshold above every call's duration records none.
r = run([prog("stacks"), "5"], env={"TPROF_BACKTRACE": "10s"})
t = trace_of(r)
eq("stacks: threshold above the calls: no stack",
   sum("stack" in e["args"] for e in xevents(t)), 0)
eq("stacks: threshold above the calls: none interned",
   t["tprof"]["backtraces"]["unique_stacks"], 0)
cleanup(r)

# all:KINDS picks calls by kind, whatever their duration.
r = run([prog("stacks"), "2"], env={"TPROF_BACKTRACE": "all:sync"})
t = trace_of(r)
eq("stacks: all:sync captures syncs only",
   ({"stack" in e["args"] for e in xevents(t, "cudaStreamSynchronize")},
    {"stack" in e["args"] for e in xevents(t, "cudaMemcpy")}), ({True}, {False}))
cleanup(r)

# Depth bound.
r = run([prog("stacks"), "1"], env={"TPROF_BACKTRACE": "0", "TPROF_BACKTRACE_DEPTH": "2"})
t = trace_of(r)
eq("stacks: TPROF_BACKTRACE_DEPTH=2 keeps two frames",
   frames(xevents(t, "cudaMemcpy")[0]), ["do_copy", "layer_one"])
cleanup(r)

# Stripped binary: library+offset.
r = run([prog("stacks_stripped"), "1"], env={"TPROF_BACKTRACE": "0"})
t = trace_of(r)
st = xevents(t, "cudaMemcpy")[0]["args"]["stack"]
check("stacks: stripped binary falls back to library+offset",
      st[0].startswith("stacks_stripped+0x") and " " not in st[0], str(st))
cleanup(r)

# C++ frames: demangled, with their parameter lists.
r = run([prog("stacks_cpp")], env={"TPROF_BACKTRACE": "0"})
t = trace_of(r)
eq("stacks: C++ program unaffected", (r.rc, r.stdout), (0, "stacks_cpp done 1\n"))
ev = xevents(t, "cudaMemcpy")
eq("stacks: C++ frames demangled", frames(ev[0])[:3] if ev else [],
   ["model::Layer<float>::forward()", "model::run(int)", "main"])
cleanup(r)

# Unset: nothing captured, no backtraces section.
r = run([prog("stacks"), "1"])
t = trace_of(r)
check("stacks: unset records no stack and no section",
      "backtraces" not in t["tprof"] and
      not any("stack" in e["args"] for e in xevents(t)))
cleanup(r)

for bad in ("5", "fast", "-1ms", "all:", "all:sync,disk", "1 ms"):
    r = run([prog("stacks"), "1"], env={"TPROF_BACKTRACE": bad})
    check("stacks: TPROF_BACKTRACE=%r refused with one line" % bad,
          len(r.lines()) == 1 and
          r.lines()[0].startswith("tprof: error: TPROF_BACKTRACE='%s'" % bad) and
          r.files() == [] and r.rc == 0, str(r.lines()))
    cleanup(r)
r = run([prog("stacks"), "1"], env={"TPROF_BACKTRACE": "0", "TPROF_BACKTRACE_DEPTH": "500"})
check("stacks: TPROF_BACKTRACE_DEPTH=500 refused",
      r.lines() and "TPROF_BACKTRACE_DEPTH='500'" in r.lines()[0], str(r.lines()))
cleanup(r)

# Frames without unwind information (the Python perf trampolines' code,
# copied here into anonymous memory): the walk goes on through them, and
# /tmp/perf-<pid>.map names them.
r = run([prog("jit_stacks")], env={"TPROF_BACKTRACE": "0"})
t = trace_of(r)
eq("stacks: JIT program unaffected", (r.rc, r.stdout), (0, "jit_stacks done 1\n"))
for api, step, kind in (("cudaMemcpy", "step_a", "3.12"),
                        ("cudaStreamSynchronize", "step_b", "3.14")):
    ev = xevents(t, api)
    st = frames(ev[0])[:5] if ev else []
    eq("stacks: through a %s-shaped trampoline to main" % kind, st,
       [step, "py::%s:/fake/train.py" % step, "run_" + step[-1], "main",
        "libc.so.6"])
pid = xevents(t)[0]["pid"] if t else 0
if os.path.exists("/tmp/perf-%d.map" % pid):
    os.unlink("/tmp/perf-%d.map" % pid)
cleanup(r)

def python_checks():
    # Python >= 3.12 with the perf trampoline (tprof-run --python-stacks).
    pys = sorted(glob.glob(os.path.expanduser("~/.pyenv/versions/3.1[2-9]*/bin/python3.1[2-9]")) +
                 glob.glob("/usr/bin/python3.1[2-9]"))
    if not pys:
        print("SKIP stacks: Python frames: no Python 3.12 or later on this machine "
              "(the perf trampoline needs it)")
    for py_bin in pys:
        ver = os.path.basename(py_bin)
        out = tempfile.mkdtemp(prefix="tprof-it-")
        p = subprocess.run([RUN, "-o", out, "--backtrace", "0", "--python-stacks", py_bin,
                            os.path.join(os.path.dirname(__file__), "pystack.py"),
                            prog("libuser.so")], env=base_env(), capture_output=True, text=True)
        eq("stacks: %s: Python program ran" % ver, (p.returncode, p.stdout), (0, "py done\n"))
        check("stacks: %s: no warning about a missing perf map" % ver,
              "--python-stacks" not in p.stderr, p.stderr)
        t = load(os.path.join(out, "tprof-rank0.trace.json.gz"))
        ev = xevents(t, "cudaMalloc")
        st = ev[0]["args"].get("stack", []) if ev else []
        check("stacks: %s: Python function named from the perf map, with the "
              "line it is defined at" % ver,
              any(f.startswith("py::alloc_step:") and f.endswith("pystack.py:5") for f in st),
              str(st))
        check("stacks: %s: native frames above the Python one" % ver,
              st and st[0].startswith("user_alloc+") and "(libuser.so)" in st[0], str(st))
        py = [f.split(":")[2] for f in st if f.startswith("py::")]
        eq("stacks: %s: every Python caller, innermost first" % ver, py,
           ["alloc_step", "train_loop", "<module>"])
        names = [f.split("+")[0] for f in st]
        check("stacks: %s: on through the interpreter to main" % ver,
              "Py_BytesMain" in names and "py::<module>" in [n[:12] for n in names] and
              [n[:12] for n in names].index("py::<module>") < names.index("Py_BytesMain"),
              str(st))
        if ev and os.path.exists("/tmp/perf-%d.map" % ev[0]["pid"]):
            os.unlink("/tmp/perf-%d.map" % ev[0]["pid"])
        shutil.rmtree(out, ignore_errors=True)
    # A Python without the trampoline (before 3.12) ignores PYTHONPERFSUPPORT:
    # one warning says so, naming the version.
    old = sys.executable if sys.version_info < (3, 12) else None
    if old:
        out = tempfile.mkdtemp(prefix="tprof-it-")
        p = subprocess.run([RUN, "-o", out, "--backtrace", "0", "--python-stacks", old,
                            os.path.join(os.path.dirname(__file__), "pystack.py"),
                            prog("libuser.so")], env=base_env(), capture_output=True, text=True)
        ver = "%d.%d.%d" % sys.version_info[:3]
        eq("stacks: Python %s: program ran" % ver, (p.returncode, p.stdout), (0, "py done\n"))
        w = [l for l in p.stderr.splitlines() if "--python-stacks" in l]
        check("stacks: Python %s: one warning that it wrote no perf map" % ver,
              len(w) == 1 and w[0].startswith("tprof: warning: ") and
              ("Python %s wrote no /tmp/perf-" % ver) in w[0] and
              "needs Python 3.12 or later" in w[0], p.stderr)
        shutil.rmtree(out, ignore_errors=True)
    else:
        print("SKIP stacks: Python < 3.12 warning: this test runs under Python "
              "3.12 or later")


if NO_SHELL:
    skip('stacks: Python frames through tprof-run --python-stacks', NO_SHELL)
else:
    python_checks()
done()
