"""Reading a Perfetto trace (a .pftrace or .pftrace.gz TracePacket
stream) with the official schema (perfetto_trace_pb2 from the `perfetto`
PyPI package, with `protobuf`), resolving interning and the incremental
clock as the schema documents them: shared by test_convert.py and
test_pftrace.py."""
import gzip
import json
import re

BIG_INT = re.compile(r"-?[1-9][0-9]{19,}")


def schema():
    """perfetto_trace_pb2, or None when the modules are missing."""
    try:
        from perfetto.protos.perfetto.trace import perfetto_trace_pb2
        return perfetto_trace_pb2
    except ImportError:
        return None


def annotation(pb, a, names, strs):
    """A DebugAnnotation as the JSON value it stands for."""
    if len(a.dict_entries):
        return {names[x.name_iid] if x.name_iid else x.name:
                annotation(pb, x, names, strs) for x in a.dict_entries}
    if len(a.array_values):
        return [annotation(pb, x, names, strs) for x in a.array_values]
    kind = a.WhichOneof("value")
    if kind == "string_value_iid":
        return strs[a.string_value_iid]
    if kind == "legacy_json_value":
        v = json.loads(a.legacy_json_value)
        # An integer past 64 bits: a string of its digits (Perfetto v58
        # misreads a bare one), read back as the number.
        if isinstance(v, str) and BIG_INT.fullmatch(v):
            return int(v)
        return v
    if kind is None:		# no value: tprof's null
        return None
    return getattr(a, kind)


def read_trace(pb, path):
    """The file (gzipped when it ends in .gz) as a perfetto Trace."""
    data = open(path, "rb").read()
    if path.endswith(".gz"):
        data = gzip.decompress(data)
    t = pb.Trace()
    t.ParseFromString(data)
    return t


def decode(pb, path):
    """The packets as (tracks, events), resolving interning and the
    incremental clock as the schema documents them."""
    t = read_trace(pb, path)
    names, cats, anames, strs = {}, {}, {}, {}
    tracks, evs, flags, clocks = {}, [], [], {}
    inc = None
    default_clock = None
    default_track = 0
    for p in t.packet:
        eq_seq = p.trusted_packet_sequence_id == 1
        if not eq_seq:
            return None, "packet without sequence 1"
        flags.append(p.sequence_flags)
        if p.HasField("clock_snapshot"):
            for c in p.clock_snapshot.clocks:
                clocks[c.clock_id] = c.timestamp
                if c.clock_id == 64:
                    inc = c.timestamp
        if p.HasField("trace_packet_defaults"):
            # New defaults replace the old ones whole, as Perfetto's
            # PacketSequenceStateGeneration::OnNewTracePacketDefaults.
            d = p.trace_packet_defaults
            default_clock = d.timestamp_clock_id
            default_track = d.track_event_defaults.track_uuid
        if p.sequence_flags & 1:
            names, cats, anames, strs = {}, {}, {}, {}
            if not p.HasField("trace_packet_defaults"):
                default_clock, default_track = None, 0
        idata = p.interned_data
        for x in idata.event_names:
            names[x.iid] = x.name
        for x in idata.event_categories:
            cats[x.iid] = x.name
        for x in idata.debug_annotation_names:
            anames[x.iid] = x.name
        for x in idata.debug_annotation_string_values:
            strs[x.iid] = x.str.decode()
        if p.HasField("track_descriptor"):
            d = p.track_descriptor
            tracks[d.uuid] = d
        if not p.HasField("track_event"):
            continue
        clock = p.timestamp_clock_id or default_clock
        if clock == 64:
            inc += p.timestamp
            ts = inc
        else:
            ts = p.timestamp
        te = p.track_event
        args = {}
        for a in te.debug_annotations:
            args[anames[a.name_iid] if a.name_iid else a.name] = \
                annotation(pb, a, anames, strs)
        # An event without track_uuid is on the sequence's default track
        # (TrackEventDefaults.track_uuid).
        track = te.track_uuid if te.HasField("track_uuid") else \
            default_track
        evs.append({"type": te.type, "track": track, "ts": ts,
                    "deftrack": not te.HasField("track_uuid"),
                    "name": names.get(te.name_iid, te.name) if
                    (te.name_iid or te.name) else None,
                    "cat": cats[te.category_iids[0]] if
                    len(te.category_iids) else None,
                    "args": args, "flow": list(te.flow_ids),
                    "term": list(te.terminating_flow_ids),
                    "cv": te.double_counter_value if
                    te.HasField("double_counter_value") else
                    te.counter_value})
    return (tracks, evs, flags, clocks), None


def track_key(tracks, uuid):
    d = tracks[uuid]
    if d.HasField("thread"):
        return ("thread", d.thread.pid, d.thread.tid, d.thread.thread_name)
    par = tracks[d.parent_uuid] if d.parent_uuid else None
    pname = None
    if par is not None:
        pname = par.process.process_name if par.HasField("process") \
            else par.name
    return ("track", pname, d.name, d.HasField("counter"))


def importer_nesting(evs):
    """As an importer reads the slices: each track's begins and ends
    sorted by time (stably), an end closing the innermost open slice.
    Every complete event (a begin with its end next on its track) must
    get its own end back, no end may find nothing open or come before its
    begin; returns that, and how many slices are left open."""
    per, want = {}, {}
    for i, e in enumerate(evs):
        if e["type"] not in (1, 2):
            continue
        lst = per.setdefault(e["track"], [])
        if e["type"] == 2 and lst and lst[-1][2] == 1 and \
                lst[-1][3] not in want:
            want[lst[-1][3]] = e["ts"]
        lst.append((e["ts"], len(lst), e["type"], i))
    ok, left = True, 0
    for lst in per.values():
        stack = []
        for ts, _, typ, i in sorted(lst):
            if typ == 1:
                stack.append((ts, i))
                continue
            if not stack or ts < stack[-1][0]:
                ok = False
                continue
            b, bi = stack.pop()
            if bi in want and want[bi] != ts:
                ok = False
        left += len(stack)
    return ok, left


def importer_slices(evs):
    """The slices as an importer builds them (see importer_nesting):
    sorted (track, name, ts, dur, depth), depth counted from 0 on each
    track."""
    per = {}
    for i, e in enumerate(evs):
        if e["type"] in (1, 2):
            per.setdefault(e["track"], []).append((e["ts"], i, e))
    out = []
    for track, lst in per.items():
        stack = []
        for ts, _, e in sorted(lst, key=lambda x: x[:2]):
            if e["type"] == 1:
                stack.append((e["name"], ts, len(stack)))
            elif stack:
                name, b, depth = stack.pop()
                out.append((track, name, b, ts - b, depth))
    return sorted(out, key=repr)


def importer_flows(evs):
    """The flows an importer links (Perfetto's FlowTracker, as its
    TrackEvent importer drives it): events in time order (stably); a
    flow_ids id not open begins a flow at the event, an open one links
    it to this event and stays open; a terminating id links an open flow
    and closes it, and is ignored when none is open. Returns the links
    as ((track, ts, name) from, (track, ts, name) to)."""
    open_, links = {}, []
    for _, _, e in sorted((e["ts"], i, e) for i, e in enumerate(evs)
                          if e["flow"] or e["term"]):
        here = (e["track"], e["ts"], e["name"])
        for f in e["flow"]:
            if f in open_:
                links.append((open_[f], here))
            open_[f] = here
        for f in e["term"]:
            if f in open_:
                links.append((open_.pop(f), here))
    return links
