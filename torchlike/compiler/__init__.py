"""torch.compiler: the public helpers around torchlike.compile."""

from __future__ import annotations

import functools
from typing import Any, Callable

from .._compile import reset  # noqa: F401
from .._core import tensor as _T

__all__ = ["compile", "reset", "disable", "is_compiling", "is_dynamo_compiling", "assume_constant_result",
           "allow_in_graph"]  # fmt: skip


def compile(*args: Any, **kwargs: Any) -> Any:
    from .. import _compile

    return _compile.compile(*args, **kwargs)


def is_compiling() -> bool:
    """True while torchlike.compile traces a function."""
    from .._compile._runtime import _TraceHook

    return isinstance(_T.hook, _TraceHook)


is_dynamo_compiling = is_compiling


def disable(fn: Callable | None = None, recursive: bool = True) -> Any:
    """Accepted: torchlike traces whole functions; a disabled function simply runs inside the trace."""
    if fn is None:
        return lambda f: disable(f, recursive)
    return functools.wraps(fn)(lambda *a, **k: fn(*a, **k))


def assume_constant_result(fn: Callable) -> Callable:
    return fn


def allow_in_graph(fn: Callable) -> Callable:
    return fn
