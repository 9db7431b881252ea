"""GPU health counters from NVML (nvml/), against the stand-in
libnvidia-ml.so.1 of the simulated machine (tests/sim/nvml.c): the
counters in the trace are exactly what NVML served; without NVML, with
an old one, or with queries refused, the program runs as before, the
rest is sampled and the trace says what was not; and over four ranks the
report names the slow rank whose GPU was throttled, with its numbers, and
says of a slow rank with a healthy GPU that it was healthy."""
import glob
import json
import os
import subprocess
import tempfile

from simrun import SIM, LIBDIR, sim_prog
from tplib import CLI, check, done, eq, load, run

NVML = os.path.join(SIM, "nvml")
NVML_OLD = os.path.join(SIM, "nvml_old")
# The stand-in's log keys and the trace's arg keys.
KEYS = {"sm": "sm_mhz", "mem": "mem_mhz", "power": "power_mw",
        "limit": "power_limit_mw", "temp": "temp_c", "gutil": "gpu_util_pct",
        "mutil": "mem_util_pct", "used": "mem_used_bytes",
        "total": "mem_total_bytes", "pcie_tx": "pcie_tx_kbps",
        "pcie_rx": "pcie_rx_kbps", "nvl_tx": "nvlink_tx_kib",
        "nvl_rx": "nvlink_rx_kib", "ecc_c": "ecc_corrected",
        "ecc_u": "ecc_uncorrected"}
REASONS = ["gpu_idle", "app_clocks", "sw_power_cap", "hw_slowdown",
           "sync_boost", "sw_thermal", "hw_thermal", "hw_power_brake",
           "display_clocks", "board_limit", "reliability"]
SCRIPT = ("0 sm=1980 mem=2619 power=350000 limit=700000 temp=55 gutil=90 "
          "mutil=40 used=1000000000 total=85520809984 reasons=0 pcie_tx=100 "
          "pcie_rx=200 nvl_tx=1000 nvl_rx=2000 ecc_c=1 ecc_u=0;"
          "0.15 sm=1100 reasons=0x20 temp=92 nvl_tx=5000 xid=79")
UUID0 = "GPU-5e110a7d-3c42-4b1a-9b27-61d08e552000"


def sim(env, libs=(NVML,), prog="paced", args=()):
    e = {"LD_LIBRARY_PATH": ":".join([LIBDIR] + list(libs)),
         "TPROF_GPU_METRICS_HZ": "50"}
    e.update(env)
    r = run([sim_prog(prog)] + list(args), env=e)
    tr = glob.glob(os.path.join(r.dir, "*.trace.json.gz"))
    r.trace = load(tr[0]) if len(tr) == 1 else None
    r.path = tr[0] if tr else None
    sm = glob.glob(os.path.join(r.dir, "**", "*.summary.json"),
                   recursive=True)
    r.summary = json.load(open(sm[0])) if len(sm) == 1 else None
    return r


def counters(t):
    return sorted((e for e in t["traceEvents"]
                   if e.get("cat") == "gpu_metrics"),
                  key=lambda e: e["ts"])


def series(evs, key):
    return [e["args"][key] for e in evs if key in e["args"]]


def test_exact():
    log = tempfile.mktemp(prefix="nvml-log-")
    r = sim({"SIM_NVML_SCRIPT": SCRIPT, "SIM_NVML_LOG": log})
    if not check("exact: runs, one trace", r.rc == 0 and r.trace,
                 (r.rc, r.stderr[-800:])):
        return
    served = {}
    for line in open(log):
        k, dev, v = line.split()
        served.setdefault(k, []).append(int(v))
    os.unlink(log)
    evs = counters(r.trace)
    got = {k: series(evs, KEYS[k]) for k in KEYS}
    want = {k: served.get(k, []) for k in KEYS}
    eq("exact: every counter in the trace is what NVML served, in order",
       [k for k in KEYS if got[k] != want[k]], [])
    flags = [e["args"] for e in evs if e["name"] == "GPU clock events"]
    want = [{n: int(bool(m & (1 << i))) for i, n in enumerate(REASONS)}
            for m in served["reasons"]]
    eq("exact: clock event reasons as named flags, as served", flags, want)
    n = len(series(evs, "sm_mhz"))
    check("exact: several samples, both before and after the drop",
          n >= 5 and 1100 in got["sm"] and 1980 in got["sm"], got["sm"])
    eq("exact: every counter is on device 0's track (tid 0)",
       sorted({(e["pid"], e["tid"]) for e in evs}), [(0, 0)])
    xid = [(e["args"]["xid_count"], e["args"]["xid_last"]) for e in evs
           if e["name"] == "GPU XID"]
    check("exact: the XID event counted once, with its number",
          xid and xid[0] == (0, 0) and xid[-1] == (1, 79) and
          len(set(xid)) == 2, xid[:3] + xid[-2:])
    gm = r.trace["tprof"]["gpu_metrics"]
    eq("exact: the trailer: sampled, the samples written, the device "
       "found by its UUID, nothing unavailable",
       (gm["state"], gm["samples"], gm["dropped"], gm["devices"]),
       ("sampled", n, 0, [{"device": 0, "uuid": UUID0, "mapped": True,
                           "unavailable": {}}]))
    h = r.summary["gpu_health"]["devices"][0]
    sm = got["sm"]
    eq("exact: the summary's SM clock: min, mean, max, last of the samples",
       h["counters"]["sm_mhz"],
       {"n": n, "min": 1100, "mean": round(sum(sm) / n, 3)
        if sum(sm) % n else sum(sm) // n, "max": 1980, "last": sm[-1]})
    th = sum(f["sw_thermal"] for f in flags)
    eq("exact: the summary's thermal share is the share of samples",
       h["clock_events"]["sw_thermal"], round(th / len(flags), 4))
    # The same figures from the trace (tprof report's aggregator).
    d = tempfile.mkdtemp(prefix="gm-sum-")
    p = subprocess.run([CLI, "report", "--traces", "--summaries", d,
                        r.path], capture_output=True, text=True)
    s = glob.glob(os.path.join(d, "*.summary.json"))
    eq("exact: the summary computed from the trace has the same "
       "gpu_health", json.load(open(s[0]))["gpu_health"] if s else
       p.stderr, r.summary["gpu_health"])


def test_perfetto():
    r = sim({"SIM_NVML_SCRIPT": SCRIPT, "TPROF_FORMAT": "perfetto"})
    pf = glob.glob(os.path.join(r.dir, "*.pftrace.gz"))
    if not check("perfetto: runs, one trace", r.rc == 0 and len(pf) == 1,
                 (r.rc, r.stderr[-800:])):
        return
    d = tempfile.mkdtemp(prefix="gm-pf-")
    p = subprocess.run([CLI, "report", "--traces", "--summaries", d, pf[0]],
                       capture_output=True, text=True)
    s = glob.glob(os.path.join(d, "*.summary.json"))
    eq("perfetto: the counter tracks read back give the summary's "
       "gpu_health", json.load(open(s[0]))["gpu_health"] if s else p.stderr,
       r.summary["gpu_health"])


def test_missing():
    r = sim({}, libs=())
    gm = r.trace and r.trace["tprof"].get("gpu_metrics")
    check("missing: the program runs as without tprof's counters",
          r.rc == 0 and r.trace and "paced: done" in r.stdout, r.stderr[-500:])
    eq("missing: no counter events", counters(r.trace) if r.trace else None,
       [])
    check("missing: the trailer says NVML is not there",
          gm and gm["state"].startswith("no NVML: libnvidia-ml.so.1") and
          gm["samples"] == 0, gm)
    eq("missing: the summary says the same",
       r.summary["gpu_health"]["state"], gm["state"] if gm else None)
    eq("missing: not one line about it on stderr",
       [l for l in r.stderr.splitlines() if "NVML" in l or "nvml" in l], [])
    r = sim({"SIM_NVML_DENY": "init:no_permission"})
    gm = r.trace["tprof"]["gpu_metrics"] if r.trace else {}
    eq("missing: nvmlInit_v2 refused: said, nothing sampled",
       (r.rc, gm.get("state"), len(counters(r.trace))),
       (0, "no NVML: nvmlInit_v2 failed: no permission", 0))


def test_denied():
    r = sim({"SIM_NVML_SCRIPT": SCRIPT, "SIM_NVML_DENY":
             "power:no_permission,ecc:not_supported,clock_events:"
             "no_permission,nvlink:not_supported,events:not_supported"})
    if not check("denied: runs, one trace", r.rc == 0 and r.trace,
                 r.stderr[-800:]):
        return
    gm = r.trace["tprof"]["gpu_metrics"]
    eq("denied: the refused counters listed with why",
       gm["devices"][0]["unavailable"],
       {"power_mw": "no permission", "clock_events": "no permission",
        "nvlink_tx_kib": "not supported", "nvlink_rx_kib": "not supported",
        "ecc_corrected": "not supported", "ecc_uncorrected": "not supported",
        "xid_count": "not supported", "xid_last": "not supported"})
    evs = counters(r.trace)
    names = sorted({e["name"] for e in evs})
    eq("denied: the others still sampled", names,
       ["GPU PCIe", "GPU clocks", "GPU memory used", "GPU power",
        "GPU temperature", "GPU utilization"])
    eq("denied: the power event holds only the limit",
       sorted({k for e in evs if e["name"] == "GPU power"
               for k in e["args"]}), ["power_limit_mw"])
    eq("denied: the summary lists them too",
       r.summary["gpu_health"]["devices"][0]["unavailable"],
       gm["devices"][0]["unavailable"])
    r = sim({"SIM_NVML_SCRIPT": SCRIPT}, libs=(NVML_OLD,))
    gm = r.trace["tprof"]["gpu_metrics"] if r.trace else {}
    miss = "not in this NVML (no such function)"
    eq("old NVML: the functions it lacks listed, the throttle reasons read "
       "by their old name",
       (r.rc, gm.get("devices", [{}])[0].get("unavailable"),
        any(e["name"] == "GPU clock events" for e in counters(r.trace))),
       (0, {"nvlink_tx_kib": miss, "nvlink_rx_kib": miss,
            "xid_count": miss, "xid_last": miss}, True))


def test_config():
    r = sim({"TPROF_TRACE": "cuda,gpu"})
    eq("config: without the gpumetrics word, no counters and no trailer key",
       (r.rc, len(counters(r.trace)), "gpu_metrics" in r.trace["tprof"]),
       (0, 0, False))
    r = sim({"TPROF_GPU_METRICS_HZ": "0"})
    check("config: TPROF_GPU_METRICS_HZ=0 refused in one line",
          r.rc == 0 and "TPROF_GPU_METRICS_HZ='0' is not valid" in r.stderr,
          r.stderr[-400:])


def rank_env(rank, script):
    return {"RANK": str(rank), "WORLD_SIZE": "4", "TPROF_GPU_METRICS_HZ": "20",
            "SIM_NVML_SCRIPT": script, "TPROF_TRACE": "all"}


HEALTHY = ("0 sm=1980 mem=2619 power=400000 limit=700000 temp=60 gutil=95 "
           "used=40000000000 total=85520809984 reasons=0")
HOT = HEALTHY + ";0 sm=1100 reasons=0x20 temp=93"


def test_ranks():
    """Four ranks one after the other: rank 1 waits for its data loader
    (its GPU healthy), rank 2's GPU runs at 1100 MHz under thermal
    slowdown and its kernels take twice as long."""
    out = tempfile.mkdtemp(prefix="gm-ranks-")
    modes = ["normal", "loader", "slowgpu", "normal"]
    for rank, mode in enumerate(modes):
        r = sim(dict(rank_env(rank, HOT if rank == 2 else HEALTHY),
                     TPROF_OUTPUT_DIR=out), prog="train_step",
                args=("40", mode))
        if not check("ranks: rank %d runs" % rank, r.rc == 0,
                     r.stderr[-500:]):
            return
    p = subprocess.run([CLI, "report", out], capture_output=True, text=True)
    md = p.stdout
    lines = [l.split(". ", 1)[-1].strip("*") for l in md.splitlines()
             if l[:1].isdigit()]
    hot = [l for l in lines if l.startswith(
        "rank 2: its GPU ran throttled")]
    check("ranks: the report names rank 2, its clock against the others' "
          "and the thermal slowdown's share",
          hot and "SM clock 1.10 GHz mean vs 1.98 GHz on the others" in hot[0]
          and "100% of the time under thermal slowdown" in hot[0],
          "\n".join(lines))
    ok = [l for l in lines if l.startswith("rank 1: its GPU was healthy")]
    check("ranks: rank 1's GPU was healthy: look at its host or peers",
          ok and "SM clock 1.98 GHz mean" in ok[0] and
          "look at its host or its peers" in ok[0], "\n".join(lines))
    check("ranks: the GPU health table, a row per rank",
          "## GPU health" in md and "1100 MHz (1100-1100)" in md and
          "thermal slowdown 100%" in md, md[-3000:])
    p = subprocess.run([CLI, "report", "--json", out], capture_output=True,
                       text=True)
    j = json.loads(p.stdout) if p.returncode == 0 else {}
    kinds = sorted((f["kind"], f["who"]["ranks"]) for f in
                   j.get("findings", []) if f["kind"].startswith("gpu_"))
    eq("ranks: --json: the two findings", kinds,
       [("gpu_healthy", [1]), ("gpu_throttled", [2])])
    hs = {r["rank"]: r["gpu_health"] for r in j.get("ranks", [])}
    eq("ranks: --json: rank 2's clocks and thermal share",
       (hs.get(2, {}).get("sm_clock_mhz_mean"),
        hs.get(2, {}).get("clock_events", {}).get("sw_thermal"),
        hs.get(0, {}).get("sm_clock_mhz_mean")), (1100, 1, 1980))
    h = subprocess.run([CLI, "report", "--html", os.path.join(out, "r.html"),
                        out], capture_output=True, text=True)
    page = open(os.path.join(out, "r.html")).read() if h.returncode == 0 \
        else ""
    check("ranks: the HTML has the GPU health table and the findings",
          "GPU health" in page and "its GPU ran throttled" in page,
          h.stderr[-300:])


def test_late():
    """A short run on a node where nvmlInit_v2 is slow: the writer asks
    the sampler to stop before it has opened NVML (as on a loaded
    machine, where CUPTI's device record comes with the last flush).
    Each used device still gets one reading, taken at the stop."""
    r = sim({"SIM_NVML_INIT_MS": "400", "TPROF_GPU_METRICS_HZ": "1",
             "SIM_NVML_SCRIPT": HOT}, prog="train_step", args=("1", "normal"))
    gm = r.trace["tprof"]["gpu_metrics"] if r.trace else {}
    evs = counters(r.trace) if r.trace else []
    eq("late: sampled, one sample of the device, its counters in the trace",
       (r.rc, gm.get("state"), gm.get("samples"),
        series(evs, "sm_mhz")), (0, "sampled", 1, [1100]))
    h = (r.summary or {}).get("gpu_health", {})
    d = (h.get("devices") or [{}])[0]
    eq("late: the summary has the device's clock and thermal share",
       (d.get("samples"), d.get("counters", {}).get("sm_mhz", {}).get("mean"),
        d.get("clock_events", {}).get("sw_thermal")), (1, 1100, 1))


test_exact()
test_perfetto()
test_missing()
test_denied()
test_config()
test_late()
test_ranks()
done()
