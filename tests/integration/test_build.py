"""The Makefile's decisions, on a scratch copy of the tree built with a
stand-in compiler (each object a small file naming its flags), so that a
whole build takes a second or two:

- ISA-L is looked for when the gzip object is built, not when make
  starts: `make demo` runs deps first, and what deps installed counts in
  the same run; a later change of the answer rebuilds the gzip object
  (and relinks), nothing else; TP_ISAL=0 overrides.
- make is parallel by default (-j as many as nproc) unless -j is given.

And scripts/demo.sh (what make demo runs after the build), on the
simulated GPU (tests/sim/): it ends with tprof report's output and the
paths of the HTML report and of the trace.
"""
import stat

from tplib import *

# The stand-in for cc: -E (the ISA-L probe) succeeds when $FAKE_ISAL
# exists; any other call writes its -o file with its arguments and logs
# the file and MAKEFLAGS to $FAKE_LOG.
FAKE_CC = r"""#!/bin/sh
out= prev= pre=
for a in "$@"; do
	[ "$prev" = -o ] && out=$a
	[ "$a" = -E ] && pre=1
	prev=$a
done
if [ -n "$pre" ]; then
	cat >/dev/null
	[ -e "$FAKE_ISAL" ] && exit 0
	echo "<stdin>:1:10: fatal error: isa-l/igzip_lib.h: No such file or directory" >&2
	exit 1
fi
echo "$*" >"$out"
echo "$out|$MAKEFLAGS" >>"$FAKE_LOG"
"""

# make deps as it behaves as root: installs ISA-L (slowly, so that a
# build running beside it would look before it is done).
FAKE_DEPS = """#!/bin/sh
sleep 0.5
touch "$FAKE_ISAL"
echo "deps: installed"
"""
FAKE_DEMO = """#!/bin/sh
echo "demo: ran"
"""


def scratch_tree(top):
    """top/src: the tree (its folders linked, not copied) with
    scripts/deps.sh and scripts/demo.sh replaced; top/cc the compiler."""
    src = os.path.join(top, "src")
    os.makedirs(os.path.join(src, "scripts"))
    for name in os.listdir(ROOT):
        if name in (".git", "scripts") or name.startswith("build"):
            continue
        os.symlink(os.path.join(ROOT, name), os.path.join(src, name))
    for name in os.listdir(os.path.join(ROOT, "scripts")):
        os.symlink(os.path.join(ROOT, "scripts", name),
                   os.path.join(src, "scripts", name))
    for name, text in (("deps.sh", FAKE_DEPS), ("demo.sh", FAKE_DEMO),
                       ("../../cc", FAKE_CC)):
        path = os.path.normpath(os.path.join(src, "scripts", name))
        if os.path.lexists(path):
            os.unlink(path)
        with open(path, "w") as f:
            f.write(text)
        os.chmod(path, stat.S_IRWXU)
    return src


class Make:
    def __init__(self, top):
        self.top = top
        self.src = scratch_tree(top)
        self.log = os.path.join(top, "log")
        self.isal = os.path.join(top, "isal-installed")

    def __call__(self, *args):
        """make ARGS in the scratch tree: (exit status, stdout lines, the
        files the compiler made, the MAKEFLAGS it saw)."""
        env = dict(os.environ, FAKE_LOG=self.log, FAKE_ISAL=self.isal)
        # Not the make running this test: its jobs, its level.
        for k in ("MAKEFLAGS", "MFLAGS", "MAKELEVEL", "MAKEOVERRIDES"):
            env.pop(k, None)
        open(self.log, "w").close()
        p = subprocess.run(["make", "--no-print-directory",
                            "CC=" + os.path.join(self.top, "cc")] +
                           list(args), cwd=self.src, env=env,
                           capture_output=True, text=True, timeout=120)
        with open(self.log) as f:
            made = [l.rstrip("\n").split("|", 1) for l in f]
        out = [l for l in p.stdout.splitlines() if l.startswith(
            ("tprof:", "deps:", "demo:"))]
        return (p.returncode, out, sorted({m[0] for m in made}),
                {m[1] for m in made}, p.stderr)

    def flags(self, obj):
        with open(os.path.join(self.src, obj)) as f:
            return f.read().split()


ZLIB = ("tprof: no ISA-L headers: the trace writer compresses with zlib, "
        "about 3x slower (make deps installs libisal-dev; make then "
        "rebuilds with it)")
ISAL = "tprof: the trace writer compresses with ISA-L"
GZ = "build/gzip/gzip_isal.o"
LINKED = ["build/libtprof.so", "build/tprof"]


def isal_after_deps():
    top = tempfile.mkdtemp(prefix="tprof-build-")
    make = Make(top)
    rc, out, made, mflags, err = make("all")
    eq("make, no ISA-L: builds, one line says zlib", (rc, out), (0, [ZLIB]))
    check("make: every object and both binaries built",
          GZ in made and set(LINKED) <= set(made) and len(made) > 100,
          "%d files: %s" % (len(made), err[-500:]))
    check("make, no ISA-L: gzip object without TP_HAVE_ISAL",
          "-DTP_HAVE_ISAL" not in make.flags(GZ), make.flags(GZ))
    nproc = subprocess.run(["nproc"], capture_output=True,
                           text=True).stdout.strip()
    check("make: parallel by default (-j%s, nproc)" % nproc,
          all(("-j%s" % nproc) in m.split() for m in mflags), mflags)
    eq("make again: nothing built, nothing said", make("all")[:3],
       (0, [], []))

    open(make.isal, "w").close()     # installed since (make deps)
    rc, out, made, _, _ = make("all")
    eq("make after ISA-L came: the gzip object rebuilt and relinked, "
       "nothing else", (rc, out, made), (0, [ISAL], [GZ] + LINKED))
    check("make after ISA-L came: gzip object with TP_HAVE_ISAL",
          "-DTP_HAVE_ISAL" in make.flags(GZ), make.flags(GZ))
    eq("make again: nothing built", make("all")[:3], (0, [], []))

    rc, out, made, mflags, _ = make("-j1", "TP_ISAL=0", "all")
    eq("make TP_ISAL=0: zlib although ISA-L is there", (rc, out, made),
       (0, [ZLIB], [GZ] + LINKED))
    check("make TP_ISAL=0: gzip object without TP_HAVE_ISAL",
          "-DTP_HAVE_ISAL" not in make.flags(GZ), make.flags(GZ))
    eq("make -j1: the -j given is kept",
       sorted({a for m in mflags for a in m.split() if a.startswith("-j")}),
       ["-j1"])
    shutil.rmtree(top, ignore_errors=True)


def demo_after_deps():
    """make demo on a machine without ISA-L, where deps installs it: the
    build that follows uses it, and the demo runs last."""
    top = tempfile.mkdtemp(prefix="tprof-build-")
    make = Make(top)
    rc, out, made, _, err = make("demo")
    eq("make demo: deps, then the build with ISA-L, then the demo",
       (rc, out), (0, ["deps: installed", ISAL, "demo: ran"]))
    check("make demo: gzip object with TP_HAVE_ISAL",
          os.path.exists(os.path.join(make.src, GZ)) and
          "-DTP_HAVE_ISAL" in make.flags(GZ), err[-500:])
    eq("make after make demo: nothing to build", make("all")[:3],
       (0, [], []))
    shutil.rmtree(top, ignore_errors=True)


def demo_script():
    if SANITIZE:
        skip("demo.sh: ends with the report and the paths",
             "the demo runs the plain build's programs, not sanitized")
        return
    out = tempfile.mkdtemp(prefix="tprof-demo-")
    env = dict(base_env(), B=BUILD, TPROF_DEMO_DIR=out,
               LD_LIBRARY_PATH=os.path.join(BUILD, "tests", "sim", "lib"))
    env.pop("TPROF_SUMMARY", None)
    p = subprocess.run([os.path.join(ROOT, "scripts", "demo.sh")], env=env,
                       capture_output=True, text=True, timeout=300)
    lines = p.stdout.splitlines()
    html = os.path.join(out, "report.html")
    trace = os.path.join(out, "demo-rank0.trace.json.gz")
    cmd = "$ %s/tprof report --html %s %s" % (BUILD, html, out)
    eq("demo.sh: exit 0", p.returncode, 0)
    # the report goes to the HTML file; stdout gets its findings in a
    # few lines, then the file's path
    after = lines[lines.index(cmd) + 1:] if cmd in lines else []
    check("demo.sh: runs tprof report on its output, and prints its "
          "findings and the page's path",
          after[:1] == ["tprof report: 1 rank"] and
          "Report: " + html in after and "# tprof report" not in
          p.stdout, p.stdout[-3000:] + p.stderr[-2000:])
    eq("demo.sh: ends with the HTML report's path and the trace's",
       lines[-2:], ["The report: %s (open it in a browser)" % html,
                    "The trace:  %s (https://ui.perfetto.dev, 'Open "
                    "trace file')" % trace])
    check("demo.sh: the HTML report is there",
          os.path.getsize(html) > 1000 if os.path.exists(html) else False,
          os.listdir(out))
    shutil.rmtree(out, ignore_errors=True)


isal_after_deps()
demo_after_deps()
demo_script()
done()
