"""Shared helpers for the integration tests.

Each check prints "PASS name" or "FAIL name: why"; tests/run.sh adds them
up. Traces are read with Python's json module (a real parser) and checked
with `tprof check` as well.
"""
import gzip
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile

# A shell without job control starts a background job ("make test &")
# with SIGINT ignored, nohup ignores SIGHUP, and an ignored signal stays
# ignored across fork and exec: every traced program would ignore the
# signal a test sends and the test wait for it until its timeout. Caught
# here (SIGHUP by a handler that does nothing, as nohup wanted for the
# test itself), each is the default again in every program started.
if signal.getsignal(signal.SIGINT) == signal.SIG_IGN:
    signal.signal(signal.SIGINT, signal.default_int_handler)
if signal.getsignal(signal.SIGHUP) == signal.SIG_IGN:
    signal.signal(signal.SIGHUP, lambda sig, frame: None)

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
# TPROF_TEST_BUILD: another build directory (make B=DIR).
BUILD = os.environ.get("TPROF_TEST_BUILD") or os.path.join(ROOT, "build")
LIB = os.path.join(BUILD, "libtprof.so")
CLI = os.path.join(BUILD, "tprof")
BIN = os.path.join(BUILD, "tests", "bin")
RUN = os.path.join(ROOT, "scripts", "tprof-run")
# TPROF_TEST_SANITIZE: the -fsanitize= list that build was made with (make
# test SANITIZE=...). Its runtime must come first in LD_PRELOAD, before
# libtprof.so, or its interceptors miss the program's malloc and threads.
SANITIZE = [s for s in os.environ.get("TPROF_TEST_SANITIZE", "").split(",")
            if s]


def sanitizer_runtime():
    for san, name in (("address", "libasan.so"), ("thread", "libtsan.so"),
                      ("undefined", "libubsan.so")):
        if san not in SANITIZE:
            continue
        cc = os.environ.get("CC") or "gcc"
        p = subprocess.run([cc, "-print-file-name=" + name],
                           capture_output=True, text=True)
        path = os.path.realpath(p.stdout.strip())
        if p.returncode != 0 or not os.path.exists(path):
            sys.exit("tplib: %s -print-file-name=%s found no runtime" %
                     (cc, name))
        return path
    return None


SAN_RT = sanitizer_runtime()
# gcc 12's TSan runtime preloaded alone (no instrumented library to start
# it early) kills bash, dash and python at start with SIGSEGV. tprof-run,
# a bash script, would need it there to keep it first in LD_PRELOAD: its
# checks are not made under make test SANITIZE=thread (the ASan run makes
# them).
NO_SHELL = ("tprof-run is a bash script, and bash crashes at start with "
            "TSan's runtime preloaded alone (gcc 12)"
            if "thread" in SANITIZE else None)
# What a test puts in LD_PRELOAD to trace a program.
PRELOAD = SAN_RT + ":" + LIB if SAN_RT else LIB


def preload_with(*libs):
    """LD_PRELOAD for libtprof.so followed by other libraries."""
    return ":".join([PRELOAD] + list(libs))


def skip(name, why):
    """A check that cannot run in this build (a sanitizer's runtime changes
    what it measures): neither PASS nor FAIL."""
    print("SKIP %s: %s" % (name, why))
    sys.stdout.flush()

failures = 0


def check(name, cond, why=""):
    global failures
    if cond:
        print("PASS " + name)
    else:
        failures += 1
        print("FAIL %s: %s" % (name, why))
    sys.stdout.flush()
    return cond


def eq(name, got, want):
    return check(name, got == want, "got %r, want %r" % (got, want))


def span_ns(e):
    """(start, end) of an event in integer ns: sums of large float ts
    values are inexact, so equal edges could otherwise differ."""
    return round(e["ts"] * 1000), round((e["ts"] + e.get("dur", 0)) * 1000)


def isal_usable():
    """Whether libtprof.so was built with ISA-L and can load it here."""
    import ctypes
    with open(LIB, "rb") as f:
        if b"crc32_gzip_refl" not in f.read():   # a dlsym name: built in
            return False
    try:
        ctypes.CDLL("libisal.so.2")
        return True
    except OSError:
        return False


def done():
    sys.exit(1 if failures else 0)


def prog(name):
    return os.path.join(BIN, name)


class Run:
    def __init__(self, p, outdir):
        self.rc = p.returncode
        self.stdout = p.stdout
        self.stderr = p.stderr
        self.dir = outdir

    def all_files(self):
        return listing(self.dir)

    def files(self):
        """The files written, less each trace's summary pair (checked by
        test_summary.py); a summary without its trace is listed."""
        names = self.all_files()
        return [f for f in names if not is_summary_of(f, names)]

    def lines(self, prefix="tprof:"):
        return [l for l in self.stderr.splitlines() if l.startswith(prefix)]

    def other_lines(self):
        """stderr without the one warning a machine without a GPU gives
        (GPU collection degrades; test_cupti.py checks that line)."""
        lines = self.stderr.splitlines()
        gpu = [l for l in lines if is_gpu_off_warning(l)]
        if len(gpu) == 1:
            lines.remove(gpu[0])
        return lines


SUMMARIES = "summaries"


def listing(d):
    """The files of an output directory, sorted; those of its summaries/
    subdirectory (where the library writes the summaries) as
    "summaries/NAME"."""
    if not os.path.isdir(d):
        return []
    out = []
    for f in os.listdir(d):
        sub = os.path.join(d, f)
        if f == SUMMARIES and os.path.isdir(sub):
            out += [SUMMARIES + "/" + g for g in os.listdir(sub)]
        else:
            out.append(f)
    return sorted(out)


def is_summary_of(name, names):
    if not name.startswith(SUMMARIES + "/"):
        return False
    name = name[len(SUMMARIES) + 1:]
    for ext in (".summary.json", ".summary.md"):
        if name.endswith(ext):
            stem = name[:-len(ext)]
            return stem + ".trace.json.gz" in names or \
                stem + ".pftrace.gz" in names
    return False


def is_gpu_off_warning(line):
    return (line.startswith("tprof: warning: ") and
            line.endswith("GPU activity is not recorded, CPU-side tracing "
                          "goes on"))


def base_env():
    env = dict(os.environ)
    for k in list(env):
        if k.startswith("TPROF_") or k in ("RANK", "WORLD_SIZE", "LD_PRELOAD",
                                          "OMPI_COMM_WORLD_RANK", "PMI_RANK",
                                          "PMIX_RANK", "SLURM_PROCID",
                                          "OMPI_COMM_WORLD_SIZE", "PMI_SIZE",
                                          "SLURM_NTASKS"):
            del env[k]
    # The table at exit is test_summary.py's; other tests check stderr
    # line by line.
    env["TPROF_SUMMARY"] = "none"
    # tprof-run looks next to itself, in build/, unless told.
    if BUILD != os.path.join(ROOT, "build"):
        env["TPROF_LIB"] = LIB
    if SANITIZE:
        san_env(env)
    return env


def san_env(env):
    """Sanitizer options for a traced program: its own leaks and those of
    the CUDA runtime are not tprof's (detect_leaks=0); tprof's handlers for
    fatal signals must run as they do unsanitized (handle_segv=0 and
    friends); CUDA maps memory in ASan's shadow gap. Reports go to
    stderr, where the tests see them as unexpected lines, and each one
    fails the program (UBSan built with -fno-sanitize-recover, TSan's
    exit code)."""
    sig = "handle_segv=0:handle_sigbus=0:handle_sigfpe=0:handle_abort=0"
    env.setdefault("ASAN_OPTIONS", "detect_leaks=0:protect_shadow_gap=0:" + sig)
    env.setdefault("UBSAN_OPTIONS", "print_stacktrace=1:" + sig)
    # tprof starts its writer again in a forked child, which TSan
    # refuses by default after a multi-threaded fork.
    env.setdefault("TSAN_OPTIONS",
                   "second_deadlock_stack=1:die_after_fork=0:suppressions=" +
                   os.path.join(ROOT, "tests", "integration", "tsan.supp") +
                   ":" + sig)
    # ASan's runtime is preloaded into a program that preloads nothing
    # else, so that tprof-run can keep it first; TSan's alone kills shells.
    if SAN_RT and "LD_PRELOAD" not in env and not NO_SHELL:
        env["LD_PRELOAD"] = SAN_RT
    return env


def run(argv, env=None, preload=True, outdir=None, timeout=120, **kw):
    """Runs argv (with libtprof.so preloaded) writing traces to a fresh
    directory, unless TPROF_OUTPUT_DIR is given in env."""
    e = base_env()
    for k, v in (env or {}).items():
        if v is None:		# unset what base_env sets
            e.pop(k, None)
        else:
            e[k] = v
    if outdir is None:
        outdir = tempfile.mkdtemp(prefix="tprof-it-")
    e.setdefault("TPROF_OUTPUT_DIR", outdir)
    if preload:
        e["LD_PRELOAD"] = PRELOAD
    elif SAN_RT and e.get("LD_PRELOAD") and \
            e["LD_PRELOAD"].split(":")[0] != SAN_RT:
        # The runtime first in whatever the test preloads.
        e["LD_PRELOAD"] = ":".join([SAN_RT] + [
            l for l in e.get("LD_PRELOAD", "").split(":") if l and l != SAN_RT])
    p = subprocess.run(argv, env=e, capture_output=True, text=True,
                       timeout=timeout, **kw)
    return Run(p, e["TPROF_OUTPUT_DIR"])


def load(path):
    opener = gzip.open if path.endswith(".gz") else open
    with opener(path, "rt", encoding="utf-8") as f:
        return json.load(f)


def raw(path):
    with gzip.open(path, "rt", encoding="utf-8") as f:
        return f.read()


def xevents(trace, name=None):
    return [e for e in trace["traceEvents"] if e.get("ph") == "X" and
            (name is None or e["name"] == name)]


def tprof_check(path, name):
    if not os.access(CLI, os.X_OK):
        return check(name, False, "%s not built" % CLI)
    p = subprocess.run([CLI, "check", path], capture_output=True, text=True)
    return check(name, p.returncode == 0, p.stdout + p.stderr)


def nesting_ok(trace):
    """Strict nesting of X events per (pid, tid), in integer ns."""
    tracks = {}
    for e in xevents(trace):
        ts = round(e["ts"] * 1000)
        tracks.setdefault((e["pid"], e["tid"]), []).append(
            (ts, -round(e["dur"] * 1000)))
    for evs in tracks.values():
        evs.sort()
        stack = []
        for ts, negdur in evs:
            end = ts - negdur
            while stack and stack[-1] <= ts:
                stack.pop()
            if stack and end > stack[-1]:
                return False
            stack.append(end)
    return True


def cleanup(*runs):
    for r in runs:
        shutil.rmtree(r.dir, ignore_errors=True)
