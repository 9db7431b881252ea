"""The flight recorder (TPROF_FLIGHT): paced calls, each naming itself
(cudaMemset's ptr is its number), then a trigger. The dump must hold
exactly the calls of the last TPROF_FLIGHT seconds (all of them, none
older than the window and one writer cycle), the exit status must be the
program's, and nothing is written without a trigger."""
import glob
import os
import signal
import struct
import subprocess
import time

import flightlib
from tplib import *


start = flightlib.paced


def last_call(lastfile):
    with open(lastfile, "rb") as f:
        return struct.unpack("<q", f.read(8))[0]


def traces(outdir):
    return sorted(glob.glob(os.path.join(outdir, "*.trace.json.gz")))


def calls(path):
    t = load(path)
    ev = [e for e in xevents(t, "cudaMemset")]
    return t, ev, [int(e["args"]["ptr"], 16) for e in ev]


def check_window(tag, path, last=None, trigger=None, running=False):
    """running: a dump while the program runs also holds what it recorded
    between the trigger and the writer's next cycle."""
    tprof_check(path, "%s: tprof check passes" % tag)
    t, ev, ids = calls(path)
    check("%s: calls in the dump" % tag, len(ids) > 0, path)
    if not ids:
        return t, ids
    fl = t["tprof"]["flight"]
    ends = [round((e["ts"] + e["dur"]) * 1000) for e in
            t["traceEvents"] if e.get("ph") == "X"]
    flightlib.window(tag, ids, ends, ends[0], fl, trigger, last, running,
                     "event")
    eq("%s: events_written" % tag, t["tprof"]["events_written"], len(ids))
    return t, ids


# 3 s of calls every 2 ms, then SIGTERM: the last second is dumped.
outdir = tempfile.mkdtemp(prefix="tprof-it-")
lastfile = os.path.join(outdir, "last")
p = start(outdir, lastfile, 100000)
time.sleep(3.0)
p.send_signal(signal.SIGTERM)
out, err = p.communicate(timeout=30)
eq("flight SIGTERM: exit status unchanged (killed by SIGTERM)",
   p.returncode, -signal.SIGTERM)
eq("flight SIGTERM: stdout unchanged", out, "")
files = traces(outdir)
eq("flight SIGTERM: one trace", [os.path.basename(f) for f in files],
   ["tprof-rank0.trace.json.gz"])
last = last_call(lastfile)
if files:
    t, ids = check_window("flight SIGTERM", files[0], last, "SIGTERM")
    th = t["tprof"]["threads"]
    check("flight SIGTERM: thread counts are since the start",
          len(th) == 1 and th[0]["events"] in (last, last + 1) and
          th[0]["dropped"] == 0, th)
check("flight SIGTERM: one line names the dump",
      "tprof: wrote %s/tprof-rank0.trace.json.gz" % outdir in err, err)

# A crash (a segfault, here sent from outside) dumps the window too,
# and the program still dies by its signal.
outdir = tempfile.mkdtemp(prefix="tprof-it-")
lastfile = os.path.join(outdir, "last")
p = start(outdir, lastfile, 100000)
time.sleep(3.0)
p.send_signal(signal.SIGSEGV)
out, err = p.communicate(timeout=30)
eq("flight SIGSEGV: exit status unchanged (killed by SIGSEGV)",
   p.returncode, -signal.SIGSEGV)
files = traces(outdir)
eq("flight SIGSEGV: one trace", [os.path.basename(f) for f in files],
   ["tprof-rank0.trace.json.gz"])
if files:
    check_window("flight SIGSEGV", files[0], last_call(lastfile), "SIGSEGV")

# A normal exit writes nothing at all.
outdir = tempfile.mkdtemp(prefix="tprof-it-")
p = start(outdir, os.path.join(outdir, "last"), 300)
out, err = p.communicate(timeout=60)
eq("flight exit: exit status", p.returncode, 0)
eq("flight exit: nothing written", sorted(os.listdir(outdir)), ["last"])
check("flight exit: nothing said",
      not [l for l in err.splitlines() if l.startswith("tprof:") and
           not is_gpu_off_warning(l)], err)

# ... unless TPROF_FLIGHT_DUMP_AT_EXIT=1.
outdir = tempfile.mkdtemp(prefix="tprof-it-")
lastfile = os.path.join(outdir, "last")
p = start(outdir, lastfile, 1000, {"TPROF_FLIGHT_DUMP_AT_EXIT": "1"})
out, err = p.communicate(timeout=60)
eq("flight at exit: exit status", p.returncode, 0)
files = traces(outdir)
eq("flight at exit: one trace", len(files), 1)
if files:
    t, ids = check_window("flight at exit", files[0], 1000, "exit")
    eq("flight at exit: ends with the last call", ids[-1:], [1000])

# tprof dump PID mid-run: a dump, the program goes on; then SIGINT.
outdir = tempfile.mkdtemp(prefix="tprof-it-")
lastfile = os.path.join(outdir, "last")
p = start(outdir, lastfile, 100000, {"TPROF_DUMP_SIGNAL": "USR2"})
time.sleep(1.5)
d = subprocess.run([CLI, "dump", str(p.pid)], capture_output=True,
                   text=True, timeout=30)
eq("flight dump: tprof dump exit status", d.returncode, 0)
asked = last_call(lastfile)
t0 = time.monotonic()
while not traces(outdir) and time.monotonic() - t0 < 5:
    time.sleep(0.02)
time.sleep(0.3)
eq("flight dump: the program goes on", p.poll(), None)
files = traces(outdir)
eq("flight dump: one dump while running", len(files), 1)
if files:
    t, ids = check_window("flight dump", files[0], None, "signal", True)
    check("flight dump: up to when it was asked",
          asked - 150 <= ids[-1] <= asked + 150, (asked, ids[-1]))
time.sleep(0.5)
p.send_signal(signal.SIGINT)
out, err = p.communicate(timeout=30)
eq("flight dump: exit status (SIGINT)", p.returncode, -signal.SIGINT)
files = traces(outdir)
eq("flight dump: a second dump at SIGINT",
   [os.path.basename(f) for f in files],
   ["tprof-dump2-rank0.trace.json.gz", "tprof-rank0.trace.json.gz"])
if len(files) == 2:
    check_window("flight dump 2", files[0], last_call(lastfile), "SIGINT")
lines = [l for l in err.splitlines() if "flight recorder (signal)" in l]
check("flight dump: one line names the mid-run dump",
      len(lines) == 1 and "tprof-rank0.trace.json.gz" in lines[0], err)

# tprof dump refuses processes it would kill.
q = subprocess.Popen(["sleep", "30"])
d = subprocess.run([CLI, "dump", str(q.pid)], capture_output=True,
                   text=True, timeout=30)
eq("tprof dump: no libtprof.so: exit status", d.returncode, 1)
check("tprof dump: no libtprof.so: says so",
      "has no libtprof.so loaded" in d.stderr, d.stderr)
eq("tprof dump: the process was left alone", q.poll(), None)
q.kill()
q.wait()
outdir = tempfile.mkdtemp(prefix="tprof-it-")
p = start(outdir, os.path.join(outdir, "last"), 100000)
time.sleep(0.3)
d = subprocess.run([CLI, "dump", str(p.pid)], capture_output=True,
                   text=True, timeout=30)
eq("tprof dump: no TPROF_DUMP_SIGNAL: exit status", d.returncode, 1)
check("tprof dump: no TPROF_DUMP_SIGNAL: says so",
      "was not started with TPROF_DUMP_SIGNAL" in d.stderr, d.stderr)
eq("tprof dump: the process was left alone", p.poll(), None)
p.kill()
p.wait()

# The gates decide what is recorded, the flight recorder how long it is
# kept: with TPROF_DELAY=1, a stop at 1.6 s dumps the calls from 1 s on.
outdir = tempfile.mkdtemp(prefix="tprof-it-")
lastfile = os.path.join(outdir, "last")
p = start(outdir, lastfile, 100000, {"TPROF_DELAY": "1"})
time.sleep(1.6)
p.send_signal(signal.SIGTERM)
p.communicate(timeout=30)
files = traces(outdir)
if check("flight + TPROF_DELAY: one dump", len(files) == 1, files):
    t, ev, ids = calls(files[0])
    start_us = (t["tprof"]["start_unix_ns"] - t["baseTimeNanoseconds"]) / 1e3
    eq("flight + TPROF_DELAY: consecutive calls", ids,
       list(range(ids[0], ids[-1] + 1)) if ids else [1])
    first = (ev[0]["ts"] - start_us) / 1e6 if ev else 0
    check("flight + TPROF_DELAY: none before the delay (first at 1.0 to "
          "1.1 s)", 1.0 <= first <= 1.1, first)
    check("flight + TPROF_DELAY: all after it (ids from about 500)",
          ids and 450 <= ids[0] <= 560 and ids[-1] - ids[0] >= 150, ids[:1])

# Drops stay exact: 300k calls without a pause into a 1 MiB ring and no
# spill pool; the window (longer than the run) holds every recorded one.
outdir = tempfile.mkdtemp(prefix="tprof-it-")
p = start(outdir, os.path.join(outdir, "last"), 300000,
          {"TPROF_BUFFER_MB": "1", "TPROF_SPILL_MB": "0", "TPROF_FLIGHT": "30",
           "TPROF_FLIGHT_DUMP_AT_EXIT": "1"}, period=0)
out, err = p.communicate(timeout=120)
files = traces(outdir)
if check("flight drops: one dump", len(files) == 1, files):
    t, ev, ids = calls(files[0])
    th = t["tprof"]["threads"][0]
    check("flight drops: the ring filled", th["dropped"] > 0, th)
    eq("flight drops: recorded + dropped == made",
       th["events"] + th["dropped"], 300000)
    eq("flight drops: the window holds every recorded call",
       (len(ids), t["tprof"]["flight"]["window_events"],
        t["tprof"]["events_dropped"]), (th["events"], th["events"],
                                         th["dropped"]))

# tprof-run's flags reach the library.
def tprof_run_flags():
    outdir = tempfile.mkdtemp(prefix="tprof-it-")
    e = base_env()
    r = subprocess.run([RUN, "-o", outdir, "--flight", "1", "--flight-mb", "64",
                        "--flight-at-exit", "--hang", "0.5", "--dump-signal",
                        "USR2", "--", prog("paced"), "1000", "200",
                        os.path.join(outdir, "last")], env=e,
                       capture_output=True, text=True, timeout=60)
    eq("tprof-run flight flags: exit status", r.returncode, 0)
    files = traces(outdir)
    if check("tprof-run flight flags: the window written at exit", len(files) == 1,
             os.listdir(outdir)):
        t = load(files[0])["tprof"]
        eq("tprof-run flight flags: in the trace",
           (t["flight"]["seconds"], t["flight"]["cap_mb"], t["flight"]["trigger"],
            t["hang"]), (1, 64, "exit", {"seconds": 0.5, "dump_signal": "USR2"}))


if NO_SHELL:
    skip("tprof-run flight flags", NO_SHELL)
else:
    tprof_run_flags()
e = base_env()
r = subprocess.run([RUN, "--flight", "abc", "--", "true"], env=e,
                   capture_output=True, text=True, timeout=60)
check("tprof-run --flight abc: refused with exit 2",
      r.returncode == 2 and "TPROF_FLIGHT='abc' is not valid" in r.stderr,
      r.stderr)

# Bad values are refused as every TPROF_* variable is.
for env, msg in (({"TPROF_FLIGHT": "abc"}, "TPROF_FLIGHT='abc' is not valid"),
                 ({"TPROF_FLIGHT": "0.01"}, "TPROF_FLIGHT='0.01' is not valid"),
                 ({"TPROF_HANG": "-1"}, "TPROF_HANG='-1' is not valid"),
                 ({"TPROF_FLIGHT_MB": "0"}, "TPROF_FLIGHT_MB='0' is not valid"),
                 ({"TPROF_DUMP_SIGNAL": "KILL"},
                  "TPROF_DUMP_SIGNAL='KILL' is not valid"),
                 ({"TPROF_DUMP_SIGNAL": "USR1", "TPROF_SIGNAL": "USR1"},
                  "TPROF_DUMP_SIGNAL and TPROF_SIGNAL are both USR1")):
    e = base_env()
    e.update(env)
    c = subprocess.run([CLI, "env-check"], env=e, capture_output=True,
                       text=True)
    check("env-check refuses %s" % env, c.returncode != 0 and msg in c.stderr,
          c.stderr)

done()
