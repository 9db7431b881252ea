#!/usr/bin/env python3
"""Where trace_processor's import of a tprof Perfetto trace spends its
time: variants of one trace, each without one feature of the encoding,
and (with --tp) the import's CPU time of each.

usage: pftrace_variants.py IN.pftrace.gz OUTDIR [--json IN.trace.json.gz]
                           [--tp TRACE_PROCESSOR_SHELL] [--rounds N]

Variants (OUTDIR/NAME.pftrace.gz, gzip level 1 as tprof writes):
  asis       parsed and written again unchanged (the control)
  noargs     no debug annotations: the args' share of the import
  inline     annotation names and string values inline, not interned:
             what the interned lookups cost (or save)
  absts      every timestamp absolute on REALTIME, the trace clock:
             what converting clock 64/65 costs
  nodefault  a track_uuid on every event, no default track
  noend      no SLICE_END packets (slices left open): the fixed cost of
             a packet, for a diagnosis only
  ext        numeric and bool args (and arrays of integers) as fields of
             a TrackEvent extension named "debug", one message per
             distinct run of args, its descriptor in the trace
             (ExtensionDescriptor): the same keys, reflected with keys
             cached per field path instead of built and interned per arg
  extall     the same with strings (inline) and pointers (as uint64, so
             their type changes: a diagnosis only)
and, with --json, json.trace.json.gz (the JSON as written) and
json-noargs.trace.json.gz (its events without "args").

Diagnostic only (never run by the tests): it needs the `perfetto` and
`protobuf` modules; a trace of 250k calls takes a few seconds a variant
(1M calls: about 10 s and 2 GB of memory each)."""
import argparse
import gzip
import os
import re
import resource
import subprocess
import sys
import tempfile

REALTIME = 1
INC_CLEARED = 1
SLICE_END = 2


def load(path):
    from perfetto.protos.perfetto.trace import perfetto_trace_pb2 as pb
    t = pb.Trace()
    op = gzip.open if path.endswith(".gz") else open
    with op(path, "rb") as f:
        t.ParseFromString(f.read())
    return t


def write(t, path):
    with gzip.open(path, "wb", compresslevel=1) as f:
        f.write(t.SerializeToString())


def per_seq(t):
    """Yields (packet, sequence state), the state a dict per sequence:
    its interned annotation names and string values, emptied when the
    packet clears the incremental state."""
    seqs = {}
    for p in t.packet:
        s = seqs.setdefault(p.trusted_packet_sequence_id, {})
        if p.sequence_flags & INC_CLEARED or p.incremental_state_cleared:
            s.clear()
        if p.HasField("interned_data"):
            d = p.interned_data
            for e in d.debug_annotation_names:
                s[("n", e.iid)] = e.name
            for e in d.debug_annotation_string_values:
                s[("s", e.iid)] = e.str
        yield p, s


def noargs(t):
    """(tprof's metadata instant keeps its trailer.)"""
    for p in t.packet:
        if p.HasField("track_event") and \
                p.track_event.name != "tprof metadata":
            del p.track_event.debug_annotations[:]


def inline_annotation(a, s):
    if a.name_iid:
        a.name = s.get(("n", a.name_iid), "?")
    if a.string_value_iid:
        a.string_value = s.get(("s", a.string_value_iid), b"").decode(
            "utf-8", "replace")
    for x in a.dict_entries:
        inline_annotation(x, s)
    for x in a.array_values:
        inline_annotation(x, s)


def inline(t):
    for p, s in per_seq(t):
        if p.HasField("track_event"):
            for a in p.track_event.debug_annotations:
                inline_annotation(a, s)


def absts(t):
    """Clock 64 (incremental) and 65 (absolute), both sequence-scoped,
    rewritten as REALTIME through the sequence's snapshot."""
    st = {}
    for p in t.packet:
        s = st.setdefault(p.trusted_packet_sequence_id,
                          {"inc": 0, "off": 0, "def": 64})
        if p.HasField("clock_snapshot"):
            c = {x.clock_id: x.timestamp for x in p.clock_snapshot.clocks}
            if 64 in c and REALTIME in c:
                s["inc"] = c[64]
                s["off"] = c[REALTIME] - c[64]
        if p.HasField("trace_packet_defaults"):
            s["def"] = p.trace_packet_defaults.timestamp_clock_id
            p.trace_packet_defaults.ClearField("timestamp_clock_id")
        if not p.HasField("timestamp") or p.HasField("clock_snapshot"):
            continue
        cid = p.timestamp_clock_id or s["def"]
        if cid == 64:
            s["inc"] += p.timestamp
            v = s["inc"]
        elif cid == 65:
            v = p.timestamp
        else:
            continue
        p.timestamp = v + s["off"]
        p.timestamp_clock_id = REALTIME


def nodefault(t):
    cur = {}
    for p in t.packet:
        q = p.trusted_packet_sequence_id
        if p.sequence_flags & INC_CLEARED:
            cur[q] = 0
        if p.HasField("trace_packet_defaults"):
            d = p.trace_packet_defaults
            if d.HasField("track_event_defaults"):
                cur[q] = d.track_event_defaults.track_uuid
                d.ClearField("track_event_defaults")
        if p.HasField("track_event") and \
                not p.track_event.HasField("track_uuid") and cur.get(q):
            p.track_event.track_uuid = cur[q]


def noend(t):
    keep = [p for p in t.packet if not (p.HasField("track_event") and
                                        p.track_event.type == SLICE_END)]
    del t.packet[:]
    t.packet.extend(keep)


# --- ext: args as a TrackEvent extension, its descriptor in the trace ---
#
# trace_processor reflects TrackEvent's extension fields into args with
# the keys cached per field path (util/proto_to_args_parser.cc), where a
# debug annotation's key is built and interned per arg. An extension
# field named "debug" gives the same keys ("debug.grid[0]"). Each
# distinct run of args (names, types, arrays) is a message of its own,
# extension EXT_BASE + k; the descriptor set is one ExtensionDescriptor
# packet at the trace's start.

SCALAR = {"int_value": 3, "uint_value": 4, "double_value": 1,
          "bool_value": 8}		# FieldDescriptorProto.Type
STRING, UINT64 = 9, 4
# TrackEvent's extension numbers: 1000-2999 are Chromium's and Android's,
# already in trace_processor's pool (a number it knows with another wire
# type fails the import); 3100-4999 are unallocated (Perfetto's
# protos/perfetto/trace/extensions.json).
EXT_BASE = 4000


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


def field_bytes(num, typ, v):
    import struct
    if typ == 1:
        return varint(num << 3 | 1) + struct.pack("<d", v)
    if typ == STRING:
        b = v.encode() if isinstance(v, str) else v
        return varint(num << 3 | 2) + varint(len(b)) + b
    return varint(num << 3) + varint(int(v))


def movable(a, s, strings):
    """(name, type, repeated, values) of an annotation the extension can
    hold, else None."""
    name = a.name or s.get(("n", a.name_iid))
    if name is None:
        return None
    kind = a.WhichOneof("value")
    if kind in SCALAR:
        return name, SCALAR[kind], False, [getattr(a, kind)]
    if strings and kind == "string_value":
        return name, STRING, False, [a.string_value]
    if strings and kind == "string_value_iid":
        return name, STRING, False, [s.get(("s", a.string_value_iid), b"")]
    if strings and kind == "pointer_value":
        return name, UINT64, False, [a.pointer_value]
    if a.array_values and not a.dict_entries:
        kinds = {x.WhichOneof("value") for x in a.array_values}
        if len(kinds) == 1 and next(iter(kinds)) in SCALAR and \
                next(iter(kinds)) != "double_value":
            k = next(iter(kinds))
            return name, SCALAR[k], True, [getattr(x, k)
                                           for x in a.array_values]
    return None


def ext(t, strings=False):
    from google.protobuf import descriptor_pb2
    schemas = {}
    fds = descriptor_pb2.FileDescriptorSet()
    f = fds.file.add(name="tprof_args.proto", package="tprof")
    for p, s in per_seq(t):
        te = p.track_event if p.HasField("track_event") else None
        if te is None or not te.debug_annotations or \
                te.name == "tprof metadata":
            continue
        moved, kept = [], []
        for a in te.debug_annotations:
            m = movable(a, s, strings)
            (moved if m else kept).append(m or a)
        if not moved:
            continue
        key = tuple((m[0], m[1], m[2]) for m in moved)
        k = schemas.get(key)
        if k is None:
            k = schemas[key] = len(schemas)
            msg = f.message_type.add(name="A%d" % k)
            for i, (name, typ, rep) in enumerate(key):
                fd = msg.field.add(name=name, number=i + 1, type=typ,
                                   label=3 if rep else 1)
                if rep:
                    fd.options.packed = False
            f.extension.add(name="debug", number=EXT_BASE + k, type=11,
                            label=1, type_name=".tprof.A%d" % k,
                            extendee=".perfetto.protos.TrackEvent")
        body = b"".join(field_bytes(i + 1, m[1], v)
                        for i, m in enumerate(moved) for v in m[3])
        raw = varint((EXT_BASE + k) << 3 | 2) + varint(len(body)) + body
        keep = [type(a)() for a in kept]
        for x, a in zip(keep, kept):
            x.CopyFrom(a)
        del te.debug_annotations[:]
        te.debug_annotations.extend(keep)
        te.MergeFromString(raw)
    first = type(t.packet[0])()
    first.extension_descriptor.extension_set.ParseFromString(
        fds.SerializeToString())
    t.packet.insert(0, first)


VARIANTS = {"asis": None, "noargs": noargs, "inline": inline,
            "absts": absts, "nodefault": nodefault, "noend": noend,
            "ext": ext, "extall": lambda t: ext(t, strings=True)}

ARGS = re.compile(rb',"args":\{.*\}\}(,?)$')


def json_noargs(src, dst):
    """The library writes one event a line: an event's args are the last
    member of its line."""
    with gzip.open(src, "rb") as f, gzip.open(dst, "wb", compresslevel=1) as o:
        for line in f:
            end = line.endswith(b"\n")
            body = line.rstrip(b"\n")
            if body.startswith(b'{"ph":"X"'):
                body = ARGS.sub(rb"}\1", body)
            o.write(body + (b"\n" if end else b""))


def cpu_of(tp, path):
    """The CPU seconds (user + sys) of one import: select count(*) from
    slice, the count returned too."""
    with tempfile.NamedTemporaryFile("w", suffix=".sql") as q:
        q.write("select count(*) from slice;\n")
        q.flush()
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        p = subprocess.run([tp, "-q", q.name, path], capture_output=True)
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if p.returncode:
        sys.exit("%s failed on %s: %s" % (tp, path, p.stderr[-500:]))
    return (after.ru_utime - before.ru_utime +
            after.ru_stime - before.ru_stime,
            p.stdout.split()[-1].decode())


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("trace")
    ap.add_argument("outdir")
    ap.add_argument("--json")
    ap.add_argument("--tp")
    ap.add_argument("--rounds", type=int, default=3)
    a = ap.parse_args()
    os.makedirs(a.outdir, exist_ok=True)
    out = []
    for name, fn in VARIANTS.items():
        t = load(a.trace)
        if fn:
            fn(t)
        path = os.path.join(a.outdir, name + ".pftrace.gz")
        write(t, path)
        out.append((name, path))
        del t
    if a.json:
        out.append(("json", a.json))
        path = os.path.join(a.outdir, "json-noargs.trace.json.gz")
        json_noargs(a.json, path)
        out.append(("json-noargs", path))
    if not a.tp:
        for name, path in out:
            print(name, path)
        return
    times = {name: [] for name, _ in out}
    counts = {}
    for _ in range(a.rounds):
        for name, path in out:
            cpu, n = cpu_of(a.tp, path)
            times[name].append(cpu)
            counts[name] = n
    med = {k: sorted(v)[len(v) // 2] for k, v in times.items()}
    print("%-12s %8s %8s %10s  %s" % ("variant", "cpu_s", "vs_asis",
                                      "slices", "bytes"))
    for name, path in out:
        print("%-12s %8.2f %8.2f %10s  %d" % (
            name, med[name], med[name] / med["asis"], counts[name],
            os.path.getsize(path)))


if __name__ == "__main__":
    main()
