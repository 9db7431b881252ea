"""CUPTI 12.6-12.9 records read through the CUDA 13 structs.

Opt-in (`make test-cupti-layouts`; downloads the nvidia-cuda-cupti-cu12
wheels of 12.6, 12.8 and 12.9 from PyPI, about 10 MB each, into
build/cupti-headers/). tests/unit/cupti_layout.c prints the offset of
every record field tprof reads; it is compiled against the CUDA 13
headers and against each CUPTI 12 header set, with that header's own
kernel, copy and synchronization structs (the ones its CUPTI delivers),
and every offset must be the same.

Also CUPTI 13.3+'s several subscribers: the nvidia-cuda-cupti 13.5.25
wheel's headers (about 13 MB) and tests/unit/cupti_v2_layout.c, compiled
against them (with static asserts on every v2 prototype tprof calls) and
against tprof's cupti/v2types.h: the same sizes, offsets and values.
"""
import glob
import os
import re
import subprocess
import sys
import zipfile

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
CACHE = os.path.join(ROOT, "build", "cupti-headers")
CUDA = os.environ.get("CUDA_HOME") or "/usr/local/cuda"
SRC = os.path.join(ROOT, "tests", "unit", "cupti_layout.c")
failed = 0


def result(name, ok, why=""):
    global failed
    print(("PASS %s" if ok else "FAIL %s: " + why) % name)
    failed += not ok


def headers(version):
    d = os.path.join(CACHE, version)
    inc = os.path.join(d, "nvidia", "cuda_cupti", "include")
    if os.path.isdir(inc):
        return inc
    os.makedirs(d, exist_ok=True)
    subprocess.run([sys.executable, "-m", "pip", "download", "--no-deps", "-q",
                    "-d", d, "nvidia-cuda-cupti-cu12==%s.*" % version],
                   check=True)
    whl = glob.glob(os.path.join(d, "*.whl"))[0]
    with zipfile.ZipFile(whl) as z:
        z.extractall(d, [n for n in z.namelist() if "/include/" in n])
    return inc


def latest(inc, prefix):
    """The highest-numbered struct of a record in the header."""
    text = open(os.path.join(inc, "cupti_activity.h")).read()
    found = re.findall(r"\}\s*(CUpti_Activity%s(\d*));" % prefix, text)
    return max(found, key=lambda f: int(f[1] or 0))[0]


def offsets(inc, defs):
    exe = os.path.join(CACHE, "layout")
    cmd = ["gcc", "-w", "-o", exe, SRC]
    if inc:
        cmd += ["-I" + inc] + ["-D%s=%s" % kv for kv in defs.items()]
    cmd.append("-I" + CUDA + "/include")
    subprocess.run(cmd, check=True)
    return subprocess.run([exe], capture_output=True, text=True,
                          check=True).stdout.splitlines()


os.makedirs(CACHE, exist_ok=True)
want = offsets(None, {})
result("layouts: CUDA 13 offsets read", len(want) > 50, str(len(want)))
for version in ("12.6", "12.8", "12.9"):
    inc = headers(version)
    api = re.search(r"#define CUPTI_API_VERSION (\d+)",
                    open(os.path.join(inc, "cupti_version.h")).read()).group(1)
    defs = {"KERNEL_STRUCT": latest(inc, "Kernel"),
            "MEMCPY_STRUCT": latest(inc, "Memcpy"),
            "SYNC_STRUCT": latest(inc, "Synchronization")}
    got = offsets(inc, defs)
    diff = [(a, b) for a, b in zip(want, got) if a != b]
    result("layouts: CUPTI %s (API %s, %s) has every field at CUDA 13's "
           "offset" % (version, api, ", ".join(defs.values())),
           not diff and len(got) == len(want), str(diff[:5]))


def headers_135():
    d = os.path.join(CACHE, "13.5.25")
    inc = os.path.join(d, "nvidia", "cu13", "include")
    if os.path.isdir(inc):
        return inc
    os.makedirs(d, exist_ok=True)
    subprocess.run([sys.executable, "-m", "pip", "download", "--no-deps", "-q",
                    "-d", d, "nvidia-cuda-cupti==13.5.25"], check=True)
    whl = glob.glob(os.path.join(d, "*.whl"))[0]
    with zipfile.ZipFile(whl) as z:
        z.extractall(d, [n for n in z.namelist() if "/include/" in n])
    return inc


def v2_lines(flags):
    exe = os.path.join(CACHE, "v2layout")
    subprocess.run(["gcc", "-Wall", "-Wextra", "-Werror", "-o", exe,
                    os.path.join(ROOT, "tests", "unit", "cupti_v2_layout.c")] +
                   flags + ["-I" + CUDA + "/include"], check=True)
    return subprocess.run([exe], capture_output=True, text=True,
                          check=True).stdout.splitlines()


inc = headers_135()
real = v2_lines(["-DREAL", "-I" + inc])
mine = v2_lines(["-I" + ROOT])
result("several subscribers: tprof's CUPTI 13.5 types (cupti/v2types.h) "
       "match the 13.5.25 headers, prototypes included",
       real == mine and len(real) > 10, str(list(zip(real, mine))[:5]))
print("%d passed, %d failed" % (5 - failed, failed))
sys.exit(1 if failed else 0)
