"""The conventions every tprof command keeps (docs/reference/cli.md):
--help and -h print the help on stdout with exit 0, `tprof help CMD`
prints the same; a usage error is one line on stderr naming the help,
with exit 2 and nothing on stdout; --version; `check DIR`; and a command
that had nothing to do says so."""
import re

from tplib import *

COMMANDS = ["report", "diff", "check", "merge", "convert", "recover", "dump",
            "env-check", "version", "help"]
HEADER = os.path.join(ROOT, "include", "tprof.h")
CORPUS = os.path.join(ROOT, "tests", "fuzz", "corpus", "check")
DOC = os.path.join(ROOT, "docs", "reference", "cli.md")


def tprof(*args, env=None, stdout=subprocess.PIPE, cwd=None):
    e = base_env()
    e.update(env or {})
    p = subprocess.run([CLI] + list(args), env=e, stdout=stdout,
                       stderr=subprocess.PIPE, text=True, timeout=60,
                       cwd=cwd)
    return p.returncode, p.stdout, p.stderr


def version():
    with open(HEADER) as f:
        m = re.search(r'#define TPROF_VERSION "([^"]+)"', f.read())
    return m.group(1)


def see(cmd):
    return "; see 'tprof %s --help'\n" % cmd if cmd else \
        "; see 'tprof --help'\n"


def main_help():
    rc, out, err = tprof("--help")
    eq("tprof --help: exit 0, nothing on stderr", (rc, err), (0, ""))
    check("tprof --help: the usage first", out.startswith(
        "usage: tprof COMMAND [ARGS...]\n"), out[:80])
    for cmd in COMMANDS:
        check("tprof --help lists %s" % cmd,
              re.search(r"^  %s\b" % re.escape(cmd), out, re.M), out)
    for args in (["-h"], ["help"]):
        eq("tprof %s: the same help as --help" % " ".join(args),
           tprof(*args), (0, out, ""))
    # Bare tprof: the commands listed, but not as a success.
    eq("tprof alone: the help on stderr, exit 2, stdout empty", tprof(),
       (2, "", out))
    return out


def command_helps():
    for cmd in COMMANDS:
        rc, out, err = tprof(cmd, "--help")
        eq("%s --help: exit 0, nothing on stderr" % cmd, (rc, err), (0, ""))
        first = "usage: tprof COMMAND" if cmd == "help" else \
            "usage: tprof " + cmd
        check("%s --help: on stdout, the usage first" % cmd,
              out.startswith(first), out[:80])
        check("%s --help: ends with the exit statuses" % cmd,
              cmd == "help" or re.search(r"\nExit status: [^\n]*(\n[^\n]+)*"
                                         r"\n$", out), out[-200:])
        eq("%s -h: the same as --help" % cmd, tprof(cmd, "-h"), (0, out, ""))
        eq("help %s: the same as %s --help" % (cmd, cmd), tprof("help", cmd),
           (0, out, ""))
        # --help wins wherever it is, before a "--".
        eq("%s x --help: the help" % cmd, tprof(cmd, "x", "--help"),
           (0, out, ""))


def usage_errors(tmp):
    """Each: one line on stderr, exit 2, nothing on stdout, no file."""
    cases = [
        ([], None, None),     # bare tprof: checked in main_help
        (["bogus"], None, "unknown command 'bogus'"),
        (["--bogus"], None, "unknown option '--bogus'"),
        (["help", "bogus"], "help", "unknown command 'bogus'"),
        (["help", "check", "merge"], "help",
         "one command at a time, not 'check merge'"),
        (["version", "x"], "version", "unexpected argument 'x'"),
        (["check"], "check",
         "no file given: give traces or the directory they are in"),
        (["check", "--bogus", "x"], "check", "unknown option '--bogus'"),
        (["convert"], "convert", "no input: give IN, a trace"),
        (["convert", "a.json"], "convert", "no output: give -o OUT"),
        (["convert", "a.json", "-o"], "convert", "-o needs a file name"),
        (["convert", "a.json", "-o", "b.json", "-o", "c.json"], "convert",
         "-o is given twice"),
        (["convert", "a.json", "b.json", "-o", "c.json"], "convert",
         "one input at a time: 'b.json' is a second (tprof merge takes "
         "many)"),
        (["convert", "a.json", "-o", os.path.join(tmp, "x.txt")], "convert",
         "OUT must end in .pftrace, .pftrace.gz, .json or .json.gz"),
        (["convert", "--frob", "a.json", "-o", "b.json"], "convert",
         "unknown option '--frob'"),
        (["convert", "a.json", "-o", os.path.join(tmp, "b.json"),
          "--gzip-level", "0"], "convert",
         "--gzip-level '0' is not valid: expected 1 to 9"),
        (["merge", tmp], "merge", "no output: give -o OUT"),
        (["merge", "-o", os.path.join(tmp, "m.json")], "merge",
         "no input: give directories or files"),
        (["merge", tmp, "--frob", "-o", os.path.join(tmp, "m.json")],
         "merge", "unknown option '--frob'"),
        (["merge", tmp, "-o", os.path.join(tmp, "m.json"), "--gzip-level=10"],
         "merge", "--gzip-level '10' is not valid: expected 1 to 9"),
        (["recover"], "recover",
         "no directory given: give the DIR the traces were written to"),
        (["recover", "--frob", tmp], "recover", "unknown option '--frob'"),
        (["dump"], "dump",
         "no process given: give the PID of a process started under "
         "tprof-run"),
        (["dump", "abc"], "dump", "'abc' is not a process id"),
        (["dump", "1", "-5"], "dump", "unknown option '-5'"),
        (["env-check", "x"], "env-check",
         "unexpected argument 'x': it reads the environment only"),
        (["report"], "report", "no input: give the directory the traces "
         "were written to, or files"),
        (["report", "--bogus", tmp], "report", "unknown option '--bogus'"),
        (["report", tmp, "--html"], "report", "missing argument to '--html'"),
        (["diff", tmp], "diff", "give two runs, A and B (each a trace, a "
         "summary or a directory)"),
        (["diff", tmp, tmp, "--top"], "diff", "missing argument to '--top'"),
    ]
    for args, cmd, msg in cases[1:]:
        want = "tprof%s: %s%s" % (" " + cmd if cmd else "", msg, see(cmd))
        eq("usage error %r: one line, exit 2, stdout empty" % args,
           tprof(*args), (2, "", want))
    eq("usage errors: no file made", sorted(os.listdir(tmp)), [])


def versions():
    want = "tprof %s\n" % version()
    eq("tprof --version: the version of include/tprof.h",
       tprof("--version"), (0, want, ""))
    eq("tprof version: the same", tprof("version"), (0, want, ""))


def help_to_full_disk():
    if not os.path.exists("/dev/full"):
        skip("--help to a full disk: exit 1, one line", "no /dev/full")
        return
    with open("/dev/full", "w") as full:
        rc, _, err = tprof("check", "--help", stdout=full)
    eq("--help to a full disk: exit 1, one line", (rc, err),
       (1, "tprof: cannot write to stdout: No space left on device\n"))


def check_dir(tmp):
    d = os.path.join(tmp, "traces")
    os.makedirs(os.path.join(d, "summaries"))
    shutil.copy(os.path.join(CORPUS, "tprof-trace.json.gz"),
                os.path.join(d, "a-rank0.trace.json.gz"))
    shutil.copy(os.path.join(CORPUS, "tprof-trace.json"),
                os.path.join(d, "b-rank1.trace.json"))
    # A renamed trace, told by its content; a summary and a note are not.
    shutil.copy(os.path.join(CORPUS, "tprof-trace.json"),
                os.path.join(d, "c.json"))
    with open(os.path.join(d, "a-rank0.summary.json"), "w") as f:
        f.write('{"schema_version": 2}\n')
    with open(os.path.join(d, "notes.txt"), "w") as f:
        f.write("not a trace\n")
    shutil.copy(os.path.join(CORPUS, "tprof-trace.json"),
                os.path.join(d, "summaries", "deeper.trace.json"))
    files = [os.path.join(d, n) for n in ("a-rank0.trace.json.gz",
                                           "b-rank1.trace.json", "c.json")]
    rc, want, err = tprof("check", *files)
    eq("check FILES: the three traces ok", (rc, len(want.splitlines()), err),
       (0, 3, ""))
    eq("check DIR: each trace in it, by name, as check FILE does",
       tprof("check", d), (0, want, ""))
    eq("check DIR/: the same paths", tprof("check", d + "/"), (0, want, ""))
    rc, out, err = tprof("check", "--foreign", d)
    eq("check --foreign DIR: each trace", (rc, len(out.splitlines()), err),
       (0, 3, ""))
    empty = os.path.join(tmp, "empty")
    os.mkdir(empty)
    eq("check on a directory without traces: says so, exit 1",
       tprof("check", empty),
       (1, "%s: error: no traces (*.trace.json[.gz], *.pftrace[.gz], or "
        "other *.json[.gz] holding one) in this directory\n" % empty, ""))
    bad = os.path.join(d, "d-rank2.trace.json")
    with open(bad, "w") as f:
        f.write('{"traceEvents": [')
    rc, out, err = tprof("check", d)
    check("check DIR with a broken trace: exit 1, the others still checked",
          rc == 1 and out.startswith(want[:want.index(d + "/c.json")]) and
          (bad + ": error: ") in out, out)
    shutil.rmtree(empty)


def said_when_nothing_done(tmp):
    d = os.path.join(tmp, "nothing")
    os.mkdir(d)
    eq("recover on a directory with nothing to recover: one line, exit 0",
       tprof("recover", d),
       (0, "", "tprof: %s: nothing to recover (no .tmp trace or rings file "
        "a killed process left)\n" % d))
    missing = os.path.join(tmp, "missing")
    eq("recover on a missing directory: one line, exit 1",
       tprof("recover", missing),
       (1, "", "tprof: error: %s: No such file or directory (give the "
        "directory the traces were written to)\n" % missing))
    out = os.path.join(tmp, "out")
    eq("env-check on a valid environment: says where traces go",
       tprof("env-check", env={"TPROF_OUTPUT_DIR": out,
                               "TPROF_NAME": "job"}),
       (0, "tprof: the TPROF_* environment is valid; traces go to "
        "%s/job-rank<R>.trace.json.gz\n" % out, ""))
    eq("env-check, Perfetto: the .pftrace.gz name",
       tprof("env-check", env={"TPROF_OUTPUT_DIR": out,
                               "TPROF_FORMAT": "perfetto"})[1],
       "tprof: the TPROF_* environment is valid; traces go to "
       "%s/tprof-rank<R>.pftrace.gz\n" % out)
    eq("env-check, TPROF_DISABLE=1: says tracing is off",
       tprof("env-check", env={"TPROF_DISABLE": "1"}),
       (0, "tprof: TPROF_DISABLE=1: tracing is off\n", ""))
    shutil.rmtree(d)
    shutil.rmtree(out, ignore_errors=True)


def reference_doc(main):
    """docs/reference/cli.md has a section for every command, and names
    every option its help lists."""
    try:
        with open(DOC) as f:
            doc = f.read()
    except OSError as e:
        check("docs/reference/cli.md: readable", False, str(e))
        return
    sections = dict(re.findall(r"^## `tprof ([a-z-]+)`\n(.*?)(?=^## |\Z)",
                               doc, re.M | re.S))
    for cmd in COMMANDS:
        check("cli.md: a section for tprof %s" % cmd, cmd in sections,
              sorted(sections))
        _, out, _ = tprof(cmd, "--help")
        opts = set(re.findall(r"^ +(--?[a-z][a-z-]*)", out, re.M))
        missing = sorted(o for o in opts
                         if "`%s" % o not in sections.get(cmd, ""))
        eq("cli.md: every option of tprof %s" % cmd, missing, [])


tmp = tempfile.mkdtemp(prefix="tprof-cli-")
usage_dir = os.path.join(tmp, "usage")
os.mkdir(usage_dir)
main = main_help()
command_helps()
usage_errors(usage_dir)
versions()
help_to_full_disk()
check_dir(tmp)
said_when_nothing_done(tmp)
reference_doc(main)
shutil.rmtree(tmp, ignore_errors=True)
done()
