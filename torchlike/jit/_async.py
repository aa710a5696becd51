"""torch.jit.fork / wait: TorchScript's asynchronous tasks, run at once here (fork's tasks may run
in any order, so running each when forked is one of torch's allowed schedules)."""

from __future__ import annotations

import warnings
from typing import Any, Callable


class Future:
    """The result of ``fork``: ``wait()``/``value()`` return it, ``done()`` is True."""

    def __init__(self, value: Any) -> None:
        self._value = value

    def wait(self) -> Any:
        return self._value

    def value(self) -> Any:
        return self._value

    def done(self) -> bool:
        return True


def fork(func: Callable, *args: Any, **kwargs: Any) -> Future:
    """torch.jit.fork: runs ``func(*args, **kwargs)`` and returns its Future."""
    warnings.warn("`torch.jit.fork` is deprecated. Please use `torch.compile` instead.", DeprecationWarning)
    return Future(func(*args, **kwargs))


def wait(future: Future) -> Any:
    """torch.jit.wait: the forked task's result."""
    warnings.warn("`torch.jit.wait` is deprecated. Please use `torch.compile` instead.", DeprecationWarning)
    return future.wait()
