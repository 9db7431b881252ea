"""The source layout's rule: no two files call each other (directly or
round a loop), and no folder calls into one above it (scripts/layering.py
over the built objects)."""
import os
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
r = subprocess.run([sys.executable, os.path.join(ROOT, "scripts", "layering.py"),
                    os.environ.get("TPROF_TEST_BUILD") or os.path.join(ROOT, "build")],
                   capture_output=True, text=True)
lines = r.stdout.splitlines()
cycles = [l for l in lines if l.startswith("cycle:")]
upward = [l for l in lines if l.startswith("upward:")]
files = [l for l in lines if l.startswith("layering:")]
ok = True
for name, bad in (("no file cycles", cycles), ("no upward calls", upward)):
    if bad:
        print("FAIL layout: %s: %s" % (name, "; ".join(bad)))
        ok = False
    else:
        print("PASS layout: %s" % name)
if r.returncode == 0 and not files:
    print("FAIL layout: the checker read no objects")
sys.exit(0 if ok else 1)
