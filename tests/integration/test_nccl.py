"""NCCL hooks: every hooked entry point recorded once per call, category
nccl, with its exact args and the return code the program saw.

With the real libnccl (no GPU here) every call fails (NULL communicators,
invalid args); tests/nccl/fake_nccl.c, a stand-in libnccl.so.2 found
through LD_LIBRARY_PATH, plays the success paths: communicators' rank and
size, splits, groups, a nonblocking init, and the trace's
distributedInfo."""
import os
import re

from tplib import *

FAKE_DIR = os.path.join(BUILD, "tests", "fakenccl")
NCCL = ["nccl_calls"]
STATUS = {1: "ncclUnhandledCudaError", 2: "ncclSystemError",
          3: "ncclInternalError", 4: "ncclInvalidArgument",
          5: "ncclInvalidUsage", 6: "ncclRemoteError", 7: "ncclInProgress"}
TRACE = "tprof-rank0.trace.json.gz"


def nccl_events(t):
    ev = [e for e in xevents(t) if e["cat"] == "nccl"]
    return sorted(ev, key=lambda e: e["ts"])


def printed_calls(stdout):
    """(name, ret) of each hooked call the program made, in order."""
    out = []
    for line in stdout.splitlines():
        w = line.split()
        if (len(w) == 2 and w[0].startswith("nccl") and
                w[0] != "ncclRedOpCreatePreMulSum"):
            out.append((w[0], int(w[1])))
    return out


def printed_comms(stdout):
    comms = {}
    for line in stdout.splitlines():
        w = line.split()
        if w[:1] == ["comm"]:
            comms[w[1]] = w[2:] if w[1] == "all" else w[2]
    return comms


def coll(count, dtype, nbytes=None, comm="0x0", rank=None, size=None,
         group=None, **kw):
    a = {"count": count, "dtype": dtype, "comm": comm, "stream": "0x10"}
    if nbytes is not None:
        a["bytes"] = nbytes
    if rank is not None:
        a["rank"], a["size"] = rank, size
    if group is not None:
        a["group"] = group
    for k, v in kw.items():
        a[k.replace("_", " ")] = v
    return a


def grp(group, depth, calls=None):
    a = {"group": group, "depth": depth}
    if calls is not None:
        a["calls"] = calls
    return a


def collectives(c, rank=None, size=None):
    """collectives() in nccl_calls.c; in/out bytes once size is known."""
    k = dict(comm=c, rank=rank, size=size)
    x = (lambda n: n * size) if size else (lambda n: None)

    def io(**kw):
        return {k: v for k, v in kw.items() if v is not None}
    return [
        ("ncclAllReduce", coll(1000, "ncclFloat16", 2000, op="ncclSum", **k)),
        ("ncclAllReduce", coll(7, "ncclBfloat16", 14, op="ncclAvg", **k)),
        ("ncclAllGather", coll(256, "ncclBfloat16", 512, **io(out_bytes=x(512)), **k)),
        ("ncclReduceScatter", coll(128, "ncclFloat32", 512, op="ncclMax",
                                   **io(in_bytes=x(512)), **k)),
        ("ncclBroadcast", coll(64, "ncclInt64", 512, root=3, **k)),
        ("ncclBcast", coll(32, "ncclUint8", 32, root=1, **k)),
        ("ncclReduce", coll(10, "ncclFloat64", 80, op="ncclMin", root=2, **k)),
        ("ncclAlltoAll", coll(6, "ncclInt32", 24,
                              **io(in_bytes=x(24), out_bytes=x(24)), **k)),
        ("ncclGather", coll(5, "ncclUint32", 20, root=1, **io(out_bytes=x(20)), **k)),
        ("ncclScatter", coll(3, "ncclFloat8e4m3", 3, root=0, **io(in_bytes=x(3)), **k)),
        ("ncclSend", coll(100, "ncclInt8", 100, peer=5, **k)),
        ("ncclRecv", coll(50, "ncclUint64", 400, peer=6, **k)),
        ("ncclAllReduce", coll(4, "ncclInt32", 16, op="ncclProd", **k)),
        ("ncclReduce", coll(9, "ncclFloat8e5m2", 9, op="ncclMax", root=0, **k)),
        ("ncclReduceScatter", coll(2, "ncclInt64", 16, op="ncclAvg",
                                   **io(in_bytes=x(16)), **k)),
    ]


def groups(c, rank=None, size=None):
    k = dict(comm=c, rank=rank, size=size)
    return [
        ("ncclGroupStart", grp(1, 1)),
        ("ncclSend", coll(8, "ncclFloat32", 32, peer=1, group=1, **k)),
        ("ncclRecv", coll(8, "ncclFloat32", 32, peer=1, group=1, **k)),
        ("ncclGroupStart", grp(1, 2)),
        ("ncclAllReduce", coll(16, "ncclFloat32", 64, op="ncclSum", group=1, **k)),
        ("ncclGroupEnd", grp(1, 2)),
        ("ncclGroupEnd", grp(1, 1, 3)),
        ("ncclGroupStart", grp(2, 1)),
        ("ncclBcast", coll(4, "ncclInt8", 4, root=0, group=2, **k)),
        ("ncclGroupEnd", grp(2, 1, 1)),
    ]


def simulated(c, first, rank=None, size=None):
    k = dict(comm=c, rank=rank, size=size)
    return [
        ("ncclGroupStart", grp(first, 1)),
        ("ncclAllReduce", coll(16, "ncclFloat32", 64, op="ncclSum", group=first, **k)),
        ("ncclGroupSimulateEnd", grp(first, 1, 1)),
        ("ncclGroupStart", grp(first + 1, 1)),
        ("ncclGroupEnd", grp(first + 1, 1, 0)),
    ]


def check_calls(tag, ev, calls, want):
    """Events against the program's calls and the expected args."""
    eq("%s: one event per hooked call, in call order" % tag,
       [e["name"] for e in ev], [c[0] for c in calls])
    eq("%s: ret is the code the program got" % tag,
       [e["args"]["ret"] for e in ev], [c[1] for c in calls])
    bad = [(e["name"], e["args"].get("status"), STATUS.get(e["args"]["ret"]))
           for e in ev if e["args"].get("status") != STATUS.get(e["args"]["ret"])]
    check("%s: status names the result, only when not ncclSuccess" % tag,
          not bad, str(bad[:3]))
    eq("%s: expected calls" % tag, [w[0] for w in want], [c[0] for c in calls])
    for i, (e, (name, args)) in enumerate(zip(ev, want)):
        got = {k: v for k, v in e["args"].items() if k not in ("ret", "status")}
        eq("%s: args of call %d (%s)" % (tag, i, name), got, args)


def stable(stdout):
    """stdout less the communicators' addresses (ASLR)."""
    return [l for l in stdout.splitlines() if not l.startswith("comm ")]


def trace_of(r, name=TRACE):
    path = os.path.join(r.dir, name)
    return path, (load(path) if os.path.exists(path) else None)


# --- the real libnccl: every call fails ---------------------------------
plain = run([prog("nccl_calls"), "real"], preload=False)
r = run([prog("nccl_calls"), "real"])
eq("nccl real: exit code unchanged", r.rc, plain.rc)
eq("nccl real: return codes unchanged", r.stdout, plain.stdout)
path, t = trace_of(r)
check("nccl real: trace written", t is not None, str(r.files()))
tprof_check(path, "nccl real: tprof check passes")
check("nccl real: X events nest", nesting_ok(t))
check("nccl real: no 'cannot find' line", "cannot find" not in r.stderr, r.stderr)
ev = nccl_events(t)
calls = printed_calls(r.stdout)
want = (collectives("0x0") + [
    ("ncclAllReduce", coll(4, 42, op="custom")),
    ("ncclAllReduce", coll(2 ** 64 - 1, "ncclFloat64", op="ncclSum")),
] + groups("0x0") + [
    ("ncclGroupEnd", {}),
] + simulated("0x0", 3) + [
    ("ncclCommInitRank", {"nranks": 4, "rank": 1}),
    ("ncclCommInitRank", {"nranks": 4, "rank": 1}),
    ("ncclCommInitRankConfig", {"nranks": 2, "rank": 0}),
    ("ncclCommInitRankScalable", {"nranks": 2, "rank": 1}),
    ("ncclCommInitAll", {"nranks": 2}),
    ("ncclCommSplit", {"comm": "0x0", "color": 3, "key": 7}),
    ("ncclCommFinalize", {"comm": "0x0"}),
    ("ncclCommDestroy", {"comm": "0x0"}),
    ("ncclCommAbort", {"comm": "0x0"}),
])
check_calls("nccl real", ev, calls, want)
eq("nccl real: every hooked function seen",
   sorted(set(e["name"] for e in ev)),
   sorted("ncclAllReduce ncclAllGather ncclReduceScatter ncclBroadcast "
          "ncclBcast ncclReduce ncclAlltoAll ncclGather ncclScatter ncclSend "
          "ncclRecv ncclGroupStart ncclGroupEnd ncclGroupSimulateEnd "
          "ncclCommInitRank "
          "ncclCommInitRankConfig ncclCommInitRankScalable ncclCommInitAll "
          "ncclCommSplit ncclCommFinalize ncclCommDestroy "
          "ncclCommAbort".split()))
eq("nccl real: ncclBcast's own ncclBroadcast is not recorded",
   len([e for e in ev if e["name"] == "ncclBroadcast"]), 1)
eq("nccl real: failures carry their status",
   {e["args"].get("status") for e in ev if e["name"] == "ncclCommInitRank"},
   {"ncclUnhandledCudaError"})
eq("nccl real: no communicator, no NCCL world",
   t["distributedInfo"], {"rank": 0, "world_size": 1})
eq("nccl real: the CUDA call is recorded too",
   len(xevents(t, "cudaDeviceSynchronize")), 1)
n_real = len(ev)
cleanup(r)

r = run([prog("nccl_calls"), "real"], env={"TPROF_TRACE": "cuda"})
path, t = trace_of(r)
eq("nccl real, TPROF_TRACE=cuda: return codes unchanged", r.stdout, plain.stdout)
eq("nccl real, TPROF_TRACE=cuda: no nccl event",
   len(nccl_events(t)) if t else None, 0)
eq("nccl real, TPROF_TRACE=cuda: the CUDA call is",
   len(xevents(t, "cudaDeviceSynchronize")) if t else None, 1)
cleanup(r)

r = run([prog("nccl_calls"), "real"], env={"TPROF_TRACE": "nccl"})
path, t = trace_of(r)
eq("nccl real, TPROF_TRACE=nccl: return codes unchanged", r.stdout, plain.stdout)
eq("nccl real, TPROF_TRACE=nccl: every call recorded",
   len(nccl_events(t)) if t else None, n_real)
eq("nccl real, TPROF_TRACE=nccl: nothing else",
   sorted({e["cat"] for e in xevents(t)}) if t else None, ["nccl"])
cleanup(r, plain)

# --- the stand-in: communicators with a rank and a size ------------------
FAKE_ENV = {"LD_LIBRARY_PATH": FAKE_DIR}
plain = run([prog("nccl_calls"), "fake"], env=FAKE_ENV, preload=False)
r = run([prog("nccl_calls"), "fake"], env=FAKE_ENV)
check("nccl fake: the stand-in is the one loaded", "version 22703" in plain.stdout,
      plain.stdout[:200])
eq("nccl fake: exit code unchanged", r.rc, plain.rc)
eq("nccl fake: return codes unchanged", stable(r.stdout), stable(plain.stdout))
check("nccl fake: tprof never asks an unready communicator",
      "unready asks 0" in r.stdout, r.stdout[-200:])
path, t = trace_of(r)
tprof_check(path, "nccl fake: tprof check passes")
check("nccl fake: X events nest", nesting_ok(t))
ev = nccl_events(t)
calls = printed_calls(r.stdout)
cm = printed_comms(r.stdout)
c, s1, s2, s4, nb, al = cm["c"], cm["s1"], cm["s2"], cm["s4"], cm["nb"], cm["all"]
check("nccl fake: distinct communicators",
      len({c, s1, s2, s4, nb} | set(al)) == 8, str(cm))
one = dict(op="ncclSum")
want = ([("ncclCommInitRank", {"nranks": 4, "rank": 1, "comm": c})] +
        collectives(c, 1, 4) + groups(c, 1, 4) + simulated(c, 3, 1, 4) + [
    ("ncclAllReduce", coll(8, "ncclFloat32", 32, c, 1, 4, op="custom")),
    ("ncclCommSplit", {"comm": c, "rank": 1, "size": 4, "color": 0, "key": 1,
                       "new comm": s1, "new rank": 1, "new size": 2}),
    ("ncclGroupStart", grp(5, 1)),
    ("ncclCommSplit", {"comm": c, "rank": 1, "size": 4, "color": 1, "key": 0,
                       "new comm": s2, "group": 5}),
    ("ncclGroupEnd", grp(5, 1, 1)),
    ("ncclAllReduce", coll(1, "ncclFloat32", 4, s2, 0, 2, **one)),
    ("ncclCommSplit", {"comm": c, "rank": 1, "size": 4, "color": -1, "key": 0}),
    ("ncclCommShrink", {"comm": c, "rank": 1, "size": 4, "excluded": 1,
                        "flags": 0, "new comm": s4, "new rank": 1,
                        "new size": 3}),
    ("ncclAllReduce", coll(1, "ncclFloat32", 4, s4, 1, 3, **one)),
    ("ncclCommInitAll", {"nranks": 3, "comms": al}),
    ("ncclCommInitRankConfig", {"nranks": 8, "rank": 5, "comm": nb}),
    ("ncclAllReduce", coll(1, "ncclFloat32", 4, nb, **one)),
    ("ncclGroupStart", grp(6, 1)),
    ("ncclGroupEnd", grp(6, 1, 0)),
    ("ncclAllReduce", coll(1, "ncclFloat32", 4, nb, 5, 8, **one)),
    ("ncclGroupStart", grp(1, 1)),
    ("ncclAllReduce", coll(2, "ncclFloat32", 8, s1, 1, 2, group=1, **one)),
    ("ncclGroupEnd", grp(1, 1, 1)),
    ("ncclCommFinalize", {"comm": c, "rank": 1, "size": 4}),
    ("ncclCommDestroy", {"comm": c, "rank": 1, "size": 4}),
    ("ncclCommInitRank", {"nranks": 16, "rank": 3, "comm": c}),
    ("ncclAllReduce", coll(1, "ncclFloat32", 4, c, 3, 16, **one)),
    ("ncclCommAbort", {"comm": c, "rank": 3, "size": 16}),
    ("ncclCommDestroy", {"comm": s1, "rank": 1, "size": 2}),
])
check_calls("nccl fake", ev, calls, want)
check("nccl fake: a freed address reused by a new communicator",
      "reused 1" in r.stdout)
tids = {}
for e in ev:
    tids.setdefault(e["tid"], []).append(e)
eq("nccl fake: two threads", len(tids), 2)
other = [v for v in tids.values() if len(v) == 3]
eq("nccl fake: the other thread's group is its own group 1",
   [(e["name"], e["args"].get("group")) for e in other[0]] if other else None,
   [("ncclGroupStart", 1), ("ncclAllReduce", 1), ("ncclGroupEnd", 1)])
eq("nccl fake: category nccl", {e["cat"] for e in ev}, {"nccl"})
eq("nccl fake: distributedInfo gains the NCCL world",
   t["distributedInfo"],
   {"rank": 0, "world_size": 1, "backend": "nccl", "nccl_version": "2.27.3",
    "nccl_rank": 3, "nccl_world_size": 16, "nccl_communicators": 9})
text = raw(path)
hits = [l for l in text.split("\n") if re.search(r'"rank":\s+(\d+)', l)]
eq("nccl fake: HTA's rank regex matches distributedInfo only",
   [l.split(":")[0] for l in hits], ['"distributedInfo"'])
eq("nccl fake: HTA's rank regex reads the environment's rank",
   re.findall(r'"rank":\s+(\d+)', text), ["0"])
check("nccl fake: events carry \"rank\" without a space",
      '"rank":1,"size":4' in text)
cleanup(r)

r = run([prog("nccl_calls"), "fake"],
        env=dict(FAKE_ENV, FAKE_NCCL_VERSION="2804", RANK="2", WORLD_SIZE="4"))
path, t = trace_of(r, "tprof-rank2.trace.json.gz")
eq("nccl fake: version code before 2.9 (X*1000+Y*100+Z)",
   t and t["distributedInfo"].get("nccl_version"), "2.8.4")
eq("nccl fake: environment rank beside the NCCL one",
   t and (t["distributedInfo"]["rank"], t["distributedInfo"]["world_size"],
          t["distributedInfo"]["nccl_rank"]), (2, 4, 3))
cleanup(r)

r = run([prog("nccl_calls"), "fake"], env=dict(FAKE_ENV, TPROF_TRACE="cuda"))
path, t = trace_of(r)
eq("nccl fake, TPROF_TRACE=cuda: return codes unchanged", stable(r.stdout),
   stable(plain.stdout))
eq("nccl fake, TPROF_TRACE=cuda: no nccl event",
   len(nccl_events(t)) if t else None, 0)
eq("nccl fake, TPROF_TRACE=cuda: communicators still counted",
   t and t["distributedInfo"].get("nccl_communicators"), 9)
cleanup(r)

r = run([prog("nccl_calls"), "fake"], env=dict(FAKE_ENV, TPROF_TRACE="nccl"))
path, t = trace_of(r)
eq("nccl fake, TPROF_TRACE=nccl: every call recorded",
   [e["name"] for e in nccl_events(t)] if t else None, [c[0] for c in calls])
cleanup(r)

# Stacks start in the program, not in tprof, for every kind of hook.
NAMES = ("ncclAllReduce", "ncclGroupEnd", "ncclCommSplit",
         "ncclCommInitAll", "ncclCommDestroy", "ncclCommInitRank")
if "thread" in SANITIZE:
    # The stand-in's threads exit after libunwind ran on them: libunwind's
    # thread-exit destructor then locks a mutex after TSan has torn the
    # thread down (SIGSEGV in __tsan::MutexPreLock). test_stacks.py
    # checks stacks under TSan.
    for name in NAMES:
        skip("nccl fake: %s's stack starts in the program" % name,
             "libunwind's thread-exit destructor crashes in TSan's runtime")
else:
    r = run([prog("nccl_calls"), "fake"],
            env=dict(FAKE_ENV, TPROF_BACKTRACE="0"))
    path, t = trace_of(r)
    for name in NAMES:
        e = [e for e in nccl_events(t) if e["name"] == name][0] if t else None
        st = e["args"].get("stack", []) if e else []
        check("nccl fake: %s's stack starts in the program" % name,
              st and st[0].endswith("(nccl_calls)"), str(st[:2]))
    cleanup(r)
cleanup(plain)
done()
