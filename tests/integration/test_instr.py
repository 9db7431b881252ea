"""The instruction budgets (bench/instr_budgets): instructions tprof adds
to a hooked call, recorded and dropped, and the writer's instructions per
event for the JSON and Perfetto traces with each compressor, counted by
callgrind (bench/instr_check.sh), so a slower hook or writer fails here
whatever the machine's load. Without valgrind each is a SKIP."""
import os
import subprocess
import sys

from tplib import BUILD, LIB, ROOT, SANITIZE, skip

if SANITIZE:
    skip("instr: budgets", "a sanitized build counts its own instructions")
    sys.exit(0)
r = subprocess.run(["sh", os.path.join(ROOT, "bench", "instr_check.sh"),
                    os.path.join(BUILD, "bench"), LIB],
                   capture_output=True, text=True, timeout=300)
sys.stdout.write(r.stdout)
if r.returncode and "FAIL " not in r.stdout:
    print("FAIL instr: instr_check.sh exited %d: %s" % (r.returncode,
                                                       r.stderr.strip()))
sys.exit(1 if r.returncode else 0)
