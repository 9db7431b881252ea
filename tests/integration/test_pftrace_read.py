#!/usr/bin/env python3
"""tprof check, report, merge and convert reading Perfetto protobuf traces
(.pftrace, .pftrace.gz; cli/pftrace_*.c).

- A trace written here byte by byte from Perfetto's published schema
  (protos/perfetto/trace/: field numbers below), not by tprof's encoder:
  two packet sequences with their own interned strings under the same
  iids, a state cleared again with new strings, a packet needing state
  before any was cleared (skipped), TracePacketDefaults (clock and
  track), an incremental clock in microseconds, a BOOTTIME timestamp
  related to REALTIME by the ClockSnapshot, process/thread/counter/named
  tracks with parents, a device and stream, debug annotations of every
  type (nested dicts and arrays, legacy JSON, NestedValue, interned
  strings, pointers), flows on slices (one never ended: not written),
  counters with a unit multiplier, extra counter values, an async track
  whose end comes first. Its JSON
  form (`tprof convert` to .json) is compared event for event.
- Round trips: JSON -> Perfetto -> JSON on test_convert's fixture, on
  traces of the library's fixture programs and on Kineto fixtures gives
  the same events as JSON -> JSON, but for what the encoder does not
  keep (listed in docs/reference/perfetto-format.md, "Known limits").
- `tprof report --json` on a .pftrace.gz and on the JSON it came from:
  byte for byte the same but for the file's name; the library's own
  TPROF_FORMAT=perfetto files check and report as their JSON form.
- `tprof check`: a good .pftrace passes; a slice ending before it begins
  and a SLICE_END with nothing open are errors; a truncated file and a
  bad length are one error naming the offset.
- `tprof merge` of .pftrace.gz files into a .pftrace.gz (decoded with the
  official schema when the perfetto/protobuf modules are there, else a
  SKIP) and of mixed JSON and Perfetto inputs into JSON."""
import gzip
import json
import os
import re
import shutil
import struct
import subprocess
import tempfile

import kineto_fixture
import test_convert
from pftrace import decode, schema
from tplib import CLI, check, cleanup, done, eq, load, prog, run, skip

BASE = 1795500000000000000


# Protobuf wire format (https://protobuf.dev/programming-guides/encoding/)

def varint(v):
    v &= (1 << 64) - 1
    out = bytearray()
    while True:
        b = v & 0x7f
        v >>= 7
        if v:
            out.append(b | 0x80)
        else:
            out.append(b)
            return bytes(out)


def fv(num, v):
    """A varint field (negative int64 as two's complement)."""
    return varint(num << 3) + varint(v)


def fb(num, data):
    """A length-delimited field."""
    if isinstance(data, str):
        data = data.encode()
    return varint(num << 3 | 2) + varint(len(data)) + data


def f64(num, v, fmt="<Q"):
    return varint(num << 3 | 1) + struct.pack(fmt, v)


def packet(*fields):
    return fb(1, b"".join(fields))


# TracePacket: timestamp 8, timestamp_clock_id 58, seq id 10, flags 13,
# interned_data 12, defaults 59, track_event 11, track_descriptor 60,
# clock_snapshot 6. TrackEvent: type 9, track_uuid 11, name_iid 10,
# name 23, category_iids 3, categories 22, debug_annotations 4,
# counter_value 30, flow_ids 47, terminating_flow_ids 48,
# extra_counter_track_uuids 31, extra_counter_values 12.
BEGIN, END, INSTANT, COUNTER = 1, 2, 3, 4
CLEARED, NEEDS = 1, 2


def pkt(seq, ts=None, clock=None, flags=0, te=None, interned=None,
        defaults=None, td=None, snapshot=None, lost=False):
    f = [fv(10, seq)]
    if lost:                    # previous_packet_dropped
        f.append(fv(42, 1))
    if ts is not None:
        f.append(fv(8, ts))
    if clock is not None:
        f.append(fv(58, clock))
    if flags:
        f.append(fv(13, flags))
    if interned:
        f.append(fb(12, interned))
    if defaults:
        f.append(fb(59, defaults))
    if td:
        f.append(fb(60, td))
    if snapshot:
        f.append(fb(6, snapshot))
    if te is not None:
        f.append(fb(11, te))
    return packet(*f)


def ev(typ, track=None, name=None, name_iid=None, cats=(), cat_iids=(),
       ann=(), flows=(), terms=(), **kw):
    f = [fv(9, typ)]
    if track is not None:
        f.append(fv(11, track))
    if name is not None:
        f.append(fb(23, name))
    if name_iid is not None:
        f.append(fv(10, name_iid))
    f += [fv(3, c) for c in cat_iids] + [fb(22, c) for c in cats]
    f += [fb(4, a) for a in ann]
    f += [f64(47, x) for x in flows] + [f64(48, x) for x in terms]
    if "counter" in kw:
        f.append(fv(30, kw["counter"]))
    for t, v in kw.get("extra", ()):
        f += [fv(31, t), fv(12, v)]
    return b"".join(f)


def ann(name=None, name_iid=None, **v):
    """A DebugAnnotation; v: one value field by its schema name."""
    f = []
    if name is not None:
        f.append(fb(10, name))
    if name_iid is not None:
        f.append(fv(1, name_iid))
    for k, x in v.items():
        if k == "bool_value":
            f.append(fv(2, int(x)))
        elif k == "uint_value":
            f.append(fv(3, x))
        elif k == "int_value":
            f.append(fv(4, x))
        elif k == "double_value":
            f.append(f64(5, x, "<d"))
        elif k == "string_value":
            f.append(fb(6, x))
        elif k == "pointer_value":
            f.append(fv(7, x))
        elif k == "nested_value":
            f.append(fb(8, x))
        elif k == "legacy_json_value":
            f.append(fb(9, x))
        elif k == "dict_entries":
            f += [fb(11, e) for e in x]
        elif k == "array_values":
            f += [fb(12, e) for e in x]
        elif k == "string_value_iid":
            f.append(fv(17, x))
    return b"".join(f)


def interned(names=(), cats=(), anames=(), strs=()):
    out = b""
    for field, items in ((2, names), (1, cats), (3, anames), (29, strs)):
        for iid, s in items:
            out += fb(field, fv(1, iid) + fb(2, s))
    return out


def clock(cid, ts, inc=False, mult=0):
    return fb(1, fv(1, cid) + fv(2, ts) + (fv(3, 1) if inc else b"") +
              (fv(4, mult) if mult else b""))


def track(uuid, parent=None, name=None, process=None, thread=None,
          counter=None):
    f = [fv(1, uuid)]
    if parent:
        f.append(fv(5, parent))
    if name is not None:
        f.append(fb(2, name))
    if process:
        pid, pname, sort = process
        f.append(fb(3, fv(1, pid) + fb(6, pname) + fv(3, sort)))
    if thread:
        pid, tid, tname = thread
        f.append(fb(4, fv(1, pid) + fv(2, tid) + fb(5, tname)))
    if counter is not None:
        f.append(fb(8, counter))
    return b"".join(f)


R0 = BASE + 7 * 10**9 + 123   # REALTIME at the snapshot
BOOT0 = 10**9                  # BOOTTIME at the snapshot


def handmade():
    """The hand-written trace and the JSON events it stands for (ts, dur
    in ns from BASE)."""
    p = []
    # Sequence 1: snapshot (clock 64 incremental in us), cleared state,
    # defaults: clock 64, track 11.
    p.append(pkt(1, snapshot=clock(6, BOOT0) + clock(1, R0) +
                 clock(64, 0, inc=True, mult=1000)))
    p.append(pkt(1, flags=CLEARED, defaults=fv(58, 64) +
                 fb(11, fv(11, 11)),
                 interned=interned(names=[(1, "work")],
                                   cats=[(1, "cat1")],
                                   anames=[(1, "n")],
                                   strs=[(1, "hello")])))
    p.append(pkt(0, td=track(10, process=(100, "proc", 5))))
    p.append(pkt(0, td=track(11, parent=10, thread=(100, 101, "main"))))
    p.append(pkt(0, td=track(12, parent=10, name="mem used",
                             counter=fv(4, 1024))))
    p.append(pkt(0, td=track(13, parent=10, name="queue",
                             counter=b"")))
    p.append(pkt(0, td=track(20, name="GPU 3")))
    p.append(pkt(0, td=track(21, parent=20, name="stream 5")))
    p.append(pkt(0, td=track(30, parent=10, name="net")))
    p.append(pkt(0, td=track(20, name="GPU 3 (Fake)")))   # renamed
    # A sequence that needs state it never had: skipped.
    p.append(pkt(2, ts=BOOT0 + 5, flags=NEEDS,
                 te=ev(INSTANT, track=11, name="lost")))
    nested = fv(1, 1) + fb(2, "q") + fb(3, fv(5, 9)) + fb(2, "r") + \
        fb(3, fv(1, 2) + fb(4, fv(7, 1)) + fb(4, fb(8, "s")))
    args = [ann(name_iid=1, string_value_iid=1),
            ann("i", int_value=-5), ann("u", uint_value=7),
            ann("d", double_value=0.5), ann("b", bool_value=True),
            ann("p", pointer_value=0xdead),
            ann("arr", array_values=[ann(int_value=1),
                                     ann(string_value="x")]),
            ann("dict", dict_entries=[
                ann("k", int_value=2),
                ann("deep", dict_entries=[ann("z", bool_value=False)])]),
            ann("lj", legacy_json_value='{"a": [1, 2]}'),
            ann("badjson", legacy_json_value="{nope"),
            # tprof writes an integer past 64 bits as a legacy JSON
            # string of its digits: read back as the number; a shorter
            # or zero-led string of digits stays a string.
            ann("big", legacy_json_value='"340282366920938463463374607431768211455"'),
            ann("short", legacy_json_value='"12345"'),
            ann("zerolead", legacy_json_value='"01234567890123456789012"'),
            ann("nv", nested_value=nested), ann("empty")]
    seq1 = [
        (10, ev(BEGIN, name_iid=1, cat_iids=[1], ann=args, flows=[77])),
        # A flow begun and never ended (a call without GPU work): no
        # event in the JSON.
        (5, ev(BEGIN, name="inner", cats=["c2", "c3"], flows=[88])),
        (5, ev(END, ann=[ann("ret", int_value=3)])),
        (10, ev(END)),
        (1, ev(INSTANT, name="mark")),
        (1, ev(COUNTER, track=12, counter=2, extra=[(13, 40)])),
        (1, ev(BEGIN, track=21, name="kern", terms=[77])),
        (3, ev(END, track=21)),
        (1, ev(END, track=30)),          # the async end comes first
        (1, ev(BEGIN, track=30, name="req", cats=["io"])),
    ]
    for delta, te in seq1:
        p.append(pkt(1, ts=delta, flags=NEEDS, te=te))
    # Sequence 2: the same iid, another string; BOOTTIME timestamps.
    p.append(pkt(2, flags=CLEARED,
                 interned=interned(names=[(1, "other")])))
    p.append(pkt(2, ts=BOOT0 + 500, clock=6, flags=NEEDS,
                 te=ev(INSTANT, track=11, name_iid=1)))
    # Sequence 1 cleared again: iid 1 is now "again".
    # (Defaults are incremental state too: sent again, as the SDK does.)
    p.append(pkt(1, ts=1, flags=CLEARED | NEEDS,
                 defaults=fv(58, 64) + fb(11, fv(11, 11)),
                 interned=interned(names=[(1, "again")]),
                 te=ev(INSTANT, name_iid=1)))
    us = 1000
    t0 = R0 - BASE
    want = [
        {"ph": "X", "name": "inner", "cat": "c2,c3", "pid": 100,
         "tid": 101, "ts": t0 + 15 * us, "dur": 5 * us,
         "args": {"ret": 3}},
        {"ph": "X", "name": "work", "cat": "cat1", "pid": 100, "tid": 101,
         "ts": t0 + 10 * us, "dur": 20 * us,
         "args": {"n": "hello", "i": -5, "u": 7, "d": 0.5, "b": True,
                  "p": "0xdead", "arr": [1, "x"],
                  "dict": {"k": 2, "deep": {"z": False}},
                  "lj": {"a": [1, 2]}, "badjson": "{nope",
                  "big": 340282366920938463463374607431768211455,
                  "short": "12345",
                  "zerolead": "01234567890123456789012",
                  "nv": {"q": 9, "r": [True, "s"]}, "empty": None}},
        {"ph": "i", "name": "mark", "pid": 100, "tid": 101,
         "ts": t0 + 31 * us, "s": "t"},
        {"ph": "C", "name": "queue", "pid": 100, "tid": 0,
         "ts": t0 + 32 * us, "args": {"value": 40}},
        {"ph": "C", "name": "mem", "pid": 100, "tid": 0,
         "ts": t0 + 32 * us, "args": {"used": 2048}},
        # The start is written with its end; a flow that ends on a GPU
        # stream is Kineto's "ac2g".
        {"ph": "s", "name": "ac2g", "cat": "ac2g", "id": 77, "pid": 100,
         "tid": 101, "ts": t0 + 10 * us},
        {"ph": "f", "bp": "e", "name": "ac2g", "cat": "ac2g", "id": 77,
         "pid": 3,
         "tid": 5, "ts": t0 + 33 * us},
        {"ph": "X", "name": "kern", "pid": 3, "tid": 5,
         "ts": t0 + 33 * us, "dur": 3 * us},
        {"ph": "b", "name": "req", "cat": "io", "id": 7, "pid": 100,
         "tid": 0, "ts": t0 + 38 * us},
        {"ph": "e", "name": "req", "cat": "io", "id": 7, "pid": 100,
         "tid": 0, "ts": t0 + 37 * us},
        {"ph": "i", "name": "other", "pid": 100, "tid": 101,
         "ts": t0 + 500, "s": "t"},
        {"ph": "i", "name": "again", "pid": 100, "tid": 101,
         "ts": t0 + 39 * us, "s": "t"},
        {"ph": "M", "name": "process_name", "pid": 100, "tid": 0,
         "args": {"name": "proc"}},
        {"ph": "M", "name": "process_sort_index", "pid": 100, "tid": 0,
         "args": {"sort_index": 5}},
        {"ph": "M", "name": "thread_name", "pid": 100, "tid": 101,
         "args": {"name": "main"}},
        {"ph": "M", "name": "process_name", "pid": 3, "tid": 0,
         "args": {"name": "GPU 3 (Fake)"}},
        {"ph": "M", "name": "thread_name", "pid": 3, "tid": 5,
         "args": {"name": "stream 5"}},
    ]
    return b"".join(p), want


def tprof(*args):
    p = subprocess.run([CLI] + list(args), capture_output=True, text=True)
    return p.returncode, p.stdout, p.stderr


def to_ns(events):
    """ts and dur in integer ns (they have exactly three decimals)."""
    out = []
    for e in events:
        e = dict(e)
        for k in ("ts", "dur"):
            if k in e:
                e[k] = round(e[k] * 1000)
        out.append(e)
    return out


def test_handmade(d):
    data, want = handmade()
    path = os.path.join(d, "hand.pftrace")
    with open(path, "wb") as f:
        f.write(data)
    out = os.path.join(d, "hand.json")
    rc, so, se = tprof("convert", path, "-o", out)
    eq("handmade: converts", (rc, so), (0, ""))
    if rc:
        return print(se)
    got = load(out)
    eq("handmade: base time", got["baseTimeNanoseconds"], BASE)
    eq("handmade: events, in order", to_ns(got["traceEvents"]), want)
    rc, so, se = tprof("check", path)
    check("handmade: check fails on the packet skipped for missing state",
          rc == 1 and "1 packets needing incremental state" in so, so)
    rc, so, se = tprof("check", "--foreign", path)
    check("handmade: --foreign: a warning", rc == 0 and
          "warning: Perfetto: 1 packets needing incremental state" in so
          and ": error" not in so, so)
    with gzip.open(path + ".gz", "wb") as f:
        f.write(data)
    rc, so, se = tprof("convert", path + ".gz", "-o", out + ".gz")
    eq("handmade: the gzipped file reads the same",
       (rc, load(out + ".gz") if not rc else None), (0, got))


def test_stream_names(d):
    """Every stream keeps its name, one per stream: GPU 0's stream
    4354685564936845355 and GPU 2's stream 1 (two (device, stream) pairs
    that an earlier reader's hash, pid * 0x9e3779b97f4a7c15 ^ tid, made
    one: the second lost its name), and a lane of GPU 2's stream ("stream
    1 (2)", tprof convert's track for a slice overlapping the stream's)
    adds no name of its own."""
    big = 2 * 0x9e3779b97f4a7c15 % 2**64 ^ 1
    p = [pkt(1, snapshot=clock(6, BOOT0) + clock(1, R0)),
         pkt(0, td=track(40, name="GPU 0")),
         pkt(0, td=track(41, parent=40, name="stream %d" % big)),
         pkt(0, td=track(42, name="GPU 2")),
         pkt(0, td=track(43, parent=42, name="stream 1")),
         pkt(0, td=track(44, parent=42, name="stream 1 (2)"))]
    for i, (uuid, name) in enumerate(((41, "a"), (43, "b"), (44, "c"))):
        p.append(pkt(1, ts=BOOT0 + 10 * i, clock=6,
                     te=ev(BEGIN, track=uuid, name=name)))
        p.append(pkt(1, ts=BOOT0 + 10 * i + 20, clock=6,
                     te=ev(END, track=uuid)))
    path = os.path.join(d, "streams.pftrace")
    with open(path, "wb") as f:
        f.write(b"".join(p))
    out = os.path.join(d, "streams.json")
    rc, _, se = tprof("convert", path, "-o", out)
    if not eq("stream names: converts", rc, 0):
        return print(se)
    evs = load(out)["traceEvents"]
    names = sorted((e["pid"], e["tid"], e["args"]["name"]) for e in evs
                   if e.get("name") == "thread_name")
    eq("stream names: one per stream, the lane's left out", names,
       [(0, big, "stream %d" % big), (2, 1, "stream 1")])
    eq("stream names: the lane's slice on its stream",
       sorted((e["pid"], e["tid"], e["name"]) for e in evs
              if e.get("ph") == "X"),
       [(0, big, "a"), (2, 1, "b"), (2, 1, "c")])


def test_bad(d):
    one = pkt(1, snapshot=clock(1, BASE) + fv(2, 1)) + \
        pkt(1, flags=CLEARED, interned=interned(names=[(1, "s")]))
    track_ = pkt(0, td=track(5, thread=(1, 2, "t")))
    backwards = one + track_ + \
        pkt(1, ts=BASE + 2000, flags=NEEDS, te=ev(BEGIN, track=5,
                                                name_iid=1)) + \
        pkt(1, ts=BASE + 1000, flags=NEEDS, te=ev(END, track=5))
    unmatched = one + track_ + pkt(1, ts=BASE + 5, flags=NEEDS,
                                   te=ev(END, track=5))
    head = one + track_ + \
        pkt(1, ts=BASE + 1000, flags=NEEDS, te=ev(BEGIN, track=5,
                                                name_iid=1))
    good = head + pkt(1, ts=BASE + 2000, flags=NEEDS, te=ev(END, track=5))
    # 2^62 ns past the base: its end or duration could overflow 64 bits
    # downstream (the summary's sums): skipped, and said.
    far = good + pkt(1, ts=BASE + (1 << 62), flags=NEEDS,
                     te=ev(INSTANT, track=5, name_iid=1))
    for label, data, mode, want in (
            ("far", far, "", "error: Perfetto: 1 TrackEvents more than 73 "
             "years (2^61 ns) from the trace's base (skipped)"),
            ("far", far, "--foreign", "warning: Perfetto: 1 TrackEvents "
             "more than 73 years"),
            ("unmatched", unmatched, "", "error: Perfetto: 1 SLICE_END "
             "events with no slice open on their track (left out)"),
            ("unmatched", unmatched, "--foreign", "warning: Perfetto: 1 "
             "SLICE_END events with no slice open on their track")):
        path = os.path.join(d, label + ".pftrace")
        with open(path, "wb") as f:
            f.write(data)
        rc, so, se = tprof("check", *([mode] if mode else []), path)
        check("check %s, %s: %r" % (mode, label, want),
              rc == (0 if mode else 1) and want in so, so + se)
    cases = [("good", good, 0, "ok (2 events)"),
             ("backwards", backwards, 1, 'negative "dur"'),
             ("truncated", good[:-3], 1,
              "offset %d: truncated packet: 3 bytes missing" % len(head)),
             ("bad length", good + b"\x0a\xff\xff\xff\xff\x0f", 1,
              "offset %d: a TracePacket of 4294967295 bytes" % len(good)),
             ("bad wire type", one + fb(1, b"\x0b\x00"), 1,
              "offset %d: TracePacket: unsupported wire type" %
              (len(one) + 3)),
             ("length past its message", one + fb(1, fb(11, b"")[:1] +
                                                  b"\x05\x00"), 1,
              "offset %d: TracePacket: length past the end" %
              (len(one) + 4))]
    for label, data, want_rc, want in cases:
        path = os.path.join(d, label.replace(" ", "_") + ".pftrace")
        with open(path, "wb") as f:
            f.write(data)
        rc, so, se = tprof("check", "--foreign", path)
        errors = [x for x in so.splitlines() if ": error: " in x]
        check("check, %s: exit %d, says %r" % (label, want_rc, want),
              rc == want_rc and want in so and
              len(errors) == want_rc, so + se)


def normalise(events):
    """What the Perfetto encoder does not keep (Known limits in
    docs/reference/perfetto-format.md): a counter's
    category, a device's sort index, an async range's id and thread (its
    track stands for them; ids are replaced by their range's begin time),
    the name on an async end."""
    out, begin = [], {}
    for e in events:
        if e.get("ph") == "b":
            k = (e.get("pid"), e.get("cat"), e["id"])
            begin[k] = min(begin.get(k, e["ts"]), e["ts"])
    for e in events:
        e = dict(e)
        if e.get("ph") == "C":
            e.pop("cat", None)
        if e.get("ph") == "M" and e.get("name") == "process_sort_index" \
                and e.get("pid", 1000) < 256:
            continue
        if e.get("ph") in ("b", "e"):
            e["id"] = begin.get((e.get("pid"), e.get("cat"), e["id"]))
            e["tid"] = 0
            if e["ph"] == "e":
                e.pop("name", None)
        out.append(json.dumps(e, sort_keys=True))
    return sorted(out)


def roundtrip(label, d, src):
    a = os.path.join(d, label + ".a.json.gz")
    p = os.path.join(d, label + ".pftrace.gz")
    b = os.path.join(d, label + ".b.json.gz")
    rcs = [tprof("convert", src, "-o", a)[0],
           tprof("convert", src, "-o", p)[0],
           tprof("convert", p, "-o", b)[0]]
    if not check(label + ": converts both ways", rcs == [0, 0, 0],
                 str(rcs)):
        return None, None
    ja, jb = load(a), load(b)
    na = normalise(ja["traceEvents"])
    nb = [x for x in normalise(jb["traceEvents"])
          if not ('"thread_name"' in x and '"stream ' in x) or x in na]
    check(label + ": JSON -> Perfetto -> JSON, the same events",
          na == nb and len(na) > 0,
          "%d/%d; only before: %s; only after: %s" % (
              len(na), len(nb), sorted(set(na) - set(nb))[:3],
              sorted(set(nb) - set(na))[:3]))
    keys = [k for k in ja if k not in ("traceEvents", "traceName")]
    eq(label + ": the same top-level members",
       {k: jb.get(k) for k in keys}, {k: ja[k] for k in keys})
    return a, p


def report_same(label, d, json_path, pf_path):
    """report --json and Markdown on the two forms of one trace."""
    dj, dp = os.path.join(d, label + "-j"), os.path.join(d, label + "-p")
    os.mkdir(dj)
    os.mkdir(dp)
    stem = os.path.basename(json_path)
    for sfx in (".trace.json.gz", ".pt.trace.json.gz", ".json.gz"):
        if stem.endswith(sfx):
            stem = stem[:-len(sfx)]
            break
    shutil.copy(json_path, os.path.join(dj, os.path.basename(json_path)))
    shutil.copy(pf_path, os.path.join(dp, stem + ".pftrace.gz"))
    for fmt in (["--json"], []):
        rj = subprocess.run([CLI, "report", "--traces"] + fmt + ["."],
                            cwd=dj, capture_output=True, text=True)
        rp = subprocess.run([CLI, "report", "--traces"] + fmt + ["."],
                            cwd=dp, capture_output=True, text=True)
        fj = rj.stdout.replace(os.path.basename(json_path), "FILE")
        fp = rp.stdout.replace(stem + ".pftrace.gz", "FILE")
        check("%s: report %s the same from JSON and Perfetto" %
              (label, " ".join(fmt) or "Markdown"),
              rj.returncode == 0 and rp.returncode == 0 and fj == fp and
              len(fj) > 200, "rc %d/%d: %s" % (
                  rj.returncode, rp.returncode,
                  [(x, y) for x, y in zip(fj.splitlines(),
                                          fp.splitlines()) if x != y][:2]
                  or rp.stderr))


def test_roundtrips(d):
    fx = os.path.join(d, "fixture.json")
    with open(fx, "w") as f:
        json.dump(test_convert.fixture(), f)
    _, p = roundtrip("convert fixture", d, fx)
    if p:
        rc, so, _ = tprof("check", p)
        eq("convert fixture: check on the .pftrace.gz",
           (rc, so.strip().endswith("ok (15 events)")), (0, True))
    runs = []
    for label, argv in (("cupti_feed", [prog("cupti_feed"), "full"]),
                        ("calls", [prog("calls"), "2", "3"]),
                        ("steps", [prog("steps"), "api", "4"]),
                        ("nvtx", [prog("nvtx_calls")])):
        r = run(argv, env={"TPROF_TRACE": "all"})
        runs.append(r)
        traces = [f for f in r.files() if f.endswith(".trace.json.gz")]
        if not check(label + ": one JSON trace", len(traces) == 1,
                     r.stderr):
            continue
        src = os.path.join(r.dir, traces[0])
        _, p = roundtrip(label, d, src)
        if not p:
            continue
        rc, so, _ = tprof("check", p)
        check(label + ": check passes on the .pftrace.gz", rc == 0, so)
        if label != "nvtx":
            report_same(label, d, src, p)
    for i, kw in enumerate(({"nccl": True, "unmatched_flows": 1,
                             "gpu_overlap": True},
                            {"string_tids": False, "profiler_span": True})):
        t, _ = kineto_fixture.make(rank=i, **kw)
        src = kineto_fixture.write(
            os.path.join(d, "kineto%d.pt.trace.json.gz" % i), t)
        # What convert keeps of a Kineto trace (not the events with a
        # string or empty pid) is the same data in both forms.
        a, p = roundtrip("kineto %d" % i, d, src)
        if p:
            rc, so, _ = tprof("check", "--foreign", p)
            rj, sj, _ = tprof("check", "--foreign", a)
            # (The counts differ by the device's sort index.)
            eq("kineto %d: check --foreign as on the JSON" % i,
               (rc, re.sub(r"ok \(\d+ events", "ok (", so.replace(p, "F"))),
               (rj, re.sub(r"ok \(\d+ events", "ok (", sj.replace(a, "F"))))
            report_same("kineto%d" % i, d, a, p)
    cleanup(*runs)


def test_library(d):
    """The library's own TPROF_FORMAT=perfetto files: check passes, and
    report reads them as it reads their JSON form."""
    runs = []
    for label, argv in (("cupti_feed", [prog("cupti_feed"), "full"]),
                        ("nvtx", [prog("nvtx_calls")])):
        r = run(argv, env={"TPROF_TRACE": "all",
                           "TPROF_FORMAT": "perfetto"})
        runs.append(r)
        pf = [f for f in r.files() if f.endswith(".pftrace.gz")]
        if not check(label + " (TPROF_FORMAT=perfetto): one .pftrace.gz",
                     len(pf) == 1, r.stderr):
            continue
        path = os.path.join(r.dir, pf[0])
        rc, so, _ = tprof("check", path)
        check(label + " (TPROF_FORMAT=perfetto): check passes",
              rc == 0 and ": ok (" in so, so)
        j = os.path.join(d, "lib-" + label + ".trace.json.gz")
        eq(label + " (TPROF_FORMAT=perfetto): converts to JSON",
           tprof("convert", path, "-o", j)[0], 0)
        report_same("lib-" + label, d, j, path)
        same_flows(label, argv, j)
    cleanup(*runs)


def flow_events(path):
    return sorted((e["ph"], e["name"], e["cat"], e["id"])
                  for e in load(path)["traceEvents"]
                  if e.get("ph") in ("s", "t", "f"))


def same_flows(label, argv, converted):
    """The library's Perfetto trace read back has the flows of its JSON
    trace of the same program: one "s" per launch, an "f" per GPU op
    (a graph's several ops end the one flow of their launch: the
    Perfetto trace's fan-out starts, id | k << 32, are folded back)."""
    r = run(argv, env={"TPROF_TRACE": "all"})
    traces = [f for f in r.files() if f.endswith(".trace.json.gz")]
    if check(label + " (JSON): one trace", len(traces) == 1, r.stderr):
        want = flow_events(os.path.join(r.dir, traces[0]))
        got = flow_events(converted)
        eq(label + " (TPROF_FORMAT=perfetto): read back, the flows of "
           "its JSON form (%d)" % len(want), got, want)
    cleanup(r)


def test_merge(d, pb):
    t0, _ = kineto_fixture.make(rank=0, nccl=True)
    t1, _ = kineto_fixture.make(rank=1, nccl=True)
    md = os.path.join(d, "merge")
    os.mkdir(md)
    srcs = []
    for i, t in enumerate((t0, t1)):
        j = kineto_fixture.write(os.path.join(d, "r%d.json.gz" % i), t)
        p = os.path.join(md, "job-rank%d.pftrace.gz" % i)
        eq("merge: input %d converts" % i,
           tprof("convert", j, "-o", p)[0], 0)
        srcs.append(p)
    out = os.path.join(md, "all.pftrace.gz")
    rc, so, se = tprof("merge", md, "-o", out)
    check("merge: two .pftrace.gz into a .pftrace.gz",
          rc == 0 and "(2 traces," in se and os.path.exists(out) and
          sorted(os.listdir(md)) == ["all.pftrace.gz", "job-rank0.pftrace.gz",
                                     "job-rank1.pftrace.gz"], se)
    rc, so, _ = tprof("check", "--foreign", out)
    eq("merge: the merged .pftrace.gz checks", rc, 0)
    back = os.path.join(d, "all.json")
    tprof("convert", out, "-o", back)
    evs = load(back)["traceEvents"] if os.path.exists(back) else []
    names = sorted(e["args"]["name"] for e in evs
                   if e.get("name") == "process_name")
    check("merge: processes named by rank",
          names and all(n.startswith(("rank 0: ", "rank 1: "))
                        for n in names) and
          {n[:7] for n in names} == {"rank 0:", "rank 1:"}, names)
    n_in = sum(len(t["traceEvents"]) for t in (t0, t1))
    check("merge: every input's slices there",
          sum(1 for e in evs if e["ph"] == "X") ==
          sum(1 for t in (t0, t1) for e in t["traceEvents"]
              if e.get("ph") == "X" and e.get("pid") not in ("", None)),
          "%d events from %d" % (len(evs), n_in))
    # A later merge of the directory leaves the merged file out.
    rc, so, se = tprof("merge", md, "-o", os.path.join(d, "again.json"))
    check("merge: the merged .pftrace.gz is left out of the directory",
          rc == 0 and "skipping" in se and "all.pftrace.gz" in se and
          "(2 traces," in se, se)
    # Mixed inputs, JSON out.
    mixed = os.path.join(d, "mixed.json.gz")
    rc, so, se = tprof("merge", srcs[0], os.path.join(d, "r1.json.gz"),
                       "-o", mixed)
    rc2, so2, _ = tprof("check", "--foreign", mixed)
    check("merge: JSON and Perfetto inputs into JSON",
          rc == 0 and rc2 == 0 and "(2 traces," in se, se + so2)
    if pb is None:
        return skip("merge: the merged .pftrace.gz with the official "
                    "schema", "no perfetto/protobuf modules")
    res, why = decode(pb, out)
    if not check("merge: decodes with the official schema",
                 res is not None, why):
        return
    tracks, pevs, flags, clocks = res
    procs = [t for t in tracks.values() if t.HasField("process")]
    pids = [t.process.pid for t in procs]
    check("merge: every event on a declared track, one track per process",
          pevs and all(e["track"] in tracks for e in pevs) and
          len(pids) == len(set(pids)) and len(pids) >= 2, str(pids))
    pnames = sorted(t.process.process_name for t in procs)
    check("merge: process tracks named by rank",
          pnames and {n[:7] for n in pnames} == {"rank 0:", "rank 1:"},
          pnames)


def test_lost(d):
    """Packets lost on a sequence (previous_packet_dropped): a slice
    begun before the loss is never paired with an end after it (that end
    may be another slice's whose begin was lost): left out and said,
    while a slice begun after the loss pairs as usual; the sequence's
    interned state is invalid until cleared again, as in
    trace_processor."""
    one = pkt(1, snapshot=clock(1, BASE) + fv(2, 1)) + \
        pkt(1, flags=CLEARED, interned=interned(names=[(1, "a"),
                                                       (2, "b")]))
    data = one + pkt(0, td=track(5, thread=(1, 2, "t"))) + \
        pkt(1, ts=BASE + 1000, flags=NEEDS, te=ev(BEGIN, track=5,
                                                name_iid=1)) + \
        pkt(1, ts=BASE + 2000, flags=NEEDS, lost=True,
            te=ev(INSTANT, track=5, name_iid=2)) + \
        pkt(1, flags=CLEARED, interned=interned(names=[(1, "a"),
                                                       (2, "b")])) + \
        pkt(1, ts=BASE + 3000, flags=NEEDS, te=ev(BEGIN, track=5,
                                                name_iid=2)) + \
        pkt(1, ts=BASE + 4000, flags=NEEDS, te=ev(END, track=5)) + \
        pkt(1, ts=BASE + 5000, flags=NEEDS, te=ev(END, track=5))
    path = os.path.join(d, "lost.pftrace")
    with open(path, "wb") as f:
        f.write(data)
    rc, so, se = tprof("check", path)
    check("check, lost packets: the slice open across them is an error",
          rc == 1 and "error: Perfetto: 1 slices open when packets of "
          "their sequence were lost (previous_packet_dropped): left out, "
          "never paired with an end after the loss" in so and
          "1 SLICE_END events with no slice open" in so, so + se)
    rc, so, se = tprof("check", "--foreign", path)
    check("check --foreign, lost packets: a warning", rc == 0 and
          "warning: Perfetto: 1 slices open when packets" in so, so + se)
    out = os.path.join(d, "lost.json")
    rc, so, se = tprof("convert", path, "-o", out)
    evs = [e for e in load(out)["traceEvents"] if e.get("ph") in "XBi"] \
        if rc == 0 else []
    eq("convert, lost packets: the instant that said it is skipped (no "
       "state), the slice across the loss left out, the one after kept",
       sorted((e["ph"], e["name"], e.get("dur")) for e in evs),
       [("X", "b", 1.0)])


def main():
    pb = schema()
    d = tempfile.mkdtemp(prefix="tprof-pfread-")
    try:
        test_handmade(d)
        test_stream_names(d)
        test_bad(d)
        test_lost(d)
        test_roundtrips(d)
        test_library(d)
        test_merge(d, pb)
    finally:
        shutil.rmtree(d, ignore_errors=True)
    done()


if __name__ == "__main__":
    main()
