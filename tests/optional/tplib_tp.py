"""Perfetto's trace_processor_shell, driven from the tests: a trace's
tables as Python rows.

The shell prints the last statement's result as CSV with strings in
quotes and nothing escaped, so every query here returns one cell: its
rows as a JSON array made by SQLite (json_group_array), which escapes
what it holds. The cell is the second line, less its outer quotes."""
import json
import os
import shutil
import subprocess
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(
    os.path.abspath(__file__))))


def find_shell():
    """TRACE_PROCESSOR, else trace_processor_shell on PATH, else the one
    scripts/build-trace-processor.sh leaves in build-tp/."""
    path = os.environ.get("TRACE_PROCESSOR") or \
        shutil.which("trace_processor_shell") or \
        os.path.join(ROOT, "build-tp", "trace_processor_shell")
    return path if os.access(path, os.X_OK) else None


class Shell:
    def __init__(self, path):
        self.path = path

    def version(self):
        p = subprocess.run([self.path, "--version"], capture_output=True,
                           text=True, timeout=60)
        return (p.stdout + p.stderr).strip().splitlines()[0]

    def rows(self, trace, cols, rest):
        """SELECT cols rest, as a list of lists. Raises on any error the
        shell reports (its status, or text on stderr that says error)."""
        sql = "select json_group_array(json_array(%s)) from (select %s %s);" \
            % (", ".join("c%d" % i for i in range(len(cols))),
               ", ".join("%s as c%d" % (c, i) for i, c in enumerate(cols)),
               rest)
        with tempfile.NamedTemporaryFile("w", suffix=".sql",
                                         delete=False) as f:
            f.write(sql)
        try:
            p = subprocess.run([self.path, "-q", f.name, trace],
                               capture_output=True, text=True, timeout=600)
        finally:
            os.unlink(f.name)
        lines = p.stdout.splitlines()
        if p.returncode != 0 or len(lines) < 2:
            raise RuntimeError("trace_processor_shell exit %d on %s: %s"
                               % (p.returncode, trace,
                                  (p.stderr or p.stdout)[-2000:]))
        cell = lines[-1]
        if cell.startswith('"') and cell.endswith('"'):
            cell = cell[1:-1]
        return json.loads(cell)


def errors(sh, trace):
    """The import's errors and data losses: stats rows of those severities
    with a value (trace_processor counts each problem it meets there)."""
    return sh.rows(trace, ["name", "idx", "severity", "source", "value"],
                   "from stats where value > 0 and severity in "
                   "('error', 'data_loss') order by name")


def slices(sh, trace):
    """Every slice with its track: the thread's tid and name on a thread
    track; the track's and its parent's names on a named track; the
    process's pid and name on a process-scoped (async) track."""
    return [dict(zip(("id", "ts", "dur", "name", "cat", "depth", "parent",
                      "args", "track", "tname", "pname", "tid", "thname",
                      "pid", "prname", "apid", "aprname"), r))
            for r in sh.rows(trace, [
                "s.id", "s.ts", "s.dur", "s.name", "s.category", "s.depth",
                "s.parent_id", "s.arg_set_id", "s.track_id", "t.name",
                "coalesce(pt.name, ppr.name, tpr.name)", "th.tid",
                "th.name", "pr.pid",
                "pr.name",
                "apr.pid", "apr.name"],
                "from slice s join track t on s.track_id = t.id "
                "left join track pt on t.parent_id = pt.id "
                "left join process_track ppt on ppt.id = t.parent_id "
                "left join process ppr on ppr.upid = ppt.upid "
                "left join thread_track ptt on ptt.id = t.parent_id "
                "left join thread pth on pth.utid = ptt.utid "
                "left join process tpr on tpr.upid = pth.upid "
                "left join thread_track tt on tt.id = s.track_id "
                "left join thread th on th.utid = tt.utid "
                "left join process pr on pr.upid = th.upid "
                "left join process_track at on at.id = s.track_id "
                "left join process apr on apr.upid = at.upid "
                "order by s.ts, s.id")]


def args(sh, trace):
    """arg_set_id -> {key: value} for the slices' args, keys without the
    importer's prefix ("debug." for Perfetto annotations, "args." for
    JSON)."""
    out = {}
    for aid, key, iv, sv, rv, vt in sh.rows(
            trace, ["arg_set_id", "key", "int_value", "string_value",
                    "real_value", "value_type"],
            "from args where arg_set_id in (select arg_set_id from slice)"):
        for pre in ("debug.", "args."):
            if key.startswith(pre):
                key = key[len(pre):]
                break
        else:
            continue
        if vt in ("uint", "pointer") and iv is not None and iv < 0:
            iv += 1 << 64		# kept as int64
        v = {"int": iv, "uint": iv, "pointer": iv, "bool": iv,
             "real": rv}.get(vt, sv)
        out.setdefault(aid, {})[key] = v
    return out


def flows(sh, trace):
    return sh.rows(trace, ["slice_out", "slice_in"], "from flow")


def counters(sh, trace):
    """(track name, parent track or process name, ts, value)."""
    return sh.rows(trace, ["t.name", "coalesce(pt.name, pr.name)", "c.ts",
                           "c.value"],
                   "from counter c join track t on c.track_id = t.id "
                   "left join track pt on t.parent_id = pt.id "
                   "left join process_counter_track pc on pc.id = t.id "
                   "left join process pr on pr.upid = pc.upid "
                   "order by c.ts, t.name")


def names(sh, trace):
    """Process names, top-level named tracks (GPU devices; not the track
    of tprof's metadata instant) and thread names (not the importer's
    own thread 0, "swapper")."""
    procs = [r[0] for r in sh.rows(trace, ["name"],
                                   "from process where name is not null")]
    tops = [r[0] for r in sh.rows(
        trace, ["name"], "from track where parent_id is null and name "
        "is not null and id not in (select id from process_track) and "
        "id not in (select id from thread_track) and "
        "id not in (select id from counter_track) and "
        "name != 'tprof metadata'")]
    threads = [r[0] for r in sh.rows(trace, ["name"],
                                     "from thread where name is not null and tid != 0")]
    return procs, tops, threads
