"""tprof merge: several ranks' traces into one Perfetto trace.

The inputs are tprof-format traces written here (one event per line, as
the writer lays them out) whose pids, tracks and flow ids clash across
ranks and whose baseTimeNanoseconds differ; torch.profiler (Kineto)
traces from kineto_fixture.py; and real traces of a program run under the
preload. Each output is compared, event by event, with what a reference
model of the rewriting (written below from the rules in
docs/reference/cli.md, "tprof merge") predicts, with
timestamps parsed as exact decimals.
"""
import glob
import gzip
import json
import os
import re
import resource
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from decimal import Decimal, ROUND_HALF_UP

import kineto_fixture
from tplib import CLI, SANITIZE, check, done, eq, prog, run, skip

TMP = tempfile.mkdtemp(prefix="tprof-merge-")
BASE = 1763600000000000000
STEP = 100000000000000          # bases are floored to 10^14 ns
PID_STRIDE = 1000
ID_STRIDE = 10 ** 12
STR_TID_BASE = 10 ** 9          # string tid k of an input


class Raw(str):
    """A value written as is: ts and dur with the digits a test wants."""


def enc(v):
    if isinstance(v, Raw):
        return str(v)
    if isinstance(v, dict):
        return "{" + ",".join(json.dumps(k) + ":" + enc(x)
                              for k, x in v.items()) + "}"
    return json.dumps(v, separators=(",", ":"))


def write_tprof(path, name, base, events, rank=None, world=4):
    """A trace laid out as tprof writes it: header, one event per line,
    trailer (distributedInfo after the events)."""
    head = ('{"schemaVersion": 1,\n"traceName": %s,\n'
            '"displayTimeUnit": "ms",\n' % json.dumps(name))
    if base is not None:
        head += '"baseTimeNanoseconds": %d,\n' % base
    text = head + '"traceEvents": [\n' + ",\n".join(enc(e) for e in events)
    text += '\n],\n"deviceProperties": [],\n'
    if rank is not None:
        text += '"distributedInfo": {"rank": %d, "world_size": %d},\n' % (
            rank, world)
    text += '"tprof": {"version": "0.1.0"}\n}\n'
    data = text.encode()
    if path.endswith(".gz"):
        data = gzip.compress(data)
    with open(path, "wb") as f:
        f.write(data)
    return path


def M(what, pid, tid, **args):
    return {"ph": "M", "name": what, "pid": pid, "tid": tid, "args": args}


def X(cat, name, pid, tid, ts, dur, **args):
    return {"ph": "X", "cat": cat, "name": name, "pid": pid, "tid": tid,
            "ts": Raw(ts), "dur": Raw(dur), "args": args}


def flow(ph, fid, pid, tid, ts):
    e = {"ph": ph, "cat": "ac2g", "name": "ac2g", "id": fid, "pid": pid,
         "tid": tid, "ts": Raw(ts)}
    if ph == "f":
        e["bp"] = "e"
    return e


def rank_events(rank, extra=()):
    """What one rank of a job writes: the same pids (4242, GPU 0), the same
    stream (7) and the same flow and range ids (100, 5) on every rank."""
    ev = [
        M("process_name", 4242, 0, name="python3 (rank %d, pid 4242)" % rank),
        M("process_sort_index", 4242, 0, sort_index=rank),
        X("cuda_runtime", "cudaLaunchKernel", 4242, 4242, "10.000", "5.000",
          ret=0, correlation=100),
        X("kernel", "saxpy", 0, 7, "12.500", "10.250", correlation=100,
          rank=rank),
        flow("s", 100, 4242, 4242, "10.000"),
        flow("f", 100, 0, 7, "12.500"),
        {"ph": "b", "cat": "user_annotation", "name": "phase", "id": 5,
         "pid": 4242, "tid": 4242, "ts": Raw("11.000")},
        {"ph": "e", "cat": "user_annotation", "id": 5, "pid": 4242,
         "tid": 4242, "ts": Raw("30.123")},
        {"ph": "C", "cat": "gpu_memory", "name": "GPU memory", "pid": 0,
         "tid": 0, "ts": Raw("12.000"), "args": {"allocated": 1024}},
        {"ph": "i", "s": "t", "cat": "user_annotation", "name": "mark \"q\"",
         "pid": 4242, "tid": 4242, "ts": Raw("0.001")},
    ]
    ev += list(extra)
    ev += [
        M("process_name", 0, 0, name="GPU 0 (NVIDIA H100 80GB HBM3)"),
        M("process_sort_index", 0, 0, sort_index=1000000),
        M("thread_name", 0, 7, name="stream 7"),
        M("thread_sort_index", 0, 7, sort_index=7),
        M("thread_name", 4242, 4242, name="python3"),
    ]
    return ev


# --- the reference model ----------------------------------------------------

def is_num(v):
    return isinstance(v, (int, Decimal)) and not isinstance(v, bool)


def us3(v):
    return v.quantize(Decimal("0.001"), rounding=ROUND_HALF_UP)


def new_id(i, tag, v, flow_ph):
    if is_num(v):
        return (i + 1) * ID_STRIDE + int(v)
    if flow_ph and re.fullmatch(r"(0[xX])?[0-9a-fA-F]+", v):
        return "0x%x" % ((i + 1) * ID_STRIDE + int(v, 16))
    return "%s:%s" % (tag, v)


def kept_id(v):
    """A pid or tid merge keeps: a number or a non-empty string."""
    return is_num(v) or (isinstance(v, str) and v != "")


def expect(inputs):
    """inputs: [(rank, base or None, events as parsed)], in rank order."""
    base_out = min(b or 0 for _, b, _ in inputs)
    base_out -= base_out % STEP
    out = []
    for i, (rank, base, events) in enumerate(inputs):
        shift = Decimal((base or 0) - base_out) / 1000
        pids, named, sort, tids = {}, set(), {}, {}
        for e in events:
            t = e.get("tid")
            if isinstance(t, str) and t:
                tids.setdefault(t, STR_TID_BASE + len(tids))
            if not kept_id(e.get("pid")) or ("tid" in e and
                                             not kept_id(t)):
                continue
            p = e["pid"]
            np = pids.setdefault(p, (i + 1) * PID_STRIDE + len(pids))
            ph, name = e.get("ph"), e.get("name")
            if ph == "M" and name == "process_sort_index":
                sort[p] = e["args"]["sort_index"]
                continue
            o = dict(e, pid=np)
            if isinstance(t, str):
                o["tid"] = tids[t]
            if "ts" in o:
                o["ts"] = us3(Decimal(e["ts"]) + shift)
            if "dur" in o:
                o["dur"] = us3(Decimal(e["dur"]))
            if ph == "M" and name == "process_name":
                o["args"] = {"name": "rank %d: %s" % (rank, e["args"]["name"])}
                named.add(p)
            if "id" in o and ph in ("s", "t", "f"):
                o["id"] = new_id(i, "rank%d" % rank, o["id"], True)
            elif "id" in o and ph in ("b", "e", "n"):
                o["id"] = new_id(i, "rank%d" % rank, o["id"], False)
            if "bind_id" in o:
                o["bind_id"] = new_id(i, "rank%d" % rank, o["bind_id"], True)
            if "id2" in o:
                o["id2"] = {k: new_id(i, "rank%d" % rank, v, False)
                            for k, v in o["id2"].items()}
            out.append(o)
        order = sorted(pids, key=lambda p: (
            sort.get(p, p if is_num(p) else 0), pids[p]))
        for k, p in enumerate(order):
            if p not in named:
                out.append({"ph": "M", "name": "process_name",
                            "pid": pids[p], "tid": 0,
                            "args": {"name": "rank %d: pid %s" % (rank, p)}})
            out.append({"ph": "M", "name": "process_sort_index",
                        "pid": pids[p], "tid": 0,
                        "args": {"sort_index": (i + 1) * PID_STRIDE + k}})
    return out, base_out


def read_text(path):
    with open(path, "rb") as f:
        data = f.read()
    if data[:2] == b"\x1f\x8b":
        data = gzip.decompress(data)
    return data.decode()


def parse(path):
    return json.loads(read_text(path), parse_float=Decimal)


def merge(*args, **kw):
    return subprocess.run([CLI, "merge"] + list(args), capture_output=True,
                          text=True, **kw)


def check_ok(path, label, foreign=False):
    argv = [CLI, "check"] + (["--foreign"] if foreign else []) + [path]
    p = subprocess.run(argv, capture_output=True, text=True)
    return check(label, p.returncode == 0, p.stdout + p.stderr)


def compare(label, out_path, inputs, files):
    """The whole output against the model: events, header, trailer."""
    t = parse(out_path)
    want, base_out = expect(inputs)
    got = t["traceEvents"]
    eq(label + ": event count", len(got), len(want))
    bad = [k for k, (g, w) in enumerate(zip(got, want)) if g != w]
    check(label + ": every event as the model says", not bad and
          len(got) == len(want),
          bad and "first difference at %d:\n got  %r\n want %r" %
          (bad[0], got[bad[0]], want[bad[0]]))
    eq(label + ": baseTimeNanoseconds is the smallest base, floored",
       t["baseTimeNanoseconds"], base_out)
    merged = t["tprof"]["merged"]
    eq(label + ": tprof.merged lists the inputs in rank order",
       [(m["file"], m["rank"]) for m in merged],
       [(f, r) for f, (r, _, _) in zip(files, inputs)])
    eq(label + ": tprof.merged event counts",
       [m["events"] for m in merged], [len(ev) for _, _, ev in inputs])
    text = read_text(out_path)
    times = re.findall(r'"(?:ts|dur)":(-?[0-9.eE+-]+)', text)
    check(label + ": ts and dur written with three decimals",
          times and all(re.fullmatch(r"-?\d+\.\d{3}", v) for v in times),
          [v for v in times if not re.fullmatch(r"-?\d+\.\d{3}", v)][:5])
    lines = text.split("\n")
    start = lines.index('"traceEvents": [') + 1
    eq(label + ": one event per line", lines[start + len(got)], "],")
    return t


def flows_within_ranks(label, t):
    groups = {}
    for e in t["traceEvents"]:
        if e["ph"] in ("s", "f"):
            groups.setdefault((str(e["id"]), e["cat"], e["name"]),
                              []).append(e)
    check(label + ": each flow is one s and one f",
          groups and all(sorted(e["ph"] for e in g) == ["f", "s"]
                         for g in groups.values()), groups)
    check(label + ": flows join events of one rank only",
          all(len({e["pid"] // PID_STRIDE for e in g}) == 1
              for g in groups.values()), groups)
    return len(groups)


def sort_order(t):
    """The new pids in process_sort_index order."""
    idx = [(e["args"]["sort_index"], e["pid"]) for e in t["traceEvents"]
           if e["ph"] == "M" and e["name"] == "process_sort_index"]
    return [pid for _, pid in sorted(idx)]


def names(t):
    return {e["pid"]: e["args"]["name"] for e in t["traceEvents"]
            if e["ph"] == "M" and e["name"] == "process_name"}


def leftovers(d, name):
    return sorted(f for f in os.listdir(d) if f.startswith(name))


# --- tprof-format traces: clashing pids and ids, different bases ------------

D = os.path.join(TMP, "traces")
os.makedirs(D)
# rank 1: a later base, a process without a name, events with a tid that
# is a string (kept, with a number for it; pid 555 gets a process)
r1_extra = [X("cuda_runtime", "cudaMalloc", 99, 99, "40.000", "1.000"),
            {"ph": "i", "s": "t", "name": "odd", "pid": 4242, "tid": "main",
             "ts": Raw("41.000")},
            {"ph": "i", "s": "t", "name": "odd", "pid": 555, "tid": "main",
             "ts": Raw("42.000")}]
# rank 2: no process names or sort indexes, rank only in the file name,
# string flow and range ids, times with other than three decimals
r2 = [
    X("cuda_runtime", "cudaLaunchKernel", 4242, 4242, "7.12345", "2.0005"),
    X("kernel", "k2", 0, 7, "20", "1.5e1"),
    flow("s", "0x64", 4242, 4242, "7.5"),
    flow("f", "0x64", 0, 7, "20.000"),
    {"ph": "b", "cat": "user_annotation", "name": "r", "id": "abc",
     "pid": 4242, "tid": 4242, "ts": Raw("8.000")},
    {"ph": "e", "cat": "user_annotation", "id": "abc", "pid": 4242,
     "tid": 4242, "ts": Raw("9.000")},
    dict(X("cpu_op", "a", 4242, 4242, "50.000", "1.000"), bind_id=7,
         flow_out=True),
    dict(X("cpu_op", "b", 4242, 4242, "60.000", "1.000"), bind_id="0x7",
         flow_in=True),
    {"ph": "n", "cat": "c", "name": "n1", "id2": {"local": "0x5"},
     "pid": 4242, "tid": 4242, "ts": Raw("61.000")},
    {"ph": "n", "cat": "c", "name": "n2", "id2": {"global": 6},
     "pid": 4242, "tid": 4242, "ts": Raw("62.000")},
]
f0 = write_tprof(os.path.join(D, "z-rank0.trace.json.gz"), "train-rank0",
                 BASE, rank_events(0), rank=0)
f1 = write_tprof(os.path.join(D, "a-rank1.trace.json.gz"), "train-rank1",
                 BASE + STEP, rank_events(1, r1_extra), rank=1)
f2 = write_tprof(os.path.join(D, "job-rank2.trace.json"), "job", BASE, r2)
# not traces: skipped by the directory listing
with open(os.path.join(D, "train-rank0.summary.json"), "w") as f:
    f.write('{"a": 1}')
with open(os.path.join(D, "notes.txt"), "w") as f:
    f.write("x")
inputs = [(0, BASE, parse(f0)["traceEvents"]),
          (1, BASE + STEP, parse(f1)["traceEvents"]),
          (2, BASE, parse(f2)["traceEvents"])]

OUTD = os.path.join(TMP, "out")
os.makedirs(OUTD)
out = os.path.join(OUTD, "all.trace.json.gz")
p = merge("-o", out, D)
eq("tprof: exit 0", p.returncode, 0)
check("tprof: one line on stderr naming OUT",
      p.stderr.startswith("tprof: wrote %s (3 traces" % out) and
      len(p.stderr.splitlines()) == 1, p.stderr)
with open(out, "rb") as f:
    check("tprof: OUT is gzipped", f.read(2) == b"\x1f\x8b")
t = compare("tprof", out, inputs, [f0, f1, f2])
check_ok(out, "tprof: plain tprof check passes")
eq("tprof: dropped and replaced counts",
   [(m["dropped"], m["replaced"]) for m in t["tprof"]["merged"]],
   [(0, 2), (0, 2), (0, 0)])
eq("tprof: string tids mapped", [m["tids"] for m in t["tprof"]["merged"]],
   [{}, {"main": STR_TID_BASE}, {}])
eq("tprof: pid maps", [m["pids"] for m in t["tprof"]["merged"]],
   [{"4242": 1000, "0": 1001}, {"4242": 2000, "0": 2001, "99": 2002, "555": 2003},
    {"4242": 3000, "0": 3001}])
eq("tprof: process names", names(t), {
    1000: "rank 0: python3 (rank 0, pid 4242)",
    1001: "rank 0: GPU 0 (NVIDIA H100 80GB HBM3)",
    2000: "rank 1: python3 (rank 1, pid 4242)",
    2001: "rank 1: GPU 0 (NVIDIA H100 80GB HBM3)",
    2002: "rank 1: pid 99", 2003: "rank 1: pid 555", 3000: "rank 2: pid 4242", 3001: "rank 2: pid 0"})
eq("tprof: processes sorted by rank, each rank's own order kept",
   sort_order(t), [1000, 1001, 2000, 2002, 2003, 2001, 3001, 3000])
eq("tprof: three flows, none across ranks", flows_within_ranks("tprof", t),
   3)
ev = t["traceEvents"]
eq("tprof: flow ids offset per rank, hex stays hex",
   [e["id"] for e in ev if e["ph"] == "s"],
   [1000000000100, 2000000000100, "0x%x" % (3 * ID_STRIDE + 100)])
eq("tprof: bind_id and id2 rewritten",
   [(e.get("bind_id"), e.get("id2")) for e in ev
    if "bind_id" in e or "id2" in e],
   [(3 * ID_STRIDE + 7, None), ("0x%x" % (3 * ID_STRIDE + 7), None),
    (None, {"local": "rank2:0x5"}), (None, {"global": 3 * ID_STRIDE + 6})])
eq("tprof: range ids kept apart",
   [e["id"] for e in ev if e["ph"] == "b"],
   [1000000000005, 2000000000005, "rank2:abc"])
kern = [e for e in ev if e.get("name") in ("saxpy", "k2")]
eq("tprof: rank 1's ts shifted by its base difference, exactly",
   [str(e["ts"]) for e in kern], ["12.500", "100000000012.500", "20.000"])
eq("tprof: rank 2's odd decimals rounded to the ns",
   [str(e["ts"]) + "/" + str(e["dur"]) for e in ev
    if e.get("name") == "cudaLaunchKernel" and e["pid"] == 3000],
   ["7.123/2.001"])
eq("tprof: distributedInfo names the lowest rank",
   t["distributedInfo"], {"rank": 0, "world_size": 3})
eq("tprof: no temporary file left", leftovers(OUTD, "all.trace.json.gz"),
   ["all.trace.json.gz"])

# -o anywhere, --output, --output=, plain output; files in any order
for argv in (["--output", os.path.join(OUTD, "b.json"), f2, f1, f0],
             [f1, "-o", os.path.join(OUTD, "b.json"), f0, f2],
             [f0, f1, f2, "--output=" + os.path.join(OUTD, "b.json")]):
    p = merge(*argv)
    eq("args %s: exit 0" % argv[0], p.returncode, 0)
    b = os.path.join(OUTD, "b.json")
    with open(b, "rb") as f:
        check("args %s: plain JSON out" % argv[0], f.read(1) == b"{")
    eq("args %s: same events" % argv[0], parse(b)["traceEvents"],
       t["traceEvents"])

# OUT inside the directory merged: an existing OUT is left out, and so is
# an older merged trace under another name
inner = os.path.join(D, "merged.trace.json.gz")
for k in range(2):
    p = merge(D, "-o", inner)
    eq("OUT in the input dir, run %d: exit 0" % k, p.returncode, 0)
    eq("OUT in the input dir, run %d: the same events" % k,
       parse(inner)["traceEvents"], t["traceEvents"])
p = merge(D, "-o", os.path.join(OUTD, "again.json"))
eq("an older merged trace in the dir: skipped",
   (p.returncode, len(parse(os.path.join(OUTD, "again.json"))["traceEvents"])),
   (0, len(t["traceEvents"])))
check("an older merged trace in the dir: said so",
      "tprof: skipping %s: it is a merged trace" % inner in p.stderr,
      p.stderr)
os.unlink(inner)

# --- Kineto (torch.profiler) traces -------------------------------------------

K = os.path.join(TMP, "kineto")
os.makedirs(K)
k0, _ = kineto_fixture.make(rank=0)
k1, _ = kineto_fixture.make(rank=1, kernel_us=(5.0, 7.25))
k1["baseTimeNanoseconds"] = kineto_fixture.BASE_NS + STEP
# distributedInfo gives the rank (the names do not have one)
fk0 = kineto_fixture.write(os.path.join(K, "host_b.pt.trace.json.gz"), k0)
fk1 = kineto_fixture.write(os.path.join(K, "host_a.pt.trace.json"), k1)
kin = [(0, k0["baseTimeNanoseconds"], parse(fk0)["traceEvents"]),
       (1, k1["baseTimeNanoseconds"], parse(fk1)["traceEvents"])]
kout = os.path.join(OUTD, "kineto.trace.json.gz")
p = merge(K, "-o", kout)
eq("kineto: exit 0", p.returncode, 0)
kt = compare("kineto", kout, kin, [fk0, fk1])
check_ok(kout, "kineto: tprof check --foreign passes", foreign=True)
check_ok(kout, "kineto: plain tprof check passes too")
eq("kineto: Record Window End dropped (pid and tid are \"\")",
   [m["dropped"] for m in kt["tprof"]["merged"]], [1, 1])
eq("kineto: count is the inputs' less what was dropped or replaced",
   len(kt["traceEvents"]),
   sum(len(ev) for _, _, ev in kin) - 2 - 4 + 4)
eq("kineto: CPU before GPU in each rank", sort_order(kt),
   [1000, 1001, 2000, 2001])
eq("kineto: names", sorted(set(names(kt).values())),
   ["rank 0: python", "rank 1: python"])
eq("kineto: flows", flows_within_ranks("kineto", kt), 9 + 6)

# Older and real Kineto traces: string tids, the profiler span on pid
# "Spawned", unmatched flows, a base that is not a multiple of 10^14. Every
# event is kept but Record Window End, and plain check passes.
KR = os.path.join(TMP, "kineto-real")
os.makedirs(KR)
krin, krf = [], []
for r in (0, 1):
    tr, _ = kineto_fixture.make(
        rank=r, string_tids=True, profiler_span=True, unmatched_flows=2,
        base_ns=kineto_fixture.BASE_NS + 123456789 + r * 1000)
    krf.append(kineto_fixture.write(
        os.path.join(KR, "h.%d.pt.trace.json" % r), tr))
    krin.append((r, tr["baseTimeNanoseconds"], parse(krf[-1])["traceEvents"]))
krout = os.path.join(OUTD, "kineto-real.json")
p = merge(KR, "-o", krout)
eq("kineto real: exit 0", p.returncode, 0)
krt = compare("kineto real", krout, krin, krf)
check_ok(krout, "kineto real: tprof check --foreign passes", foreign=True)
pc = subprocess.run([CLI, "check", krout], capture_output=True, text=True)
eq("kineto real: plain check: only the inputs' own unmatched flows",
   (pc.returncode, pc.stdout.count(": error: "),
    pc.stdout.count("has no end (ph \"f\")")), (1, 4, 4))
eq("kineto real: base floored to 10^14",
   krt["baseTimeNanoseconds"], kineto_fixture.BASE_NS)
eq("kineto real: only Record Window End dropped",
   [(m["events"], m["written"], m["dropped"], m["replaced"])
    for m in krt["tprof"]["merged"]],
   [(len(ev), len(ev) - 3, 1, 2) for _, _, ev in krin])
eq("kineto real: string tids mapped in order of appearance",
   [m["tids"] for m in krt["tprof"]["merged"]],
   [{"4242": STR_TID_BASE, "stream 7": STR_TID_BASE + 1,
     "PyTorch Profiler": STR_TID_BASE + 2,
     "Trace PyTorch Profiler": STR_TID_BASE + 3}] * 2)
eq("kineto real: the string pids got numbers",
   [m["pids"] for m in krt["tprof"]["merged"]],
   [{"4242": 1000, "0": 1001, "Spawned": 1002, "Traces": 1003},
    {"4242": 2000, "0": 2001, "Spawned": 2002, "Traces": 2003}])
n_in = sum(len(ev) for _, _, ev in krin)
eq("kineto real: the stderr line adds up",
   p.stderr.split("(", 1)[-1],
   "2 traces, %d events in: %d copied, 2 dropped, 4 process_sort_index "
   "replaced; 12 process metadata events added)\n" % (n_in, n_in - 6))

# Traces told by content: HTA's rank-N.json.gz, other names; a JSON file
# that is not a trace is left out; mixed world sizes warn.
KC = os.path.join(TMP, "by-content")
os.makedirs(KC)
kcin, kcf = [], []
for r, name in ((0, "rank-0.json.gz"), (1, "rank-1.json")):
    tr, _ = kineto_fixture.make(rank=r, world_size=2 + 2 * r)
    kcf.append(kineto_fixture.write(os.path.join(KC, name), tr))
    kcin.append((r, tr["baseTimeNanoseconds"], parse(kcf[-1])["traceEvents"]))
with open(os.path.join(KC, "notes.json"), "w") as f:
    f.write('{"a": 1}')
kcout = os.path.join(OUTD, "by-content.json")
p = merge(KC, "-o", kcout)
eq("by content: exit 0", p.returncode, 0)
compare("by content", kcout, kcin, kcf)
eq("by content: mixed world sizes warn", p.stderr.splitlines()[0],
   "tprof: warning: the inputs mix world sizes (2 in %s, 4 in %s): are "
   "they one job's?" % (kcf[0], kcf[1]))

# --- real traces of a program run under the preload --------------------------

R = os.path.join(TMP, "real")
os.makedirs(R)
if not os.access(prog("calls"), os.X_OK):
    print("INFO real traces: skipped, %s is not built (make test-build)"
          % prog("calls"))
    real = []
else:
    for r in (1, 0):
        run([prog("calls"), "2", "3"],
            env={"RANK": str(r), "WORLD_SIZE": "2"}, outdir=R)
    real = sorted(glob.glob(os.path.join(R, "*.trace.json.gz")))
    eq("real: two rank traces", [os.path.basename(f) for f in real],
       ["tprof-rank0.trace.json.gz", "tprof-rank1.trace.json.gz"])
if len(real) == 2:
    rin = []
    for k, f in enumerate(real):
        tr = parse(f)
        rin.append((k, tr["baseTimeNanoseconds"], tr["traceEvents"]))
    rout = os.path.join(OUTD, "real.trace.json.gz")
    p = merge(R, "-o", rout)
    eq("real: exit 0 (summary files beside the traces left out)",
       p.returncode, 0)
    rt = compare("real", rout, rin, real)
    check_ok(rout, "real: plain tprof check passes")
    eq("real: one process per rank, in rank order", sort_order(rt),
       [1000, 2000])

# --- errors: one line naming the file, exit 1, no OUT, no OUT.tmp.* ---------

E = os.path.join(TMP, "bad")
os.makedirs(E)
good = f0
gzdata = open(f0, "rb").read()
corrupt = os.path.join(E, "corrupt.trace.json.gz")
with open(corrupt, "wb") as f:        # the deflate stream cut short
    f.write(gzdata[:len(gzdata) // 2])
truncated = os.path.join(E, "trunc.trace.json")
with open(truncated, "w") as f:       # the writer killed mid-trace
    f.write(read_text(f0)[:-300])
notrace = os.path.join(E, "summary.json")
with open(notrace, "w") as f:
    f.write('{"schemaVersion": 1, "ranks": [0, 1]}\n')
notobj = os.path.join(E, "notobj.json")
with open(notobj, "w") as f:
    f.write('{"traceEvents": [{"ph":"i","pid":1,"tid":1,"ts":1.000}, 7]}\n')
empty = os.path.join(E, "empty")
os.makedirs(empty)
with open(os.path.join(empty, "x.summary.json"), "w") as f:
    f.write("{}")
missing = os.path.join(E, "nope")
for label, bad, what in (
        ("missing dir", missing, "No such file or directory"),
        ("corrupt gzip", corrupt, "truncated gzip data"),
        ("truncated JSON", truncated, "invalid JSON"),
        ("not a trace", notrace, 'not a trace: no "traceEvents" array'),
        ("event not an object", notobj, "not an object"),
        ("dir without traces", empty, "no traces")):
    for o in ("o.trace.json.gz", "o.json"):
        p = merge(good, bad, "-o", os.path.join(OUTD, o))
        lines = p.stderr.splitlines()
        eq("%s -> %s: exit 1" % (label, o), p.returncode, 1)
        check("%s -> %s: one line naming the file" % (label, o),
              len(lines) == 1 and
              lines[0].startswith("tprof: error: %s: " % bad) and
              what in lines[0], p.stderr)
        eq("%s -> %s: no OUT, no OUT.tmp.*" % (label, o),
           leftovers(OUTD, o), [])


def small_files():
    resource.setrlimit(resource.RLIMIT_FSIZE, (4096, 4096))
    signal.signal(signal.SIGXFSZ, signal.SIG_IGN)


p = merge(D, "-o", os.path.join(OUTD, "w.json"), preexec_fn=small_files)
eq("write failure: exit 1", p.returncode, 1)
check("write failure: names OUT", p.stderr.startswith(
    "tprof: error: %s: write failed: " % os.path.join(OUTD, "w.json")),
    p.stderr)
eq("write failure: nothing left", leftovers(OUTD, "w.json"), [])


def killed_converting():
    """A merge to .pftrace.gz killed while it converts: its JSON
    (OUT.<pid>.json.gz, complete by then) is removed too. OUT is a FIFO
    that nobody reads, so the conversion blocks opening it."""
    fifo = os.path.join(OUTD, "k.pftrace.gz")
    os.mkfifo(fifo)
    p = subprocess.Popen([CLI, "merge", D, "-o", fifo],
                         stderr=subprocess.DEVNULL)
    mid = "k.pftrace.gz.%d.json.gz" % p.pid
    for _ in range(200):
        if mid in os.listdir(OUTD) or p.poll() is not None:
            break
        time.sleep(0.05)
    seen = mid in os.listdir(OUTD)
    time.sleep(0.2)
    p.send_signal(signal.SIGTERM)
    rc = p.wait(timeout=30)
    eq("killed converting: the merged JSON was there, then SIGTERM",
       (seen, rc), (True, -signal.SIGTERM))
    eq("killed converting: nothing left but the FIFO",
       leftovers(OUTD, "k.pftrace.gz"), ["k.pftrace.gz"])
    os.unlink(fifo)


killed_converting()


def gzip_levels():
    """--gzip-level 6 (and =6): the bytes of level 1, in JSON and in
    Perfetto; a level out of 1-9: exit 2, one line, no OUT."""
    for sfx in (".trace.json.gz", ".pftrace.gz"):
        got = {}
        for flag in (["--gzip-level", "1"], ["--gzip-level", "6"],
                     ["--gzip-level=6"]):
            o = os.path.join(OUTD, "lv" + "".join(flag) + sfx)
            p = merge(D, "-o", o, *flag)
            eq("merge %s to %s: exit 0" % (" ".join(flag), sfx),
               p.returncode, 0)
            if p.returncode == 0:
                with gzip.open(o) as f:
                    got[" ".join(flag)] = f.read()
                os.unlink(o)
        eq("merge --gzip-level 6 to %s: the bytes of level 1" % sfx,
           len(set(got.values())) == 1 and len(got) == 3, True)
    for bad in (["--gzip-level", "0"], ["--gzip-level=x"]):
        o = os.path.join(OUTD, "badlevel.trace.json.gz")
        p = merge(D, "-o", o, *bad)
        eq("merge %s: exit 2, one line, no OUT" % " ".join(bad),
           (p.returncode, len(p.stderr.splitlines()), os.path.exists(o)),
           (2, 1, False))


gzip_levels()

for argv, label, msg in (
        ([D], "no -o", "no output: give -o OUT"),
        (["-o", out], "no input", "no input: give directories or files"),
        ([D, "-o"], "-o without a name", "-o needs a file name"),
        ([D, "-o", out, "-o", out], "-o twice", "-o is given twice"),
        ([D, "--frob", "-o", out], "unknown option",
         "unknown option '--frob'")):
    p = merge(*argv)
    eq("usage: %s: exit 2, one line naming the help" % label,
       (p.returncode, p.stdout, p.stderr),
       (2, "", "tprof merge: %s; see 'tprof merge --help'\n" % msg))
p = merge("--help")
check("--help: exit 0, the help on stdout",
      p.returncode == 0 and p.stderr == "" and
      p.stdout.startswith("usage: tprof merge "), p.stdout + p.stderr)

# --- memory stays bounded on a large input -----------------------------------

N = 320000
# Written by another process, so that this one stays small: a child's max
# RSS starts from its parent's at the fork.
GEN = r"""
import sys, zlib
n, base, path = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3]
line = ('{"ph":"X","cat":"cuda_runtime","name":"cudaLaunchKernel","pid":7,'
        '"tid":7,"ts":%d.%03d,"dur":0.500,"args":{"ret":0,"correlation":%d,'
        '"kernel":"void at::native::vectorized_elementwise_kernel<4, '
        'at::native::CUDAFunctor_add<float>, at::detail::Array<char*, 3> >'
        '(int, at::native::CUDAFunctor_add<float>, at::detail::Array<char*, '
        '3>)","grid":[%d,1,1],"block":[256,1,1],"stream":"0x%x"}}')
body = ",\n".join(line % (k, k % 1000, k, k % 9000 + 1, k * 7919)
                   for k in range(n))
text = ('{"schemaVersion": 1,\n"traceName": "big-rank0",\n'
        '"displayTimeUnit": "ms",\n"baseTimeNanoseconds": %d,\n'
        '"traceEvents": [\n%s\n],\n"deviceProperties": [],\n'
        '"distributedInfo": {"rank": 0, "world_size": 1},\n'
        '"tprof": {"version": "0.1.0"}\n}\n' % (base, body)).encode()
z = zlib.compressobj(1, zlib.DEFLATED, 31)
with open(path, "wb") as f:
    f.write(z.compress(text) + z.flush())
print(len(text))
"""
big = os.path.join(TMP, "big-rank0.trace.json.gz")
size = int(subprocess.run([sys.executable, "-c", GEN, str(N), str(BASE), big],
                          capture_output=True, text=True,
                          check=True).stdout)
LIMIT = 64 << 20


def small_memory():
    """Address space capped too: loading the input whole would fail."""
    resource.setrlimit(resource.RLIMIT_AS, (LIMIT, LIMIT))


# A sanitizer reserves terabytes of shadow address space and keeps freed
# memory in quarantine: no address-space cap, no RSS bound there.
child = subprocess.Popen([CLI, "merge", big, "-o",
                          os.path.join(OUTD, "big.trace.json.gz")],
                         stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                         preexec_fn=None if SANITIZE else small_memory)
_, status, usage = os.wait4(child.pid, 0)    # this child's max RSS alone
child.returncode = os.waitstatus_to_exitcode(status)
if SANITIZE:
    eq("large input (%d MiB): exit 0" % (size >> 20), child.returncode, 0)
    skip("large input: 64 MiB of address space, max RSS well under the "
         "input", "a sanitizer's shadow memory needs terabytes of address "
         "space and its quarantine holds freed memory")
else:
    eq("large input (%d MiB), 64 MiB of address space: exit 0" %
       (size >> 20), child.returncode, 0)
    check("large input: max RSS %d KiB is well under the input's %d MiB"
          % (usage.ru_maxrss, size >> 20),
          usage.ru_maxrss * 1024 < LIMIT and size > 90 << 20,
          "%d KiB" % usage.ru_maxrss)
with gzip.open(os.path.join(OUTD, "big.trace.json.gz"), "rb") as f:
    n = sum(1 for l in f if l.startswith(b'{"ph":"X"'))
eq("large input: every event out", n, N)

shutil.rmtree(TMP, ignore_errors=True)
done()
