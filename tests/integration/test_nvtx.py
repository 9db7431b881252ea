"""NVTX through the injection interface: push/pop ranges as strictly nested
X events, domains, registered strings, categories, colours, payloads,
marks, start/end across threads, thread names, unbalanced pops, and the
TPROF_TRACE word. The program uses the real NVTX v3 header-only library."""
import glob
import os

from tplib import (BIN, LIB, check, cleanup, done, eq, load, nesting_ok,
                   prog, raw, run, span_ns, tprof_check, xevents)

PROG = prog("nvtx_calls")
UA = "user_annotation"


def trace_of(r):
    files = glob.glob(os.path.join(r.dir, "*.trace.json.gz"))
    return load(files[0]) if len(files) == 1 else None


def ua(t, ph=None):
    return [e for e in t["traceEvents"] if e.get("cat") == UA and
            (ph is None or e["ph"] == ph)]


def one(evs, name, what):
    got = [e for e in evs if e.get("name") == name]
    check("nvtx: one %s %r" % (what, name), len(got) == 1,
          "found %d" % len(got))
    return got[0] if got else {}


def inside(a, b):
    """a lies within b, in integer ns, on the same track."""
    (s, e), (bs, be) = span_ns(a), span_ns(b)
    return (a["pid"], a["tid"]) == (b["pid"], b["tid"]) and bs <= s and e <= be


r = run([PROG])
eq("nvtx: program exit code unchanged", r.rc, 0)
eq("nvtx: push/pop return the NVTX levels",
   [l for l in r.stdout.splitlines() if l.startswith(("push", "pop"))],
   ["push outer 0", "push inner 1", "pop inner 1", "pop outer 0",
    "pop extra -1", "pop extra -1"])
check("nvtx: same name gives the same domain", "same domain 1" in r.stdout,
      r.stdout)
t = trace_of(r)
check("nvtx: one trace", t is not None, str(r.files()))
t = t or {"traceEvents": [], "tprof": {}}
path = glob.glob(os.path.join(r.dir, "*.trace.json.gz"))[0]
tprof_check(path, "nvtx: tprof check")
check("nvtx: strict nesting of every X on each thread", nesting_ok(t))
main_tid = [e for e in t["traceEvents"] if e.get("name") == "outer"]
main_tid = main_tid[0]["tid"] if main_tid else -1

xs = ua(t, "X")
outer = one(xs, "outer", "range")
inner = one(xs, 'inner "quoted"\n', "range")
check("nvtx: inner range nests in outer", inner and outer and
      inside(inner, outer))
malloc = [e for e in xevents(t, "cudaMalloc")]
free = [e for e in xevents(t, "cudaFree")]
check("nvtx: cudaMalloc made inside the inner range lies in it",
      len(malloc) == 1 and inner and inside(malloc[0], inner))
check("nvtx: cudaFree after the inner pop lies in outer, not in inner",
      len(free) == 1 and inside(free[0], outer) and not inside(free[0], inner))
eq("nvtx: ranges are on the calling thread", {inner.get("tid"),
                                              outer.get("tid")}, {main_tid})

ex = one(xs, "ex range", "range")
eq("nvtx: Ex attributes: colour, named category, int64 payload",
   ex.get("args"), {"color": "#12ab34", "category": "cat five",
                    "payload": -42})
marks = ua(t, "i")
m = one(marks, "ex double", "mark")
eq("nvtx: mark with numeric category and double payload", m.get("args"),
   {"category": 9, "payload": 2.5})
eq("nvtx: marks are thread-scoped instants", m.get("s"), "t")
check("nvtx: the Ex mark lies in the Ex range", m and ex and inside(m, ex))
one(marks, "a mark", "mark")
one(xs, "wide \u00e9\u4e2d", "range (wide message as UTF-8)")

ind = one(xs, "in domain", "range")
eq("nvtx: domain name in args", ind.get("args"), {"domain": "my domain"})
reg = [e for e in xs if e["name"] == "registered"]
check("nvtx: registered string names a domain range nested in its parent",
      len(reg) == 1 and inside(reg[0], ind))
dm = one(marks, "registered", "domain mark")
eq("nvtx: domain mark with the domain's named category", dm.get("args"),
   {"domain": "my domain", "category": "domain cat"})

d_outer = one(xs, "d outer", "range")
e_inner = one(xs, "e inner", "range")
eq("nvtx: a range of another domain still open when its enclosing range "
   "ends is clipped", e_inner.get("args"), {"domain": "other", "clipped": 1})
check("nvtx: the clipped range ends with its enclosing one",
      d_outer and e_inner and inside(e_inner, d_outer) and
      round((e_inner["ts"] + e_inner["dur"]) * 1000) ==
      round((d_outer["ts"] + d_outer["dur"]) * 1000))

bs, es = ua(t, "b"), ua(t, "e")
da = one(bs, "d async", "async begin")
cross = one(bs, "crossing", "async begin")
eq("nvtx: async begins and ends pair by id",
   sorted(e["id"] for e in bs), sorted(e["id"] for e in es))
ce = [e for e in es if e["id"] == cross.get("id")]
check("nvtx: start/end across threads: begin on main, end on another",
      cross.get("tid") == main_tid and len(ce) == 1 and
      ce[0]["tid"] != main_tid and ce[0]["ts"] >= cross["ts"],
      str((cross, ce)))
eq("nvtx: domain async range carries its domain", da.get("args"),
   {"domain": "my domain"})
w = one(xs, "worker range", "range")
check("nvtx: a thread's range is on its own track",
      w and w["tid"] not in (main_tid, -1))

names = [e for e in t["traceEvents"] if e["ph"] == "M" and
         e["name"] == "thread_name" and e["tid"] == main_tid]
eq("nvtx: nvtxNameOsThread names the thread track (once)",
   [e["args"]["name"] for e in names], ["renamed main"])

big = [e for e in xs if e["name"].startswith("xxxx")]
check("nvtx: a long message is cut at 1199 bytes and marked",
      len(big) == 1 and len(big[0]["name"]) == 1199 and
      big[0]["args"] == {"truncated": 1})
never = one(xs, "never popped", "range")
eq("nvtx: a range open at exit is written as unclosed", never.get("args"),
   {"unclosed": 1})
st = t["tprof"].get("nvtx", {})
eq("nvtx: stats", {k: st.get(k) for k in
                   ("injection", "unmatched_pops", "clipped", "unclosed",
                    "truncated", "async_starts", "async_ends")},
   {"injection": "on", "unmatched_pops": 2, "clipped": 1, "unclosed": 1,
    "truncated": 1, "async_starts": 2, "async_ends": 2})
eq("nvtx: ranges counted", st.get("ranges"), len(xs))
eq("nvtx: no tprof output but the exit line",
   [l for l in r.other_lines() if l.startswith("tprof:") and
    "wrote" not in l], [])
cleanup(r)

# TPROF_TRACE switches the source.
r = run([PROG, "basic"], env={"TPROF_TRACE": "cuda"})
t = trace_of(r) or {"traceEvents": [], "tprof": {}}
eq("nvtx: TPROF_TRACE=cuda records no annotation", len(ua(t)), 0)
check("nvtx: TPROF_TRACE=cuda still records CUDA calls",
      len(xevents(t, "cudaMalloc")) == 1)
eq("nvtx: TPROF_TRACE=cuda: injection off and says why",
   t["tprof"].get("nvtx", {}).get("injection"), "off: not in TPROF_TRACE")
cleanup(r)
r = run([PROG, "basic"], env={"TPROF_TRACE": "nvtx"})
t = trace_of(r) or {"traceEvents": []}
eq("nvtx: TPROF_TRACE=nvtx records the ranges and marks",
   sorted(e["name"] for e in ua(t)),
   sorted(["outer", 'inner "quoted"\n', "ex range", "ex double", "a mark",
           "wide \u00e9\u4e2d"]))
eq("nvtx: TPROF_TRACE=nvtx records no CUDA call",
   len([e for e in t["traceEvents"] if e.get("cat") == "cuda_runtime"]), 0)
cleanup(r)

# Another tool's injection is left alone, and we say so once.
other = "/nonexistent/libothertool.so"
r = run([PROG, "basic"], env={"NVTX_INJECTION64_PATH": other})
t = trace_of(r) or {"traceEvents": [], "tprof": {}}
warn = [l for l in r.lines() if "NVTX_INJECTION64_PATH" in l]
check("nvtx: NVTX_INJECTION64_PATH set elsewhere: one warning naming it",
      len(warn) == 1 and warn[0].startswith("tprof: warning: ") and
      other in warn[0] and "unset" in warn[0], str(r.lines()))
eq("nvtx: ... and no annotation recorded", len(ua(t)), 0)
eq("nvtx: ... and the program is unharmed", r.rc, 0)
eq("nvtx: ... and the trace says why", t["tprof"].get("nvtx", {}).get(
    "injection"), "off: NVTX_INJECTION64_PATH names another tool")
cleanup(r)
r = run([PROG, "basic"], env={"NVTX_INJECTION64_PATH": os.path.abspath(LIB)})
t = trace_of(r) or {"traceEvents": []}
eq("nvtx: NVTX_INJECTION64_PATH already naming libtprof.so: no warning",
   [l for l in r.lines() if "NVTX_INJECTION64_PATH" in l], [])
eq("nvtx: ... and ranges recorded", len(ua(t, "X")), 4)
cleanup(r)

# A full ring drops pushes or pops: the trace must stay valid.
r = run([PROG, "many", "300000"], env={"TPROF_BUFFER_MB": "1",
                                        "TPROF_TRACE": "nvtx"})
t = trace_of(r) or {"traceEvents": [], "tprof": {}}
path = glob.glob(os.path.join(r.dir, "*.trace.json.gz"))
eq("nvtx: flood: exit code", r.rc, 0)
check("nvtx: flood: nesting holds", nesting_ok(t))
if path:
    tprof_check(path[0], "nvtx: flood: tprof check")
loops = [e for e in ua(t, "X") if e["name"] == "loop"]
check("nvtx: flood: ranges recorded", 0 < len(loops) <= 300000,
      str(len(loops)))
cleanup(r)

# Without the preload the program runs as ever.
r = run([PROG, "basic"], preload=False)
eq("nvtx: without tprof: exit code", r.rc, 0)
eq("nvtx: without tprof: no trace", r.files(), [])
cleanup(r)
done()
