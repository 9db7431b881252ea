"""tprof-run --torch-steps: each PyTorch optimizer.step() ends a tprof step.

tprof-run puts this directory first on PYTHONPATH, so Python runs this file
at start-up as `sitecustomize`. It imports nothing heavy and never imports
torch: it installs an import finder that waits for torch itself to execute
torch.optim.optimizer, then registers a global optimizer step post-hook
that calls tprof.step(). The finder removes itself once it has fired.

Only one sitecustomize is imported by Python and this one shadows any
other, so the next sitecustomize on sys.path (the program's or the
system's own) is run afterwards, with its errors reported as site.py
reports them.
"""
import sys

_TARGET = "torch.optim.optimizer"
_WARN = ("tprof: warning: --torch-steps: this torch has no "
         "register_optimizer_step_post_hook (torch >= 2.0 needed); "
         "no steps are seen\n")
_handle = None


def _step_hook(optimizer, args, kwargs):
    try:
        _tprof.step()
    except Exception:
        pass


_tprof = None


def _import_tprof():
    """tprof.py: on PYTHONPATH (tprof-run puts it there), else next to
    this directory."""
    try:
        import tprof
        return tprof
    except ImportError:
        pass
    try:
        import os
        import importlib.util
        path = os.path.join(os.path.dirname(os.path.dirname(
            os.path.abspath(__file__))), "tprof.py")
        spec = importlib.util.spec_from_file_location("tprof", path)
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        sys.modules.setdefault("tprof", module)
        return sys.modules["tprof"]
    except Exception:
        return None


def _register(module):
    """Called once torch.optim.optimizer has executed."""
    global _handle, _tprof
    try:
        reg = getattr(module, "register_optimizer_step_post_hook", None)
        if reg is None:
            sys.stderr.write(_WARN)
            return
        tprof = _import_tprof()
        if tprof is None or not tprof.available():
            return
        _tprof = tprof
        _handle = reg(_step_hook)
    except Exception:
        pass


class _Loader(object):
    """Wraps the loader of torch.optim.optimizer: runs it, then registers
    the hook. Everything else goes to the original loader."""

    def __init__(self, loader, finder):
        self._tprof_loader = loader
        self._tprof_finder = finder

    def create_module(self, spec):
        create = getattr(self._tprof_loader, "create_module", None)
        return create(spec) if create is not None else None

    def exec_module(self, module):
        loader = self._tprof_loader
        # The module sees its real loader while it runs and afterwards.
        try:
            module.__loader__ = loader
            spec = getattr(module, "__spec__", None)
            if spec is not None and spec.loader is self:
                spec.loader = loader
        except Exception:
            pass
        loader.exec_module(module)
        self._tprof_finder._remove()
        _register(module)

    def __getattr__(self, name):
        if name.startswith("_tprof_"):
            raise AttributeError(name)
        return getattr(self._tprof_loader, name)


class _Finder(object):
    """On sys.meta_path until torch.optim.optimizer is imported."""
    _tprof_torch_steps = True

    def _remove(self):
        try:
            while self in sys.meta_path:
                sys.meta_path.remove(self)
        except Exception:
            pass

    def find_spec(self, fullname, path=None, target=None):
        if fullname != _TARGET:
            return None
        try:
            for finder in list(sys.meta_path):
                if finder is self or getattr(finder, "_tprof_torch_steps",
                                             False):
                    continue
                find = getattr(finder, "find_spec", None)
                if find is None:
                    continue
                spec = find(fullname, path, target)
                if spec is None:
                    continue
                loader = spec.loader
                if loader is None or not hasattr(loader, "exec_module"):
                    return None
                spec.loader = _Loader(loader, self)
                return spec
        except Exception:
            pass
        # Not found, or a finder failed: let the import system do it
        # (and report it) as usual.
        return None

    def invalidate_caches(self):
        pass


def _install():
    try:
        if _TARGET in sys.modules:
            # torch already imported (cannot happen at start-up, but a
            # re-executed shim must not miss it).
            _register(sys.modules[_TARGET])
            return
        for f in sys.meta_path:
            if getattr(f, "_tprof_torch_steps", False):
                return  # another copy of this shim is installed
        sys.meta_path.insert(0, _Finder())
    except Exception:
        pass


def _same_dir(entry, here):
    import os
    try:
        return os.path.realpath(entry or os.curdir) == here
    except Exception:
        return False


def _chain():
    """Runs the next sitecustomize on sys.path, as site.py would have."""
    try:
        import os
        import importlib.machinery
        here = os.path.realpath(os.path.dirname(os.path.abspath(__file__)))
        path = list(sys.path)
        first = None
        for i, entry in enumerate(path):
            if _same_dir(entry, here):
                first = i
                break
        after = path[first + 1:] if first is not None else path
        after = [e for e in after if isinstance(e, str) and
                 not _same_dir(e, here)]
        spec = importlib.machinery.PathFinder.find_spec("sitecustomize",
                                                        after)
        if spec is None or spec.loader is None:
            return
        origin = getattr(spec, "origin", None)
        if origin and os.path.realpath(origin) == \
                os.path.realpath(os.path.abspath(__file__)):
            return
        import importlib.util
        module = importlib.util.module_from_spec(spec)
    except Exception:
        return
    ours = sys.modules.get("sitecustomize")
    # The program's sitecustomize becomes sys.modules["sitecustomize"], as
    # it would be without tprof.
    sys.modules["sitecustomize"] = module
    try:
        try:
            spec.loader.exec_module(module)
        except ImportError as exc:
            if exc.name == "sitecustomize":
                pass
            else:
                raise
    except Exception as err:
        # As site.execsitecustomize reports it.
        if ours is not None:
            sys.modules["sitecustomize"] = ours
        else:
            sys.modules.pop("sitecustomize", None)
        try:
            if sys.flags.verbose:
                sys.excepthook(*sys.exc_info())
            else:
                sys.stderr.write(
                    "Error in sitecustomize; set PYTHONVERBOSE for traceback:\n"
                    "%s: %s\n" % (err.__class__.__name__, err))
        except Exception:
            pass


_install()
_chain()
