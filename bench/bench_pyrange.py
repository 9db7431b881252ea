"""The cost of tprof.range from Python, as the program sees it.

usage: bench_pyrange.py CHUNK CHUNKS PAUSE_MS

Run with scripts/python (and build/python, for the C extension) on
PYTHONPATH; TPROF_PYTHON_EXT=0 times the ctypes path instead. Prints
"impl c|ctypes", then one line per chunk of CHUNK enter+exit pairs for
each way of writing a range, in ns per pair of the thread's CPU time
(the time it waited for a core left out: the machine is shared):
"reuse X" (one range object entered again and again), "new X"
(`with tprof.range("forward"):`, an object per use) and "timed X" (a
call of an @tprof.timed function, less the same call undecorated), then
"ranges N" (the ranges the trace should hold). bench.sh leaves out the
first chunks, which pay the ring's first page faults.
"""
import sys
import time

import tprof


def per_pair(fn, n):
    t0 = time.thread_time_ns()
    fn(n)
    return (time.thread_time_ns() - t0) / n


def reuse(n):
    r = tprof.range("forward")
    for _ in range(n):
        with r:
            pass


def new(n):
    rng = tprof.range
    for _ in range(n):
        with rng("forward"):
            pass


def plain(x):
    return x


timed_plain = tprof.timed("forward")(plain)


def calls(f, n):
    for i in range(n):
        f(i)


def main():
    n, chunks, pause = int(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3])
    print("impl %s" % tprof.implementation)
    for _ in range(chunks):
        for name, fn in (("reuse", reuse), ("new", new)):
            print("%s %.2f" % (name, per_pair(fn, n)))
            time.sleep(pause / 1000.0)
        t = per_pair(lambda k: calls(timed_plain, k), n)
        time.sleep(pause / 1000.0)
        print("timed %.2f" % (t - per_pair(lambda k: calls(plain, k), n)))
    print("ranges %d" % (3 * n * chunks))


main()
