"""Reaches cudaMalloc through Python functions (via ctypes and libuser.so,
whose call goes through the PLT into the preloaded hook)."""
import ctypes, sys
lib = ctypes.CDLL(sys.argv[1])
def alloc_step():
    return lib.user_alloc(1)
def train_loop():
    for i in range(3):
        alloc_step()
train_loop()
print("py done")
