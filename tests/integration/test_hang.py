"""TPROF_HANG against NCCL as it behaves: N rank processes (progs/
nccl_ranks.c, a data-parallel loop of two allreduced buckets per step and
a stream sync) against the stand-in NCCL in barrier mode on the simulated
GPU (tests/nccl/fake_nccl.c, tests/sim/): a collective only enqueues, its
kernel waits on the GPU until every rank of the communicator enqueued the
same one (call, count, type, op, root), and the host blocks in the sync
after it. One rank skips a collective, or makes it with another size or
op, or is stuck in host code before it, or leaves the loop a step early;
the waiting ranks' dumps appear within TPROF_HANG + 1 s, every other rank
that used a communicator dumps too when asked, and `tprof report` names
the rank, the collective's number and the difference, in one line with
the stack of its thread; the same after the job is stopped by SIGTERM,
with one entry per rank. ncclCommInitRank itself blocks (a rank that
never joins). One case runs at 64 ranks; NCCL_RANKS_STRESS=64 (make
test-stress) runs them all at 64 ranks."""
import glob
import json
import os
import re
import signal
import subprocess
import time

from tplib import *

FAKE_DIR = os.path.join(BUILD, "tests", "fakenccl")
SIM_LIB = os.path.join(BUILD, "tests", "sim", "lib")
STEPS = 3
A, B = 5, 6             # the last step's collectives
BIG = int(os.environ.get("NCCL_RANKS_STRESS", "0") or 0)


def hang_s(n):
    """TPROF_HANG: 64 processes starting on 2 cores take more than a
    second to all join the communicator."""
    return 1 if n <= 8 else 3


def start(n, scenario, extra=None, steps=STEPS):
    outdir = tempfile.mkdtemp(prefix="tprof-it-")
    bar = os.path.join(outdir, "barrier")
    os.mkdir(bar)
    procs = []
    for r in range(n):
        e = base_env()
        e.update({"LD_PRELOAD": PRELOAD,
                  "LD_LIBRARY_PATH": SIM_LIB + ":" + FAKE_DIR,
                  "FAKE_NCCL_BARRIER": bar, "TPROF_OUTPUT_DIR": outdir,
                  "TPROF_HANG": str(hang_s(n)), "TPROF_RANK": str(r),
                  "WORLD_SIZE": str(n), "TPROF_RUN_ID": "hangtest",
                  "TPROF_DUMP_SIGNAL": "USR2"})
        e.update(extra or {})
        procs.append(subprocess.Popen(
            [prog("nccl_ranks"), str(r), str(n), scenario, str(steps)],
            env=e, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
            text=True))
    return outdir, procs


def dumps(outdir):
    d = {}
    for f in glob.glob(os.path.join(outdir, "hangs", "*.hang.json")):
        try:
            with open(f) as fh:
                j = json.load(fh)
        except ValueError:
            continue
        d[j["rank"]] = j
    return d


def wait_for(outdir, want, limit):
    """Until the dumps' reasons are want ({rank: reason}); seconds taken."""
    t0 = time.monotonic()
    while time.monotonic() - t0 < limit:
        d = dumps(outdir)
        if {r: d[r]["reason"] for r in d} == want:
            return time.monotonic() - t0
        time.sleep(0.05)
    return None


def stop(procs):
    out = []
    for p in procs:
        if p.poll() is None:
            p.send_signal(signal.SIGTERM)
    for p in procs:
        o, e = p.communicate(timeout=60)
        out.append((p.returncode, o, e))
    return out


def report(path):
    p = subprocess.run([CLI, "report", path], capture_output=True,
                       text=True, timeout=120)
    return p.returncode, p.stdout, p.stderr


def comm0(d):
    """Rank 0's world communicator: address and id, as the report names
    it."""
    c = [c for c in d[0]["communicators"] if c["size"] == len(d) or
         c.get("comm_id")][0]
    return c["comm"], c["comm_id"]


def others(n, odd):
    rs = [r for r in range(n) if r not in odd]
    out, i = [], 0
    while i < len(rs):
        j = i
        while j + 1 < len(rs) and rs[j + 1] == rs[j] + 1:
            j += 1
        out.append("%d–%d" % (rs[i], rs[j]) if j > i else "%d" % rs[i])
        i = j + 1
    return ("ranks " if len(rs) > 1 else "rank ") + ", ".join(out)


def sig(count, op="ncclSum", n=A):
    return "ncclAllReduce #%d (%d × ncclFloat32, %s)" % (n, count, op)


def case(n, scenario, reasons, lines, sync="cudaStreamSynchronize",
         limit=30):
    """Runs a scenario: the dumps (reason per rank), the report's lines
    (a regex each) while it hangs and after SIGTERM, one entry per
    rank. Returns the dumps seen while it hung."""
    tag = "%s %d" % (scenario, n)
    outdir, procs = start(n, scenario)
    took = wait_for(outdir, reasons, limit)
    if not check("%s: every rank's dump (%s)" % (tag, sorted(set(
            reasons.values()))), took is not None,
            {r: j["reason"] for r, j in dumps(outdir).items()}):
        stop(procs)
        return None
    d = dumps(outdir)
    rc, out, err = report(outdir)
    eq("%s: report exit status" % tag, rc, 0)
    cid = comm0(d)
    for name, pat in lines:
        pat = pat.format(c="comm %s \\(id %s\\)" % (re.escape(cid[0]),
                                                   re.escape(cid[1])),
                         sync=sync)
        check("%s: report: %s" % (tag, name), re.search(pat, out, re.M),
              "%s\nnot in:\n%s" % (pat, out[:3000]))
    res = stop(procs)
    rc, out2, err = report(outdir)
    fin = dumps(outdir)
    check("%s: after SIGTERM, each rank's last dump" % tag,
          sorted(fin) == sorted(reasons) and all(
              fin[r]["reason"] == ("SIGTERM" if reasons[r] in
                                   ("hang", "peer") else reasons[r])
              for r in fin),
          {r: j["reason"] for r, j in fin.items()})
    for name, pat in lines[:1]:
        pat = pat.format(c="comm [0-9a-fx]+ \\(id %s\\)" % re.escape(cid[1]),
                         sync=sync)
        check("%s: after SIGTERM, report: %s" % (tag, name),
              re.search(pat, out2, re.M), out2[:3000])
    m = re.search(r"^(\d+) ranks? \(", out2, re.M)
    eq("%s: after SIGTERM, one entry per rank" % tag,
       int(m.group(1)) if m else None, n)
    shutil.rmtree(outdir, ignore_errors=True)
    return d


def waiting(n, odd, sync="cudaStreamSynchronize", at=A):
    return (r"^  - %s enqueued #%d and wait in %s for up to \d+\.\d s$" %
            (re.escape(others(n, odd)), at, sync))


# TSan's runtime takes the signals and calls the handlers itself, later
# and from its own frames: a thread in host code may have no stack then.
TSAN_STACK = "thread" in SANITIZE


def host_line(rank, at=A, since="cudaStreamSynchronize"):
    stack = r"; stack: data_loader_stuck\+0x[0-9a-f]+ \(nccl_ranks\) ← "
    if TSAN_STACK:
        stack = r"(%s| \(no stack: .*\)$)" % stack
    return (r"^- \*\*rank %d never enqueued ncclAllReduce #%d\*\* on {c} "
            r"\(it enqueued up to #%d\): it is in host code \(no CUDA or "
            r"NCCL call\) for \d+\.\d s, since %s returned" %
            (rank, at, at - 1, since)) + stack


def differs(rank, n, mine, theirs, shift=""):
    return (r"^- \*\*rank %d's %s on {c} differs\*\* from %s's %s%s; it is "
            r"in {sync} for \d+\.\d s; stack: wait_step\+0x[0-9a-f]+ "
            r"\(nccl_ranks\) ← main\+" %
            (rank, re.escape(mine), re.escape(others(n, [rank])),
             re.escape(theirs), re.escape(shift)))


def all_hang(n, odd_reason=None, odd=None):
    return {r: (odd_reason if r == odd else "hang") for r in range(n)}


def suite(n, only=None):
    skip = " (it skipped one: its #%d is the others' #%d)" % (A, B)
    if only == "host":
        case(n, "host", all_hang(n, "peer", 2), [
            ("rank 2 never enqueued #5: in host code", host_line(2)),
            ("the others wait", waiting(n, [2]))])
        return
    # Every rank makes every call: nothing hangs, each rank's last state
    # is written at its exit, the report says nothing of a hang.
    outdir, procs = start(n, "ok")
    res = [p.communicate(timeout=120) + (p.returncode,) for p in procs]
    eq("ok %d: every rank exits 0 with its output" % n,
       [(r[2], r[0]) for r in res],
       [(0, "rank %d done\n" % r) for r in range(n)])
    check("ok %d: no hang line" % n,
          not any("hang" in r[1] for r in res), [r[1] for r in res][:2])
    eq("ok %d: each rank's last state, at its exit" % n,
       sorted((r, j["reason"], j["alive"]) for r, j in
              dumps(outdir).items()), [(r, "exit", False) for r in range(n)])
    rc, out, err = report(outdir)
    check("ok %d: no Hang section" % n, rc == 0 and "## Hang" not in out,
          out[:500])
    shutil.rmtree(outdir, ignore_errors=True)

    # A branch taken on one rank: rank 2 skips bucket A of the last step,
    # so its #5 is bucket B; every rank blocks in the stream sync.
    d = case(n, "skip", all_hang(n), [
        ("rank 2's #5 differs, it skipped one",
         differs(2, n, sig(1536), sig(1024), skip)),
        ("every rank waits in the sync", waiting(n, [])),
        ("rank 2's row", r"^\| 2 \| 2 \| %d \| %d \| %d \| "
         r"cudaStreamSynchronize for \d+\.\d s \|$" % (A, A, A - 1))])
    if d and n == 4:
        skip_dumps(d, n)
    case(n, "size", all_hang(n), [
        ("rank 3's #5 differs in size",
         differs(3, n, sig(2048), sig(1024))),
        ("every rank waits in the sync", waiting(n, []))])
    case(n, "op", all_hang(n), [
        ("rank 1's #5 differs in op",
         differs(1, n, sig(1024, "ncclMax"), sig(1024)))])
    # Rank 2 is stuck in its data loader: it never sees a hang, and dumps
    # when the others ask, with its stack taken then.
    case(n, "host", all_hang(n, "peer", 2), [
        ("rank 2 never enqueued #5: in host code", host_line(2)),
        ("the others wait", waiting(n, [2])),
        ("rank 2's row", r"^\| 2 \| 2 \| %d \| %d \| %d \| host code for "
         r"\d+\.\d s \|$" % (A - 1, A - 1, A - 1))])
    # One batch fewer: rank 2 leaves the loop and exits.
    case(n, "exit", all_hang(n, "exit", 2), [
        ("rank 2 never enqueued #5: it exited",
         r"^- \*\*rank 2 never enqueued ncclAllReduce #5\*\* on {c} \(it "
         r"enqueued up to #4\): its process ended \(exit\) after "
         r"enqueuing #4$"),
        ("the others wait", waiting(n, [2]))])
    if n > 4:
        return
    # A rank that died: by a crash (its last state written on the way
    # out), by a SIGKILL (nothing written).
    case(n, "abort", all_hang(n, "SIGABRT", 2), [
        ("rank 2 never enqueued #5: it died",
         r"^- \*\*rank 2 never enqueued ncclAllReduce #5\*\* on {c} \(it "
         r"enqueued up to #4\): its process ended \(SIGABRT\) after "
         r"enqueuing #4$")])
    kill = {r: "hang" for r in range(n) if r != 2}
    case(n, "kill", kill, [
        ("rank 2 never enqueued #5: no dump",
         r"^- \*\*rank 2 never enqueued ncclAllReduce #5\*\* on {c}: no "
         r"dump from it \(.*killed: a SIGKILL leaves none\)$"),
        ("the others wait", waiting(n, [2]))])
    case(n, "event", all_hang(n), [
        ("rank 2's #5 differs, waiting on an event",
         differs(2, n, sig(1536), sig(1024), skip))],
         sync="cudaEventSynchronize")
    case(n, "device", all_hang(n, "peer", 2), [
        ("rank 2 never enqueued #5, the others in a device sync",
         host_line(2, since="cudaDeviceSynchronize")),
        ("the others wait", waiting(n, [2], "cudaDeviceSynchronize"))])
    case(n, "group", all_hang(n, "peer", 2), [
        ("grouped: rank 2 never enqueued #5", host_line(2)),
        ("the others wait", waiting(n, [2]))])


def skip_dumps(d, n):
    """The dumps themselves: what each rank's waiting thread and
    communicator say."""
    ids = set()
    for r in sorted(d):
        j = d[r]
        tag = "skip dump rank %d" % r
        eq("%s: schema, version, reason" % tag,
           (j["schema"], j["version"], j["reason"], j["alive"]),
           ("tprof.hang", 2, "hang", True))
        eq("%s: one thread, stuck in the stream sync" % tag,
           [(t["call"], t["stuck"], t["args"]["kind"], t["args"]["on"])
            for t in j["threads"]],
           [("cudaStreamSynchronize", 1, "sync", "stream")])
        st = j["threads"][0].get("stack", [])
        check("%s: the stack taken at entry" % tag,
              len(st) >= 2 and st[0].startswith("wait_step+") and
              st[1].startswith("main+"), st)
        c = j["communicators"][0]
        ids.add(c["comm_id"])
        ent = A if r == 2 else B
        eq("%s: entered, enqueued, done" % tag,
           (c["rank"], c["size"], c["entered"], c["enqueued"], c["done"]),
           (r, n, ent, ent, A - 1))
        want = [(A - 1, 1536, "done")] + (
            [(A, 1536, "enqueued")] if r == 2 else
            [(A, 1024, "enqueued"), (B, 1536, "enqueued")])
        eq("%s: its outstanding collectives and the last done" % tag,
           [(x["seq"], x["count"], x["state"]) for x in c["collectives"]],
           want)
        x = c["collectives"][-1]
        eq("%s: a collective's args" % tag,
           (x["call"], x["dtype"], x["op"], "root" in x, x["stream"] ==
            j["threads"][0]["args"]["stream"]),
           ("ncclAllReduce", "ncclFloat32", "ncclSum", False, True))
    eq("skip dumps: one communicator id on every rank", len(ids), 1)


if TSAN_STACK:
    skip("host code stacks", "TSan delivers the dump signal itself, from "
         "its own frames: a stack may be missing")
suite(4)

# The collective itself blocks: a blocking communicator's init waits
# until every rank joined, and rank 3 never does.
outdir, procs = start(4, "noinit")
took = wait_for(outdir, {0: "hang", 1: "hang", 2: "hang"}, 15)
check("noinit: ranks 0-2 dump", took is not None,
      {r: j["reason"] for r, j in dumps(outdir).items()})
d = dumps(outdir)
if 0 in d:
    a = d[0]["threads"][0]["args"]
    eq("noinit: the stuck init and its args",
       (d[0]["threads"][0]["call"], a["kind"], a["nranks"], a["rank"]),
       ("ncclCommInitRank", "init", 4, 0))
    rc, out, err = report(outdir)
    want = ("- **rank 3 never joined ncclCommInitRank of communicator id "
            "%s**; ranks 0–2 are waiting in it for " % a["comm_id"])
    check("noinit: report names the rank that never joined", want in out,
          out[:2000])
stop(procs)

# Communicators split from the world one, {0, 2} and {1, 3} (job
# ranks); job rank 3, rank 1 of its communicator, is stuck in host code:
# job rank 1 hangs, 0 and 2 finish.
outdir, procs = start(4, "split")
took = wait_for(outdir, {0: "exit", 1: "hang", 2: "exit", 3: "peer"}, 15)
check("split: dumps", took is not None,
      {r: j["reason"] for r, j in dumps(outdir).items()})
d = dumps(outdir)
if 1 in d:
    sc = [c for c in d[1]["communicators"] if c["size"] == 2][0]
    world = [c for c in d[1]["communicators"] if c["size"] == 4][0]
    check("split: the split communicator has its own id",
          sc["comm_id"] != world["comm_id"], d[1]["communicators"])
    rc, out, err = report(outdir)
    check("split: report names the communicator's rank 1",
          re.search(r"^- \*\*rank 1 never enqueued ncclAllReduce #5\*\* on "
                    r"comm %s \(id %s\) \(it enqueued up to #4\): it is in "
                    r"host code" % (re.escape(sc["comm"]),
                                    re.escape(sc["comm_id"])), out, re.M),
          out[:3000])
    check("split: its table gives the job rank",
          "| 0 | 1 | 6 | 6 | 4 | cudaStreamSynchronize for" in out and
          "| 1 | 3 | 4 | 4 | 4 | host code for" in out, out[:3000])
    check("split: the world communicator has nothing to say",
          "(id %s), 4 ranks" % world["comm_id"] not in out, out[:3000])
    eq("split: ranks 0 and 2 ended", (d[0]["alive"], d[2]["alive"]),
       (False, False))
stop(procs)

# With the flight recorder a hang dumps the window too; stopped by
# SIGTERM each rank dumps again: still one entry per rank.
outdir, procs = start(4, "host", {"TPROF_FLIGHT": "5"})
took = wait_for(outdir, all_hang(4, "peer", 2), 15)
check("host+flight: every rank dumps", took is not None)
d = dumps(outdir)
for r in sorted(d):
    tr = d[r]["trace"]
    check("host+flight rank %d: the dump names its window" % r,
          tr == os.path.join(outdir, "tprof-rank%d.trace.json.gz" % r), tr)
    if not tr or not os.path.exists(tr):
        continue
    tprof_check(tr, "host+flight rank %d: tprof check passes" % r)
    t = load(tr)
    un = [e for e in t["traceEvents"] if e.get("cat") == "unfinished"]
    eq("host+flight rank %d: what is unfinished" % r,
       [(e["name"], e["args"]["stuck"]) for e in un],
       [] if r == 2 else [("cudaStreamSynchronize", 1)])
    eq("host+flight rank %d: the window's trigger" % r,
       t["tprof"]["flight"]["trigger"], "peer" if r == 2 else "hang")
res = stop(procs)
eq("host+flight: every rank ends by SIGTERM as without tprof",
   [r[0] for r in res], [-signal.SIGTERM] * 4)
for r in (0, 1, 3):
    lines = [l for l in res[r][2].splitlines() if "hang:" in l]
    check("host+flight rank %d: one stderr line names the dump" % r,
          len(lines) == 1 and re.match(
              r"tprof: hang: cudaStreamSynchronize on thread \d+ has not "
              r"returned for 1\.\d s; wrote .*/hangs/tprof-rank%d-pid%d"
              r"\.hang\.json and .*tprof-rank%d\.trace\.json\.gz$" %
              (r, procs[r].pid, r), lines[0]), lines)
rc, out, err = report(outdir)
m = re.search(r"^(\d+) ranks \((\d+) from summaries, (\d+) from traces\)",
              out, re.M)
eq("host+flight: after SIGTERM, 4 ranks (the two dumps of a process "
   "are one)", m.groups() if m else None, ("4", "4", "0"))
check("host+flight: no rank listed twice", "#2 |" not in out, out[:2000])
rc, out, err = report(outdir + "/")
p = subprocess.run([CLI, "report", "--traces", outdir], capture_output=True,
                   text=True, timeout=120)
m = re.search(r"^(\d+) ranks", p.stdout, re.M)
eq("host+flight --traces: 4 ranks", m.group(1) if m else None, "4")
check("host+flight --traces: each rank from its last dump",
      all("tprof-dump2-rank%d.trace.json.gz" % r in p.stdout
          for r in range(4)), p.stdout[:2000])
shutil.rmtree(outdir, ignore_errors=True)

# At 64 ranks, one case here; every case with NCCL_RANKS_STRESS=64 (make
# test-stress: about 20 s more on 2 cores).
if BIG:
    suite(BIG)
else:
    suite(64, "host")

done()
