"""CPU time in a known pure-Python function, for the CPU sampling test:
one CUDA call (libuser.so's, through the PLT into the preloaded hook: the
process is traced from its first one), then hot_loop until the process
has used the CPU seconds asked for."""
import ctypes, sys, time
ctypes.CDLL(sys.argv[1]).user_alloc(1)


def hot_loop(n):
    x = 0
    for i in range(n):
        x += i * i % 7
    return x


def main(seconds):
    t0 = time.process_time()
    while time.process_time() - t0 < seconds:
        hot_loop(20000)


main(float(sys.argv[2]))
print("py host done")
