"""tprof: mark steps, ranges and instants from Python.

    import tprof

    for batch in loader:
        with tprof.range("forward"):
            loss = model(batch)
        ...
        optimizer.step()
        tprof.step()            # ends a step; the schedule counts these

    @tprof.timed()              # or @tprof.timed("name"), or bare @tprof.timed
    def evaluate(): ...

The functions talk to libtprof.so when it is preloaded (LD_PRELOAD or
tprof-run); otherwise each is a cheap no-op, so the same program runs with
and without tprof. The library is never loaded by path: its symbols are
looked up in the process's global namespace. Nothing here prints on stdout
or raises because of tprof.

When torch is already imported and CUDA is initialized, a range also
records device memory (torch.cuda.memory_allocated at entry and exit, and
the peak inside it). torch is never imported by this module, and its peak
statistics are never reset.

The functions are those of the C extension _tprof (pyext/, built by make
next to libtprof.so, in build/python/) when it can be imported, and
otherwise the ctypes ones below, which do the same at several times the
cost; TPROF_PYTHON_EXT=0 asks for the ctypes ones. `implementation` says
which ("c" or "ctypes").
"""
import functools
import os
import sys

__all__ = ["step", "range", "timed", "mark", "enable", "disable",
           "recording", "available", "implementation"]

_lib = None


def _find():
    import ctypes
    try:
        lib = ctypes.CDLL(None)
        lib.tprof_step  # AttributeError when libtprof.so is not preloaded
    except Exception:
        return None
    try:
        lib.tprof_step.argtypes = []
        lib.tprof_step.restype = ctypes.c_long
        lib.tprof_range_push.argtypes = [ctypes.c_char_p]
        lib.tprof_range_push.restype = None
        lib.tprof_range_pop.argtypes = []
        lib.tprof_range_pop.restype = None
        lib.tprof_range_pop_memory.argtypes = [ctypes.c_int64, ctypes.c_int64,
                                               ctypes.c_int64]
        lib.tprof_range_pop_memory.restype = None
        lib.tprof_mark.argtypes = [ctypes.c_char_p]
        lib.tprof_mark.restype = None
        lib.tprof_enable.argtypes = []
        lib.tprof_enable.restype = None
        lib.tprof_disable.argtypes = []
        lib.tprof_disable.restype = None
        lib.tprof_recording.argtypes = []
        lib.tprof_recording.restype = ctypes.c_int
    except Exception:
        return None
    return lib



def _bytes(name):
    try:
        if isinstance(name, bytes):
            return name
        return str(name).encode("utf-8", "surrogateescape")
    except Exception:
        try:
            return repr(name).encode("utf-8", "replace")
        except Exception:
            return b"?"


def available():
    """True when libtprof.so is preloaded into this process."""
    return _lib is not None


def step():
    """Ends the current step; returns the number of the step that begins
    (None without tprof)."""
    if _lib is None:
        return None
    try:
        return int(_lib.tprof_step())
    except Exception:
        return None


def mark(name):
    """An instant event named `name` on the calling thread."""
    if _lib is None:
        return
    try:
        _lib.tprof_mark(_bytes(name))
    except Exception:
        pass


def enable():
    """Turns recording on again (within what the schedule allows)."""
    if _lib is None:
        return
    try:
        _lib.tprof_enable()
    except Exception:
        pass


def disable():
    """Turns recording off."""
    if _lib is None:
        return
    try:
        _lib.tprof_disable()
    except Exception:
        pass


def recording():
    """True while events are being recorded."""
    if _lib is None:
        return False
    try:
        return bool(_lib.tprof_recording())
    except Exception:
        return False


def _cuda():
    """torch.cuda when torch is already imported and CUDA is initialized,
    else None. Never imports torch."""
    torch = sys.modules.get("torch")
    if torch is None:
        return None
    try:
        cuda = torch.cuda
        if cuda.is_initialized():
            return cuda
    except Exception:
        pass
    return None


def _mem_enter():
    """(allocated, peak) at a range's entry, or None."""
    cuda = _cuda()
    if cuda is None:
        return None
    try:
        return int(cuda.memory_allocated()), int(cuda.max_memory_allocated())
    except Exception:
        return None


def _mem_exit(entry, peak_entry):
    """(entry, exit, peak) at a range's exit, or None: the peak is the
    peak counter when it rose inside the range, else the larger of entry
    and exit (the program's peak counter is never reset)."""
    cuda = _cuda()
    if cuda is None:
        return None
    try:
        at_exit = int(cuda.memory_allocated())
        peak_exit = int(cuda.max_memory_allocated())
    except Exception:
        return None
    if peak_exit > peak_entry:
        return entry, at_exit, peak_exit
    return entry, at_exit, max(entry, at_exit)


class range(object):  # noqa: A001 (tprof.range, as the API names it)
    """A range on the calling thread: `with tprof.range("name"): ...`, or
    `@tprof.range("name")` on a function. Exceptions inside the block
    propagate; the range is closed either way."""

    __slots__ = ("_name", "_mem")

    def __init__(self, name):
        self._name = name
        self._mem = None

    def __enter__(self):
        if _lib is None:
            return self
        self._mem = _mem_enter()
        try:
            _lib.tprof_range_push(_bytes(self._name))
        except Exception:
            pass
        return self

    def __exit__(self, exc_type, exc, tb):
        if _lib is None:
            return False
        mem, self._mem = self._mem, None
        if mem is not None:
            mem = _mem_exit(*mem)
        try:
            if mem is not None:
                _lib.tprof_range_pop_memory(*mem)
            else:
                _lib.tprof_range_pop()
        except Exception:
            pass
        return False

    def __call__(self, fn):
        name = self._name

        @functools.wraps(fn)
        def wrapper(*args, **kwargs):
            if _lib is None:
                return fn(*args, **kwargs)
            with range(name):
                return fn(*args, **kwargs)
        return wrapper


def timed(name=None):
    """Decorator that wraps each call in a range, named `name` or the
    function's __qualname__: @tprof.timed, @tprof.timed(), @tprof.timed("x")."""
    if callable(name) and not isinstance(name, (str, bytes)):
        return timed()(name)

    def deco(fn):
        n = name
        if n is None:
            n = getattr(fn, "__qualname__", None) or \
                getattr(fn, "__name__", None) or repr(fn)
        return range(_bytes(n))(fn)
    return deco


def _load_ext():
    """The C extension, unless TPROF_PYTHON_EXT=0 or it cannot be
    imported (not built for this Python): then None."""
    if os.environ.get("TPROF_PYTHON_EXT") == "0":
        return None
    try:
        import _tprof
    except Exception:
        return None
    if getattr(_tprof, "ABI", None) != 1:
        return None
    try:
        _tprof._set_memory_hooks(_mem_enter, _mem_exit)
    except Exception:
        return None
    return _tprof


_ext = _load_ext()
implementation = "ctypes"
if _ext is None:
    _lib = _find()
else:
    implementation = "c"
    available = _ext.available
    step = _ext.step
    mark = _ext.mark
    enable = _ext.enable
    disable = _ext.disable
    recording = _ext.recording
    range = _ext.range  # noqa: A001
