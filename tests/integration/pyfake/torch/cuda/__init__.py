"""Stand-in for torch.cuda's memory statistics, driven by the test:
set _initialized, _allocated and _peak."""
_initialized = False
_allocated = 0
_peak = 0
_fail = False
_calls = 0  # how many times tprof called in here


def is_initialized():
    global _calls
    _calls += 1
    return _initialized


def memory_allocated(device=None):
    global _calls
    _calls += 1
    if _fail:
        raise RuntimeError("pyfake: memory_allocated failed")
    return _allocated


def max_memory_allocated(device=None):
    global _calls
    _calls += 1
    if _fail:
        raise RuntimeError("pyfake: max_memory_allocated failed")
    return _peak
