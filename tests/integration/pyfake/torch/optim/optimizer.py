"""Stand-in for torch.optim.optimizer: global step post-hooks, called as
fn(optimizer, args, kwargs) after each Optimizer.step(), as in torch 2.x.
PYFAKE_OLD_TORCH=1 leaves register_optimizer_step_post_hook out (torch 1.x)."""
import os

_global_optimizer_post_hooks = {}
_next_id = [0]


class _Handle(object):
    def __init__(self, hooks, key):
        self._hooks = hooks
        self._key = key

    def remove(self):
        self._hooks.pop(self._key, None)


def register_optimizer_step_post_hook(hook):
    _next_id[0] += 1
    _global_optimizer_post_hooks[_next_id[0]] = hook
    return _Handle(_global_optimizer_post_hooks, _next_id[0])


if os.environ.get("PYFAKE_OLD_TORCH"):
    del register_optimizer_step_post_hook


class Optimizer(object):
    def __init__(self, params=(), defaults=None):
        self.steps = 0

    def step(self, *args, **kwargs):
        self.steps += 1
        for hook in list(_global_optimizer_post_hooks.values()):
            hook(self, args, kwargs)
