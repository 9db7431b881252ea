"""make bench's input for the HTA comparison: RANKS torch.profiler
(Kineto) traces of STEPS steps each, written by
tests/integration/kineto_fixture.py with an NCCL kernel per step, so
that HTA's temporal breakdown has compute, communication and memory
kernels. Rank r's steps are 1 + r/10 times slower. Prints the bytes of
uncompressed JSON written.

usage: python3 bench/kineto_set.py DIR RANKS STEPS"""
import gzip
import json
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "tests",
                                "integration"))
import kineto_fixture  # noqa: E402


def main():
    d, ranks, steps = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
    kernels = int(sys.argv[4])
    # the fixture's GPU work starts 100 us into a step, one kernel after
    # the other with 1 us between; 10/20/30 us kernels
    kernel_us = (10.0, 20.0, 30.0) * (kernels // 3) + \
        (10.0,) * (kernels % 3)
    step_us = 200.0 + sum(kernel_us) + len(kernel_us)
    raw = 0
    for r in range(ranks):
        t, _ = kineto_fixture.make(rank=r, world_size=ranks, steps=steps,
                                   step_us=step_us, kernel_us=kernel_us,
                                   slow=1 + r / 10, nccl=True)
        p = os.path.join(d, "host.%d.pt.trace.json.gz" % r)
        # as kineto_fixture.write (Kineto's indented layout), at gzip's
        # default level 6: level 9 only makes the set slower to write
        text = json.dumps(t, indent=2).encode()
        with open(p, "wb") as f:
            f.write(gzip.compress(text, 6))
        raw += len(text)
    print(raw)


main()
