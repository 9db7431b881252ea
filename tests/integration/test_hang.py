"""TPROF_HANG: 4 rank processes against the stand-in NCCL in barrier mode
(tests/nccl/fake_nccl.c: a collective returns only once every rank of the
communicator entered it with the same call, count and type; an init once
every rank joined). One rank skips a collective, or calls it with another
size, or never joins: the others' dumps must appear within TPROF_HANG + 1
s, name the stuck call, its args and stack, and `tprof report` over the
dumps must name the missing rank and the collective exactly."""
import glob
import json
import os
import re
import signal
import subprocess
import time

from tplib import *

FAKE_DIR = os.path.join(BUILD, "tests", "fakenccl")
N = 4
SEQ = 5


def start(scenario, extra=None):
    outdir = tempfile.mkdtemp(prefix="tprof-it-")
    bar = os.path.join(outdir, "barrier")
    os.mkdir(bar)
    procs = []
    for r in range(N):
        e = base_env()
        e.update({"LD_PRELOAD": PRELOAD, "LD_LIBRARY_PATH": FAKE_DIR,
                  "FAKE_NCCL_BARRIER": bar, "TPROF_OUTPUT_DIR": outdir,
                  "TPROF_HANG": "1", "TPROF_RANK": str(r),
                  "WORLD_SIZE": str(N), "TPROF_RUN_ID": "hangtest",
                  "TPROF_DUMP_SIGNAL": "USR2"})
        e.update(extra or {})
        procs.append(subprocess.Popen(
            [prog("nccl_ranks"), str(r), str(N), scenario, str(SEQ)],
            env=e, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
            text=True))
    return outdir, procs


def hang_files(outdir):
    return sorted(glob.glob(os.path.join(outdir, "hangs", "*.hang.json")))


def wait_dumps(outdir, n, limit):
    t0 = time.monotonic()
    while time.monotonic() - t0 < limit:
        if len(hang_files(outdir)) >= n:
            return time.monotonic() - t0
        time.sleep(0.02)
    return None


def stop(procs):
    out = []
    for p in procs:
        if p.poll() is None:
            p.send_signal(signal.SIGTERM)
    for p in procs:
        o, e = p.communicate(timeout=30)
        out.append((p.returncode, o, e))
    return out


def dumps_by_rank(outdir):
    d = {}
    for f in hang_files(outdir):
        with open(f) as fh:
            j = json.load(fh)
        d[j["rank"]] = j
    return d


def report(outdir):
    p = subprocess.run([CLI, "report", outdir], capture_output=True,
                       text=True, timeout=60)
    return p.returncode, p.stdout, p.stderr


# Every rank makes every call: nothing hangs, nothing is dumped, the exit
# status and output are those of the run without tprof.
outdir, procs = start("ok")
res = stop_after = [p.communicate(timeout=60) + (p.returncode,) for p in procs]
eq("hang ok: every rank exits 0", [r[2] for r in res], [0] * N)
eq("hang ok: every rank's output", [r[0] for r in res],
   ["rank %d done\n" % r for r in range(N)])
eq("hang ok: no hang dump", hang_files(outdir), [])
check("hang ok: no hang line", not any("hang:" in r[1] for r in res),
      [r[1] for r in res])

# Rank 2 never makes the 5th allreduce: ranks 0, 1, 3 hang in it.
outdir, procs = start("skip")
line = procs[2].stdout.readline()
t_skip = time.monotonic()
eq("hang skip: rank 2 skips", line, "rank 2 skips allreduce %d\n" % SEQ)
took = wait_dumps(outdir, 3, 10)
check("hang skip: the 3 waiting ranks dump within TPROF_HANG + 1 s",
      took is not None and time.monotonic() - t_skip <= 2.0 + 0.3,
      "took %r" % took)
time.sleep(0.3)
d = dumps_by_rank(outdir)
eq("hang skip: dumps from ranks 0, 1, 3 only", sorted(d), [0, 1, 3])
eq("hang skip: the processes keep running",
   [p.poll() for p in procs], [None] * N)
for r in sorted(d):
    j = d[r]
    eq("hang skip rank %d: schema" % r, (j["schema"], j["version"],
       j["reason"]), ("tprof.hang", 1, "hang"))
    eq("hang skip rank %d: one thread in a hooked call" % r,
       len(j["threads"]), 1)
    t = j["threads"][0]
    a = t["args"]
    eq("hang skip rank %d: the stuck call" % r, (t["call"], t["stuck"]),
       ("ncclAllReduce", 1))
    check("hang skip rank %d: stuck for 1 s to 2 s when dumped" % r,
          1e9 <= t["for_ns"] < 2e9, t["for_ns"])
    eq("hang skip rank %d: its args" % r,
       (a["kind"], a["seq"], a["count"], a["dtype"], a["op"],
        a["comm_rank"], a["comm_size"]),
       ("collective", SEQ, 1024, "ncclFloat32", "ncclSum", r, N))
    st = t.get("stack", [])
    check("hang skip rank %d: the stack taken at entry" % r,
          len(st) >= 2 and st[0].startswith("train_step_allreduce+") and
          st[1].startswith("main+"), st)
    eq("hang skip rank %d: one communicator" % r, len(j["communicators"]), 1)
    c = j["communicators"][0]
    eq("hang skip rank %d: its sequence numbers" % r,
       (c["rank"], c["size"], c["entered"], c["completed"], c["comm"],
        c["comm_id"]), (r, N, SEQ, SEQ - 1, a["comm"], a["comm_id"]))
ids = {d[r]["communicators"][0]["comm_id"] for r in d}
eq("hang skip: the communicator has one id on every rank", len(ids), 1)
cid = ids.pop()
rc, out, err = report(outdir)
eq("hang skip: report exit status", rc, 0)
comm0 = d[0]["communicators"][0]["comm"]
want = ("- **rank 2 never called ncclAllReduce #%d on comm %s (id %s)**; "
        "ranks 0–1, 3 are waiting in it for " % (SEQ, comm0, cid))
check("hang skip: report names the missing rank and the collective",
      want in out, out[:2000])
check("hang skip: report says rank 2 left no dump",
      "  - no dump from rank 2 (" in out, out[:2000])
check("hang skip: report's table",
      "| 2 | | | | no dump |" in out and
      "| 0 | 0 | %d | %d | ncclAllReduce #%d (1024 × ncclFloat32) for " %
      (SEQ, SEQ - 1, SEQ) in out, out[:2000])
# Rank 2 is asked for a dump (tprof dump): it is in no hooked call.
p = subprocess.run([CLI, "dump", str(procs[2].pid)], capture_output=True,
                   text=True, timeout=30)
eq("hang skip: tprof dump exit status", p.returncode, 0)
check("hang skip: rank 2's dump appears", wait_dumps(outdir, 4, 5) is not None)
time.sleep(0.2)
d = dumps_by_rank(outdir)
eq("hang skip: rank 2's dump", (d[2]["reason"], d[2]["threads"],
   d[2]["communicators"][0]["entered"], d[2]["communicators"][0]["completed"]),
   ("signal", [], SEQ - 1, SEQ - 1))
rc, out, err = report(outdir)
check("hang skip: report with rank 2's dump",
      want in out and "  - rank 2 entered #%d and completed #%d on it; it is "
      "in no hooked call" % (SEQ - 1, SEQ - 1) in out, out[:2000])
res = stop(procs)
eq("hang skip: every rank ends by SIGTERM as without tprof",
   [r[0] for r in res], [-signal.SIGTERM] * N)
for r in (0, 1, 3):
    lines = [l for l in res[r][2].splitlines() if "hang:" in l]
    check("hang skip rank %d: one stderr line names the dump" % r,
          len(lines) == 1 and re.match(
              r"tprof: hang: ncclAllReduce on thread \d+ has not returned "
              r"for 1\.\d s; wrote .*/hangs/tprof-rank%d-pid%d\.hang\.json$"
              % (r, procs[r].pid), lines[0]), lines)

# Stopped while hanging, the trace shows the call never returned.
for r in (0, 2):
    path = os.path.join(outdir, "tprof-rank%d.trace.json.gz" % r)
    if not check("hang skip rank %d: the trace completes at SIGTERM" % r,
                 os.path.exists(path), os.listdir(outdir)):
        continue
    tprof_check(path, "hang skip rank %d: tprof check passes" % r)
    t = load(path)
    un = [e for e in t["traceEvents"] if e.get("cat") == "unfinished"]
    ar = [e for e in xevents(t, "ncclAllReduce") if e["cat"] == "nccl"]
    if r == 2:
        eq("hang skip rank 2: no unfinished call", un, [])
        eq("hang skip rank 2: its 4 allreduces", len(ar), SEQ - 1)
        continue
    eq("hang skip rank 0: one unfinished call",
       [(e["name"], e["args"]["unfinished"], e["args"]["stuck"],
         e["args"]["seq"]) for e in un], [("ncclAllReduce", 1, 1, SEQ)])
    eq("hang skip rank 0: the 4 that returned", len(ar), SEQ - 1)
    check("hang skip rank 0: it began after the 4th ended and lasted > 1 s",
          un and ar and un[0]["ts"] >= ar[-1]["ts"] + ar[-1]["dur"] and
          un[0]["dur"] > 1e6, (un, ar[-1:]))
    check("hang skip rank 0: with its stack",
          un and un[0]["args"].get("stack", [""])[0].startswith(
              "train_step_allreduce+"), un)
    eq("hang skip rank 0: the trace's hang settings", t["tprof"]["hang"],
       {"seconds": 1, "dump_signal": "USR2"})

# With the flight recorder, a hang dumps the window too.
outdir, procs = start("skip", {"TPROF_FLIGHT": "5"})
took = wait_dumps(outdir, 3, 10)
check("hang+flight: the 3 waiting ranks dump", took is not None, took)
time.sleep(0.3)
d = dumps_by_rank(outdir)
for r in sorted(d):
    tr = d[r]["trace"]
    check("hang+flight rank %d: the dump names its trace" % r,
          tr == os.path.join(outdir, "tprof-rank%d.trace.json.gz" % r), tr)
    if not tr or not os.path.exists(tr):
        continue
    tprof_check(tr, "hang+flight rank %d: tprof check passes" % r)
    t = load(tr)
    un = [e for e in t["traceEvents"] if e.get("cat") == "unfinished"]
    eq("hang+flight rank %d: the stuck call in the trace" % r,
       [(e["name"], e["args"]["seq"]) for e in un], [("ncclAllReduce", SEQ)])
    eq("hang+flight rank %d: the window's calls" % r,
       (len([e for e in xevents(t, "ncclAllReduce") if e["cat"] == "nccl"]),
        len(xevents(t, "ncclCommInitRank")),
        t["tprof"]["flight"]["trigger"]), (SEQ - 1, 1, "hang"))
res = stop(procs)
eq("hang+flight: exit statuses", [r[0] for r in res], [-signal.SIGTERM] * N)

# The same inside groups: ranks 0, 1, 3 wait in ncclGroupEnd, which
# launches their 5th allreduce.
outdir, procs = start("group")
took = wait_dumps(outdir, 3, 10)
check("hang group: the 3 waiting ranks dump", took is not None, took)
time.sleep(0.3)
d = dumps_by_rank(outdir)
eq("hang group: dumps", sorted(d), [0, 1, 3])
if 0 in d:
    t = d[0]["threads"][0]
    a = t["args"]
    eq("hang group: the stuck call is ncclGroupEnd, awaiting the allreduce",
       (t["call"], a["kind"], a["awaits"], a["seq"], a["count"], a["dtype"],
        a["collectives"]),
       ("ncclGroupEnd", "group", "ncclAllReduce", SEQ, 1024, "ncclFloat32",
        1))
    check("hang group: its stack", t.get("stack", [""])[0].startswith(
        "main+"), t.get("stack"))
    c = d[0]["communicators"][0]
    eq("hang group: entered, not completed", (c["entered"], c["completed"]),
       (SEQ, SEQ - 1))
    rc, out, err = report(outdir)
    want = ("- **rank 2 never called ncclAllReduce #%d on comm %s (id %s)**; "
            "ranks 0–1, 3 are waiting in it for " %
            (SEQ, c["comm"], c["comm_id"]))
    check("hang group: report names rank 2 and the collective", want in out,
          out[:2000])
    check("hang group: report's table says where they wait",
          "| 0 | 0 | %d | %d | ncclAllReduce #%d (1024 × ncclFloat32) in "
          "ncclGroupEnd for " % (SEQ, SEQ - 1, SEQ) in out, out[:2000])
stop(procs)

# Communicators split from the world one: {0, 2} and {1, 3} (job ranks);
# job rank 3 (rank 1 of its communicator) skips: job rank 1 hangs, ranks
# 0 and 2 finish.
outdir, procs = start("split")
took = wait_dumps(outdir, 1, 10)
check("hang split: job rank 1 dumps", took is not None, took)
res = [procs[r].communicate(timeout=30) + (procs[r].returncode,)
       for r in (0, 2)]
eq("hang split: ranks 0 and 2 finish", [(r[0], r[2]) for r in res],
   [("rank 0 done\n", 0), ("rank 2 done\n", 0)])
time.sleep(0.3)
d = dumps_by_rank(outdir)
eq("hang split: only job rank 1 dumps", sorted(d), [1])
if 1 in d:
    a = d[1]["threads"][0]["args"]
    eq("hang split: the split communicator, rank 0 of 2",
       (a["comm_rank"], a["comm_size"], a["seq"]), (0, 2, SEQ))
    world = [c for c in d[1]["communicators"] if c["size"] == N]
    check("hang split: the split one has its own id",
          world and "comm_id" in a and a["comm_id"] != world[0]["comm_id"],
          d[1]["communicators"])
    rc, out, err = report(outdir)
    want = ("- **rank 1 never called ncclAllReduce #%d on comm %s (id %s)**; "
            "rank 0 is waiting in it for " % (SEQ, a["comm"], a["comm_id"]))
    check("hang split: report names the communicator's rank 1", want in out,
          out[:2000])
    check("hang split: its table gives the job rank",
          "| 0 | 1 | %d | %d | ncclAllReduce #%d" % (SEQ, SEQ - 1, SEQ) in out
          and "| 1 | | | | no dump |" in out, out[:2000])
    check("hang split: the world communicator (no collective) is left out",
          "%s), 4 ranks" % world[0]["comm_id"] not in out if world else False,
          out[:2000])
stop(procs)

# Rank 3 calls the 5th allreduce with 2048 floats: every rank hangs.
outdir, procs = start("size")
took = wait_dumps(outdir, 4, 10)
check("hang size: all 4 ranks dump", took is not None, took)
time.sleep(0.3)
rc, out, err = report(outdir)
d = dumps_by_rank(outdir)
comm0 = d[0]["communicators"][0]["comm"]
cid = d[0]["communicators"][0]["comm_id"]
want = ("- **mismatch in collective #%d on comm %s (id %s)**: ranks 0–2 "
        "called ncclAllReduce #%d (1024 × ncclFloat32); rank 3 called "
        "ncclAllReduce #%d (2048 × ncclFloat32); they are waiting in it "
        "for " % (SEQ, comm0, cid, SEQ, SEQ))
check("hang size: report names the mismatch", want in out, out[:2000])
check("hang size: no rank is said to be missing", "never" not in out,
      out[:2000])
stop(procs)

# Rank 3 never joins the communicator: ranks 0-2 hang in the init.
outdir, procs = start("noinit")
took = wait_dumps(outdir, 3, 10)
check("hang noinit: ranks 0-2 dump", took is not None, took)
time.sleep(0.3)
d = dumps_by_rank(outdir)
eq("hang noinit: dumps", sorted(d), [0, 1, 2])
a = d[0]["threads"][0]["args"]
eq("hang noinit: the stuck init and its args",
   (d[0]["threads"][0]["call"], a["kind"], a["nranks"], a["rank"]),
   ("ncclCommInitRank", "init", N, 0))
rc, out, err = report(outdir)
want = ("- **rank 3 never joined ncclCommInitRank of communicator id %s**; "
        "ranks 0–2 are waiting in it for " % a["comm_id"])
check("hang noinit: report names the rank that never joined", want in out,
      out[:2000])
stop(procs)

done()
