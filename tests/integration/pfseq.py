"""Reading a Perfetto trace that may hold several packet sequences (a
recovered trace: the killed writer's sequence, then the recovery's; a
flight dump: one chunk after another, each clearing the incremental
state), strictly, with the official schema (perfetto_trace_pb2): each
sequence's interned strings and incremental clock are its own; a packet
that needs incremental state before its sequence cleared it, an
interned id not defined on its sequence, a track used before its
descriptor, or a slice end without a begin on its track is an error, as
it is for Perfetto's importer. Complete slices are paired per track."""
import json

from pftrace import annotation, read_trace


class Bad(Exception):
    pass


def decode(pb, path):
    """{"tracks": {uuid: descriptor}, "slices": [...], "instants": [...],
    "meta": the trailer's JSON or None, "seqs": [ids in order]}; raises
    Bad on what an importer would reject."""
    t = read_trace(pb, path)
    seqs, tracks, slices, instants, open_ = {}, {}, [], [], {}
    meta = None
    typed = None
    order = []
    for i, p in enumerate(t.packet):
        sid = p.trusted_packet_sequence_id
        if not sid:
            raise Bad("packet %d has no sequence" % i)
        if sid not in seqs:
            order.append(sid)
            seqs[sid] = {"valid": False, "clocks": {}, "default": None,
                         "deftrack": 0}
        s = seqs[sid]
        if p.HasField("clock_snapshot"):
            for c in p.clock_snapshot.clocks:
                s["clocks"][c.clock_id] = c.timestamp
        if p.sequence_flags & 1:
            # A cleared state drops the defaults too, as Perfetto's
            # PacketSequenceStateGeneration::OnIncrementalStateCleared.
            s.update(valid=True, names={}, cats={}, anames={}, strs={},
                     default=None, deftrack=0)
        if p.HasField("trace_packet_defaults"):
            # New defaults replace the old ones whole.
            d = p.trace_packet_defaults
            s["default"] = d.timestamp_clock_id
            s["deftrack"] = d.track_event_defaults.track_uuid
        needs = p.sequence_flags & 2
        if needs and not s["valid"]:
            raise Bad("packet %d of sequence %d needs incremental state "
                      "never cleared" % (i, sid))
        idata = p.interned_data
        for x in idata.event_names:
            s["names"][x.iid] = x.name
        for x in idata.event_categories:
            s["cats"][x.iid] = x.name
        for x in idata.debug_annotation_names:
            s["anames"][x.iid] = x.name
        for x in idata.debug_annotation_string_values:
            s["strs"][x.iid] = x.str.decode()
        if p.HasField("track_descriptor"):
            tracks[p.track_descriptor.uuid] = p.track_descriptor
        if not p.HasField("track_event"):
            continue
        clock = p.timestamp_clock_id or s["default"]
        if clock is None:
            raise Bad("packet %d: no clock" % i)
        if clock == 64:
            s["clocks"][64] += p.timestamp
            ts = s["clocks"][64]
        elif clock == 65:
            ts = p.timestamp
        else:
            raise Bad("packet %d: clock %d" % (i, clock))
        te = p.track_event
        # An event without track_uuid is on the sequence's default track
        # (TrackEventDefaults.track_uuid).
        track = te.track_uuid if te.HasField("track_uuid") else \
            s["deftrack"]
        if track not in tracks:
            raise Bad("packet %d: track %d not declared" % (i, track))
        try:
            name = s["names"][te.name_iid] if te.name_iid else \
                (te.name or None)
            cat = s["cats"][te.category_iids[0]] if \
                len(te.category_iids) else None
            args = {}
            for a in te.debug_annotations:
                key = s["anames"][a.name_iid] if a.name_iid else a.name
                args[key] = annotation(pb, a, s["anames"], s["strs"])
        except KeyError as e:
            raise Bad("packet %d of sequence %d: interned id %s not "
                      "defined" % (i, sid, e))
        ev = {"track": track, "ts": ts, "name": name, "cat": cat,
              "args": args, "seq": sid}
        if te.type == 1:
            open_.setdefault(track, []).append(ev)
        elif te.type == 2:
            st = open_.get(track)
            if not st:
                raise Bad("packet %d: slice end without begin" % i)
            b = st.pop()
            b["dur"] = ts - b["ts"]
            if b["dur"] < 0:
                raise Bad("packet %d: slice ends before it begins" % i)
            slices.append(b)
        elif te.type == 3:
            instants.append(ev)
            if name == "tprof metadata":
                meta = args.get("trailer")
                typed = [len(a.dict_entries) > 0 for a in te.debug_annotations]
    return {"tracks": tracks, "slices": slices, "instants": instants,
            "meta": meta, "seqs": order, "meta_typed": typed,
            "open": sum(len(v) for v in open_.values())}


def thread_of(d, uuid):
    td = d["tracks"][uuid]
    return td.thread.tid if td.HasField("thread") else None


def as_json(d):
    """The slices on thread tracks as the JSON trace's X events (pid, tid,
    ts and dur in µs, args), sorted as the writer's order is not."""
    out = []
    for s in d["slices"]:
        td = d["tracks"][s["track"]]
        if not td.HasField("thread"):
            continue
        out.append({"ph": "X", "name": s["name"], "cat": s["cat"],
                    "pid": td.thread.pid, "tid": td.thread.tid,
                    "ts": s["ts"] / 1e3, "dur": s["dur"] / 1e3,
                    "args": s["args"]})
    return out
