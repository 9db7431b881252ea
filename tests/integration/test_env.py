"""Bad TPROF_* values and unusable directories: one clear line on stderr,
tracing off, the program exactly as without tprof. And tprof-run."""
import os
import stat

from tplib import *

ARGV = [prog("calls"), "2", "3", "all", "4"]
plain = run(ARGV, preload=False)

BAD = [
    ("TPROF_BUFFER_MB", "abc"), ("TPROF_BUFFER_MB", "-5"),
    ("TPROF_BUFFER_MB", "0"), ("TPROF_BUFFER_MB", "5000"),
    ("TPROF_TRACE", "cuda,gpus"), ("TPROF_TRACE", ""),
    ("TPROF_LOG", "loud"), ("TPROF_DISABLE", "true"),
    ("TPROF_NAME", "a/b"), ("TPROF_RANK", "-2"), ("RANK", "one"),
    ("WORLD_SIZE", "0"), ("TPROF_CUPTI_BUFFER_MB", "1"),
    ("TPROF_CUPTI_BUFFER_MB", "lots"), ("TPROF_CUPTI_BUFFER_MB", "8192"),
    ("TPROF_CUPTI_LIB", ""), ("TPROF_DELAY", "nan"),
    ("TPROF_DURATION", "inf"), ("TPROF_BACKTRACE", "nanms"),
    ("TPROF_NAME", "n" * 191),
]
for var, value in BAD:
    r = run(ARGV, env={var: value})
    label = "bad %s=%r" % (var, value)
    eq(label + ": exit code unchanged", r.rc, plain.rc)
    eq(label + ": stdout unchanged", r.stdout, plain.stdout)
    lines = r.stderr.splitlines()
    eq(label + ": exactly one stderr line", len(lines), 1)
    check(label + ": names variable and value",
          lines and lines[0].startswith("tprof: error: %s='%s'" % (var, value)),
          str(lines))
    check(label + ": says tracing is off", lines and "Tracing is off" in lines[0],
          str(lines))
    eq(label + ": no file", r.files(), [])
    cleanup(r)

# A TPROF_* variable tprof does not know (a typo): one warning naming it
# and the variable meant; tracing goes on.
r = run(ARGV, env={"TPROF_ACTVE": "3", "TPROF_TRACE": "cuda"})
w = [l for l in r.stderr.splitlines() if l.startswith("tprof: warning")]
eq("typo TPROF_ACTVE: one warning, with the variable meant", w,
   ["tprof: warning: TPROF_ACTVE is not a tprof variable and is ignored: "
    "did you mean TPROF_ACTIVE?"])
eq("typo TPROF_ACTVE: traced all the same, exit code unchanged",
   (len([f for f in r.files() if f.endswith(".trace.json.gz")]), r.rc),
   (1, plain.rc))
cleanup(r)

# Unusable output directories (root ignores permission bits, so use a
# path below a regular file, and /proc).
tmp = tempfile.mkdtemp(prefix="tprof-it-")
blocker = os.path.join(tmp, "file")
open(blocker, "w").close()
for d in (os.path.join(blocker, "sub"), "/proc/tprof-nope"):
    r = run(ARGV, env={"TPROF_OUTPUT_DIR": d})
    label = "unusable dir %s" % d
    eq(label + ": program unaffected", (r.rc, r.stdout), (plain.rc, plain.stdout))
    lines = r.stderr.splitlines()
    check(label + ": one error line naming TPROF_OUTPUT_DIR",
          len(lines) == 1 and lines[0].startswith("tprof: error: TPROF_OUTPUT_DIR="),
          str(lines))
shutil.rmtree(tmp, ignore_errors=True)

# A write that fails mid-run (as on a full disk): RLIMIT_FSIZE makes the
# trace's writes fail with EFBIG; SIGXFSZ is ignored as a shell would.
import resource
import signal as _signal


def small_files():
    resource.setrlimit(resource.RLIMIT_FSIZE, (2048, 2048))
    _signal.signal(_signal.SIGXFSZ, _signal.SIG_IGN)


if "thread" in SANITIZE:
    skip("failed write: program unaffected, one error line, no partial file",
         "under RLIMIT_FSIZE TSan's runtime takes SIGBUS in its own shadow "
         "memory (__tsan::MemoryAccessRange)")
else:
    r = run([prog("calls"), "2", "2000", "all", "4"], preexec_fn=small_files)
    eq("failed write: program unaffected", r.rc, 4)
    lines = r.other_lines()
    check("failed write: one error line naming the file and the cause",
          len(lines) == 1 and
          lines[0].startswith("tprof: error: cannot write") and
          "File too large" in lines[0], str(lines))
    eq("failed write: the partial file is removed", r.files(), [])
    cleanup(r)

r = run(ARGV, env={"TPROF_DISABLE": "1"})
eq("TPROF_DISABLE=1: inert", (r.rc, r.stdout, r.stderr, r.files()),
   (plain.rc, plain.stdout, "", []))
cleanup(r)
r = run(ARGV, env={"TPROF_LOG": "quiet"})
eq("TPROF_LOG=quiet: nothing on stderr", r.stderr, "")
eq("TPROF_LOG=quiet: trace still written", r.files(), ["tprof-rank0.trace.json.gz"])
cleanup(r)
r = run(ARGV, env={"TPROF_TRACE": "nccl"})
eq("TPROF_TRACE without cuda: runtime calls not recorded", r.files(), [])
cleanup(r)
cleanup(plain)


# tprof-run
def tprof_run(args, env=None):
    e = base_env()
    e.update(env or {})
    return subprocess.run([RUN] + args, env=e, capture_output=True, text=True,
                          timeout=60)


def tprof_run_checks():
    p = tprof_run(["--help"])
    check("tprof-run --help", p.returncode == 0 and "usage: tprof-run" in p.stdout,
          p.stdout + p.stderr)
    out = tempfile.mkdtemp(prefix="tprof-it-")
    p = tprof_run(["-o", out, "-n", "myrun", "-t", "cuda", "--buffer-mb", "8",
                   "--cupti-buffer-mb", "32", "--", prog("calls"), "1", "2"])
    eq("tprof-run: program runs", (p.returncode, p.stdout), (0, "calls done: 1 threads x 2\n"))
    eq("tprof-run: -o and -n name the files", listing(out),
       ["myrun-rank0.trace.json.gz", "summaries/myrun-rank0.summary.json",
        "summaries/myrun-rank0.summary.md"])
    if os.listdir(out):
        t = load(os.path.join(out, "myrun-rank0.trace.json.gz"))
        eq("tprof-run: flags reach the config", (t["tprof"]["config"]["trace"],
                                                 t["tprof"]["config"]["buffer_mb"],
                                                 t["tprof"]["config"]["cupti_buffer_mb"]),
           ("cuda", 8, 32))
    shutil.rmtree(out, ignore_errors=True)

    # tprof-run refuses a non-finite number before it
    # starts the program, with the library's one line.
    for flag, var in (("--delay", "TPROF_DELAY"),
                      ("--duration", "TPROF_DURATION")):
        out = tempfile.mkdtemp(prefix="tprof-it-")
        p = tprof_run(["-o", out, flag, "nan", "--", prog("calls"), "1",
                       "2"])
        eq("tprof-run %s nan: refused, program not started" % flag,
           (p.returncode, p.stdout), (2, ""))
        lines = p.stderr.splitlines()
        check("tprof-run %s nan: one error line naming %s='nan'"
              % (flag, var), len(lines) == 1 and lines[0].startswith(
                  "tprof: error: %s='nan' is not valid" % var), p.stderr)
        eq("tprof-run %s nan: no file" % flag, listing(out), [])
        shutil.rmtree(out, ignore_errors=True)

    p = tprof_run(["bash", "-c", "echo $LD_PRELOAD"], env={"LD_PRELOAD": (SAN_RT + ":" if SAN_RT else "") + "libother.so"})
    check("tprof-run: prepends to an existing LD_PRELOAD",
          p.stdout.strip().endswith("libtprof.so:libother.so"), p.stdout)
    # An ASan-built program (or make test SANITIZE=address) needs ASan's
    # runtime first in LD_PRELOAD: tprof-run keeps it there.
    p = tprof_run(["bash", "-c", "echo $LD_PRELOAD"],
                  env={"LD_PRELOAD": (SAN_RT + ":" if SAN_RT else "") +
                       "libother.so /nonexistent/libasan.so.8"})
    got = p.stdout.strip().split(":")[1 if SAN_RT else 0:]
    check("tprof-run: a sanitizer runtime stays first in LD_PRELOAD",
          len(got) == 3 and got[0] == "/nonexistent/libasan.so.8" and
          got[1].endswith("/libtprof.so") and got[2] == "libother.so", p.stdout)
    p = tprof_run(["bash", "-c", "echo $TPROF_OUTPUT_DIR $TPROF_RUN_ID"],
                  env={"TPROF_OUTPUT_DIR": out})
    check("tprof-run: children inherit the variables and a run id",
          p.stdout.startswith(out + " ") and len(p.stdout.split()) == 2, p.stdout)
    shutil.rmtree(out, ignore_errors=True)

    depth = "echo $PYTHONPERFSUPPORT $TPROF_BACKTRACE_DEPTH"
    for args, env, want in ((["--python-stacks"], {}, "1 128"),
                            (["--python-stacks", "--backtrace-depth", "16"], {}, "1 16"),
                            (["--backtrace-depth", "16", "--python-stacks"], {}, "1 16"),
                            (["--python-stacks"], {"TPROF_BACKTRACE_DEPTH": "40"}, "1 40"),
                            ([], {}, "")):
        p = tprof_run(args + ["bash", "-c", depth], env=dict(env, TPROF_BACKTRACE="1ms"))
        eq("tprof-run %s %s: PYTHONPERFSUPPORT and depth" % (" ".join(args), env),
           (p.stdout.strip(), p.stderr), (want, ""))
    p = tprof_run(["--python-stacks", "true"])
    eq("tprof-run --python-stacks without --backtrace: one warning, program runs",
       (p.returncode, p.stderr.splitlines()),
       (0, ["tprof-run: warning: --python-stacks without --backtrace or --trace ...,cpu "
            "records no stacks; add --backtrace 1ms (or another threshold)"]))
    p = tprof_run(["--python-stacks", "-t", "all,cpu", "true"])
    eq("tprof-run --python-stacks with CPU samples: no warning",
       (p.returncode, p.stderr), (0, ""))

    relative_preload()

    for args, what in (
            (["--buffer-mb", "abc", "true"], "TPROF_BUFFER_MB='abc'"),
            (["--cupti-buffer-mb", "0", "true"], "TPROF_CUPTI_BUFFER_MB='0'"),
            (["-t", "cuda,bogus", "true"], "TPROF_TRACE='cuda,bogus'"),
            (["--frobnicate", "true"], "unknown flag '--frobnicate'"),
            (["-o"], "-o needs a value"),
            ([], "no command given"),
            (["-o", "/proc/nope", "true"], "TPROF_OUTPUT_DIR='/proc/nope'")):
        p = tprof_run(args)
        eq("tprof-run %s: exit 2" % " ".join(args), p.returncode, 2)
        check("tprof-run %s: message" % " ".join(args),
              what in p.stderr and p.stderr.count("\n") == 1, p.stderr)
        eq("tprof-run %s: program not started" % " ".join(args), p.stdout, "")


def not_tprof(err):
    """stderr less the library's own lines (it writes one per trace)."""
    return [l for l in err.splitlines() if not l.startswith("tprof: ")]


def relative_preload():
    """A relative path to libtprof.so in LD_PRELOAD is looked up from each
    process's working directory: after a cd the loader prints one line
    and the process is not traced. tprof-run preloads it by its absolute
    path, from a relative TPROF_LIB too, and says so in one line when
    the user's own LD_PRELOAD names it by a relative path."""
    tmp = tempfile.mkdtemp(prefix="tprof-it-")
    out = os.path.join(tmp, "out")
    san = SAN_RT + ":" if SAN_RT else ""
    elsewhere = os.path.join(tmp, "elsewhere", "deeper")
    os.makedirs(elsewhere)
    cd_then_run = ["sh", "-c", 'cd "$0" && echo "$LD_PRELOAD" && exec "$@"',
                   elsewhere, prog("calls"), "1", "2"]
    rel = os.path.relpath(LIB, tmp)
    p = subprocess.run([RUN, "-o", out, "--"] + cd_then_run, cwd=tmp,
                       env=dict(base_env(), TPROF_LIB=rel,
                                LD_PRELOAD=san.rstrip(":")),
                       capture_output=True, text=True, timeout=60)
    seen = p.stdout.splitlines()[0].split(":") if p.stdout else [""]
    lib = seen[-1]
    check("tprof-run, relative TPROF_LIB: LD_PRELOAD holds its absolute "
          "path", lib.startswith("/") and
          os.path.realpath(lib) == os.path.realpath(LIB), p.stdout)
    eq("tprof-run, relative TPROF_LIB, a cd before the program: traced, "
       "no loader error", (p.returncode, not_tprof(p.stderr), listing(out)),
       (0, [], ["summaries/tprof-rank0.summary.json",
                "summaries/tprof-rank0.summary.md",
                "tprof-rank0.trace.json.gz"]))
    shutil.rmtree(out, ignore_errors=True)

    p = subprocess.run([RUN, "-o", out, "--"] + cd_then_run, cwd=tmp,
                       env=dict(base_env(), LD_PRELOAD=san + rel +
                                ":libz.so.1"),
                       capture_output=True, text=True, timeout=60)
    seen = p.stdout.splitlines()[0].split(":") if p.stdout else [""]
    lib = seen[-2] if len(seen) > 1 else ""
    eq("tprof-run, the user's relative libtprof.so in LD_PRELOAD: "
       "replaced by the absolute path, the rest kept",
       (seen[:-2], os.path.realpath(lib), seen[-1]),
       ([SAN_RT] if SAN_RT else [], os.path.realpath(LIB), "libz.so.1"))
    eq("tprof-run, the user's relative libtprof.so: one line says so, "
       "with the fix", "".join(l + "\n" for l in not_tprof(p.stderr)),
       "tprof-run: warning: LD_PRELOAD names libtprof.so by a relative "
       "path ('%s'), which a process that changes directory cannot load "
       "(it writes no trace); tprof-run preloads %s instead. Without "
       "tprof-run, use LD_PRELOAD=%s\n" % (rel, lib, lib))
    eq("tprof-run, the user's relative libtprof.so, a cd: traced",
       (p.returncode, listing(out)),
       (0, ["summaries/tprof-rank0.summary.json",
            "summaries/tprof-rank0.summary.md",
            "tprof-rank0.trace.json.gz"]))
    shutil.rmtree(tmp, ignore_errors=True)


if NO_SHELL:
    skip('tprof-run: every check', NO_SHELL)
else:
    tprof_run_checks()
done()
