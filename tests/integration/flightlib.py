"""The flight recorder's window, checked the same way in both formats
(test_flight.py for JSON, test_pftrace_flight.py for Perfetto): a paced
program makes a call every PERIOD_US; a dump of a WINDOW_S window holds
every call of it, in order, up to the last one made, and nothing that
ended before it."""
import subprocess

from tplib import PRELOAD, base_env, check, eq, prog

PERIOD_US = 2000
WINDOW_S = 1.0
# The scheduler's delays on a loaded machine.
SLACK_S = 0.1


def paced(outdir, lastfile, count, extra=None, period=PERIOD_US):
    """progs/paced.c under tprof with a WINDOW_S flight recorder: count
    calls, one every period us, the last one's number in lastfile."""
    e = base_env()
    e.update({"LD_PRELOAD": PRELOAD, "TPROF_OUTPUT_DIR": outdir,
              "TPROF_FLIGHT": str(WINDOW_S)})
    e.update(extra or {})
    return subprocess.Popen([prog("paced"), str(period), str(count),
                             lastfile], env=e, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)


def window(tag, ids, ends, first_end, fl, trigger, last, running, what):
    """ids: the calls' numbers in the dump, in order; ends: every event's
    end in ns; first_end: the first call's end; fl: the trailer's
    "flight" stats. running: a dump while the program runs also holds
    what it recorded between the trigger and the writer's next cycle."""
    eq("%s: every call of the window, in order, none missing" % tag,
       ids, list(range(ids[0], ids[-1] + 1)))
    if last is not None:
        check("%s: up to the last call made" % tag,
              ids[-1] in (last, last + 1), (ids[-1], last))
    cut = round(fl["window_start_us"] * 1000)
    check("%s: no %s ended before the window" % (tag, what),
          min(ends) >= cut, (min(ends), cut))
    # The trigger came at most a period (and the scheduler's delays)
    # after the last call, so the first kept call is one at most that
    # much after the window's start: every call of the window is there.
    first = (first_end - cut) / 1e9
    check("%s: the whole window is kept (first call %.4f s after its "
          "start)" % (tag, first), 0 <= first <= PERIOD_US / 1e6 + SLACK_S,
          first)
    span = (max(ends) - cut) / 1e9
    check("%s: the window is TPROF_FLIGHT long" % tag,
          WINDOW_S - SLACK_S <= span and (running or span <= WINDOW_S), span)
    eq("%s: flight stats" % tag, (fl["seconds"], fl["window_events"],
       fl["trigger"]), (WINDOW_S, len(ids), trigger))
    check("%s: older calls aged out" % tag,
          fl["aged_out"] > 0 and fl["capped_out"] == 0, fl)
